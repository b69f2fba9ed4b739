// Command peers is the benchmark's Go peer: the AG-UI community Go SDK
// (github.com/ag-ui-protocol/ag-ui/sdks/community/go) answering "count to
// N" on POST /api/agui the way its packages are meant to be used: its event
// constructors, and its SSE writer's WriteEvent per event (which marshals,
// frames and flushes each one). It is a module of its own so the SDK's
// dependencies stay out of agentui's.
//
// trpc-agent-go's server/agui, the other Go peer of this field, is not
// here: its module (trpc.group/trpc-go/trpc-agent-go) is not served by the
// Go module proxy this machine reaches (403).
//
// Usage:
//
//	peers -addr 127.0.0.1:8084
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/encoding/sse"
	"github.com/google/uuid"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8084", "address to listen on")
	flag.Parse()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/agui", agui)
	fmt.Printf("peers listening on http://%s\n", *addr)
	log.Fatal((&http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}).ListenAndServe())
}

// input is the part of RunAgentInput this server reads.
type input struct {
	ThreadID string `json:"threadId"`
	RunID    string `json:"runId"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
}

var countRE = regexp.MustCompile(`(?i)count to (\d+)`)

// agui answers "count to N" with a run, a step and one text message of N
// contents: the events agentui/AG-UI sends.
func agui(w http.ResponseWriter, r *http.Request) {
	var in input
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 8<<20)).Decode(&in); err != nil {
		http.Error(w, "bad request body", http.StatusBadRequest)
		return
	}
	n := 0
	for i := len(in.Messages) - 1; i >= 0; i-- {
		if in.Messages[i].Role == "user" {
			if m := countRE.FindStringSubmatch(in.Messages[i].Content); m != nil {
				n, _ = strconv.Atoi(m[1])
			}
			break
		}
	}
	if n < 1 || n > 100000 {
		http.Error(w, `this server only answers "count to N"`, http.StatusBadRequest)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	ctx := r.Context()
	out := sse.NewSSEWriter()
	msg := uuid.NewString()
	send := func(ev events.Event) bool { return out.WriteEvent(ctx, w, ev) == nil }
	if !send(events.NewRunStartedEvent(in.ThreadID, in.RunID)) || !send(events.NewStepStartedEvent("step-1")) ||
		!send(events.NewTextMessageStartEvent(msg, events.WithRole("assistant"))) {
		return
	}
	for i := 1; i <= n; i++ {
		if !send(events.NewTextMessageContentEvent(msg, strconv.Itoa(i)+" ")) {
			return
		}
	}
	_ = send(events.NewTextMessageEndEvent(msg)) && send(events.NewStepFinishedEvent("step-1")) &&
		send(events.NewRunFinishedEvent(in.ThreadID, in.RunID))
}
