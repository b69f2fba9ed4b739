// Command barego is a benchmark contender: the smallest Go server that
// speaks the same Vercel AI SDK UI message stream as agentui's
// POST /api/chat for a "count to N" request. It uses net/http alone,
// encodes each frame with encoding/json and calls Flush after every frame —
// the obvious hand-written SSE handler. agentui should be at least as fast
// as this, or its framework layers (decoding, sanitising, the agent loop,
// the encoder) cost more than they are worth.
//
// Usage:
//
//	barego -addr 127.0.0.1:8081
package main

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "address to listen on")
	flag.Parse()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/chat", chat)
	fmt.Printf("barego listening on http://%s\n", *addr)
	log.Fatal((&http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}).ListenAndServe())
}

// request is the part of the UI message stream request body this server
// reads.
type request struct {
	Messages []struct {
		Role  string `json:"role"`
		Parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"messages"`
}

// chunk is one UI message stream chunk. The field order and omitempty tags
// make every chunk marshal to the same bytes agentui sends, e.g.
// {"type":"text-delta","id":"…","delta":"1 "}.
type chunk struct {
	Type         string `json:"type"`
	MessageID    string `json:"messageId,omitempty"`
	ID           string `json:"id,omitempty"`
	Delta        string `json:"delta,omitempty"`
	FinishReason string `json:"finishReason,omitempty"`
}

var countRE = regexp.MustCompile(`(?i)count to (\d+)`)

// maxCount matches the demo model's limit.
const maxCount = 100000

// chat answers "count to N" in the last user message with N text deltas
// "1 ", "2 ", … framed exactly as agentui frames them.
func chat(w http.ResponseWriter, r *http.Request) {
	var req request
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 8<<20)).Decode(&req); err != nil {
		http.Error(w, "bad request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	n, ok := countFrom(req)
	if !ok {
		http.Error(w, `this server only answers "count to N" (1 ≤ N ≤ 100000)`, http.StatusBadRequest)
		return
	}
	f, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("X-Vercel-Ai-Ui-Message-Stream", "v1")
	w.WriteHeader(http.StatusOK)

	send := func(c chunk) error {
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return err
		}
		f.Flush()
		return nil
	}
	textID := newID()
	frames := []chunk{{Type: "start", MessageID: newID()}, {Type: "start-step"}, {Type: "text-start", ID: textID}}
	for _, c := range frames {
		if send(c) != nil {
			return
		}
	}
	for i := 1; i <= n; i++ {
		if send(chunk{Type: "text-delta", ID: textID, Delta: strconv.Itoa(i) + " "}) != nil {
			return // the client went away
		}
	}
	for _, c := range []chunk{{Type: "text-end", ID: textID}, {Type: "finish-step"}, {Type: "finish", FinishReason: "stop"}} {
		if send(c) != nil {
			return
		}
	}
	if _, err := fmt.Fprint(w, "data: [DONE]\n\n"); err == nil {
		f.Flush()
	}
}

// countFrom finds N in "count to N" in the text of the last user message.
func countFrom(req request) (int, bool) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != "user" {
			continue
		}
		var text strings.Builder
		for _, p := range m.Parts {
			if p.Type == "text" {
				text.WriteString(p.Text)
			}
		}
		sub := countRE.FindStringSubmatch(text.String())
		if sub == nil {
			return 0, false
		}
		n, err := strconv.Atoi(sub[1])
		return n, err == nil && n >= 1 && n <= maxCount
	}
	return 0, false
}

// newID returns a UUIDv7 string, the id format (and so the frame size)
// agentui uses.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(time.Now().UnixMilli()))
	copy(b[:6], ms[2:])
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], b[10:16])
	return string(s[:])
}
