package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentui/agentui/bench/loadgen"
)

// protocol is the wire protocol a contender speaks.
type protocol int

const (
	vercel   protocol = iota // Vercel AI SDK UI message stream
	agui                     // AG-UI over SSE
	vercelWS                 // the UI message stream over the AI SDK 7's WebSocket transport
)

// contender is one server under test.
type contender struct {
	key   string // stable identifier, used in flags and logs
	label string // name in the report
	proto protocol
	path  string // the chat endpoint
	// idle says S3 holds idle streams ("wait N ms") on the contender;
	// idleNote, when it is not measured there, says why.
	idle     bool
	idleNote string
	// idleLaunch, when set, starts the contender for S3 with the given
	// -history (settings.s3History) instead of launch.
	idleLaunch func(ctx context.Context, e *env, history string) (*server, error)
	// s1Only, when set, says why the contender runs in S1 alone.
	s1Only string
	// launch starts the contender's server.
	launch func(ctx context.Context, e *env) (*server, error)

	srv  *server
	skip string // why the contender is not measured ("" when it is)
	fail bool   // skip is a failure (the harness or the contender is broken), not an expected gap
	// restarts counts servers that exited during a round and were
	// replaced; restartWhy is how the last one ended.
	restarts   int
	restartWhy string
}

// env is what starting contenders needs: the built binaries and the tools.
type env struct {
	repo    string // repository root
	agentui string // path of the agentui binary built for this run
	barego  string // path of the bare Go contender built for this run
	peers   string // path of the Go peer (bench/peers) built for this run
	base    string // path of agentui built from baseRev (-base), or ""
	baseRev string
	node    string // node binary
	fileLim uint64 // RLIMIT_NOFILE the servers get
	// s4History is the -history value S4 compares with none: a redis://
	// URL normally, or another store (memory) when checking the harness.
	s4History string
}

// agentuiArgs are the flags every agentui process gets (the brief's
// contract): the demo model with no delay between words, warnings only.
func agentuiArgs(addr, debugAddr, history string) []string {
	return []string{"-addr", addr, "-model", "demo", "-history", history, "-demo-delay", "0",
		"-log-level", "warn", "-debug-addr", debugAddr}
}

// agentuiEnv lifts the bounds per client address: on anonymous scopes
// issued (-scope-limit, 60 an hour by default, counted in Redis for an
// hour: every S4 conversation is a new visitor from 127.0.0.1, and past
// the bound its page load gets 429, no cookie, and its turns are served
// without history), and on replies at once (-runs-per-address: every
// client of the harness is 127.0.0.1). The environment twins, not the
// flags: binaries from before the bounds (the -base and side-by-side
// builds) ignore them.
var agentuiEnv = []string{"AGENTUI_SCOPE_LIMIT=off", "AGENTUI_RUNS_PER_ADDRESS=0"}

// startAgentui starts an agentui process with its own debug listener.
func startAgentui(ctx context.Context, e *env, name, history string) (*server, error) {
	return startAgentuiBin(ctx, e, name, e.agentui, history)
}

// startAgentuiBin is startAgentui for the agentui binary at bin.
func startAgentuiBin(ctx context.Context, e *env, name, bin, history string) (*server, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	dbg, err := freeAddr()
	if err != nil {
		return nil, err
	}
	s, err := startServer(ctx, name, e.repo, append([]string{bin}, agentuiArgs(addr, dbg, history)...), agentuiEnv, addr)
	if err != nil {
		return nil, err
	}
	s.debugAddr = dbg
	return s, nil
}

// startNode starts a Node contender in dir with a raised descriptor limit.
// Node does not raise its own soft RLIMIT_NOFILE, so without `ulimit -n` a
// machine with a 1024 soft limit would cap it at about a thousand streams.
func startNode(ctx context.Context, e *env, name, dir string) (*server, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := strings.Cut(addr, ":")
	script := fmt.Sprintf(`ulimit -n %d && exec "$0" server.mjs`, e.fileLim)
	return startServer(ctx, name, filepath.Join(e.repo, dir), []string{"sh", "-c", script, e.node},
		[]string{"HOST=127.0.0.1", "PORT=" + port}, addr)
}

// batchBytes is the batching bare writer's batch: the most a writer can
// gain from fewer writes and flushes (the limit S1 measures against).
const batchBytes = 32 << 10

// startGo starts a Go contender's binary on a free address, with args
// after its -addr.
func startGo(ctx context.Context, e *env, name, bin string, args ...string) (*server, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	return startServer(ctx, name, e.repo, append([]string{bin, "-addr", addr}, args...), nil, addr)
}

// startBatching starts the bare Go contender writing 32 KiB batches.
func startBatching(ctx context.Context, e *env, name string) (*server, error) {
	return startGo(ctx, e, name, e.barego, "-batch", strconv.Itoa(batchBytes))
}

// allContenders lists the contenders in the order they are run and
// reported.
func allContenders() []*contender {
	return []*contender{
		{key: "agentui-vercel", label: "agentui/Vercel", proto: vercel, path: "/api/chat", idle: true,
			launch: func(ctx context.Context, e *env) (*server, error) {
				return startAgentui(ctx, e, "agentui (Vercel)", "none")
			},
			idleLaunch: func(ctx context.Context, e *env, history string) (*server, error) {
				return startAgentui(ctx, e, "agentui (Vercel)", history)
			}},
		{key: "agentui-vercel-ws", label: "agentui/Vercel over a WebSocket", proto: vercelWS, path: "/api/chat",
			idleNote: "n/a: S3 holds idle HTTP streams",
			s1Only:   "S1 only: a scope (here, the client address) holds 16 sockets at most (uiadapter.DefaultMaxSockets)",
			launch: func(ctx context.Context, e *env) (*server, error) {
				return startAgentui(ctx, e, "agentui (Vercel, WebSocket)", "none")
			}},
		{key: "agentui-agui", label: "agentui/AG-UI", proto: agui, path: "/api/agui",
			idleNote: "n/a: S3 measures one agentui endpoint (Vercel); the AG-UI one shares its stream machinery",
			launch: func(ctx context.Context, e *env) (*server, error) {
				return startAgentui(ctx, e, "agentui (AG-UI)", "none")
			}},
		{key: "barego", label: "bare Go", proto: vercel, path: "/api/chat", idle: true,
			launch: func(ctx context.Context, e *env) (*server, error) {
				dbg, err := freeAddr()
				if err != nil {
					return nil, err
				}
				s, err := startGo(ctx, e, "bare Go", e.barego, "-debug-addr", dbg)
				if s != nil {
					s.debugAddr = dbg
				}
				return s, err
			}},
		{key: "barego-batch", label: "bare Go, 32 KiB batches", proto: vercel, path: "/api/chat",
			idleNote: "n/a: while idle it is bare Go (measured above) holding an unused 32 KiB batch buffer",
			launch: func(ctx context.Context, e *env) (*server, error) {
				return startBatching(ctx, e, "bare Go, 32 KiB batches")
			}},
		{key: "barego-batch-agui", label: "bare Go AG-UI, 32 KiB batches", proto: agui, path: "/api/agui",
			launch: func(ctx context.Context, e *env) (*server, error) {
				return startBatching(ctx, e, "bare Go AG-UI, 32 KiB batches")
			}},
		{key: "peer-agui-go", label: "AG-UI Go SDK (community)", proto: agui, path: "/api/agui",
			launch: func(ctx context.Context, e *env) (*server, error) { return startGo(ctx, e, "AG-UI Go SDK", e.peers) }},
		{key: "node-ai", label: "ai (Node)", proto: vercel, path: "/api/chat",
			launch: func(ctx context.Context, e *env) (*server, error) {
				return startNode(ctx, e, "ai (Node)", "bench/node-ai")
			}},
		{key: "node-agui", label: "@ag-ui/encoder (Node)", proto: agui, path: "/api/agui",
			launch: func(ctx context.Context, e *env) (*server, error) {
				return startNode(ctx, e, "@ag-ui/encoder (Node)", "bench/node-agui")
			}},
	}
}

// bodyFor returns the request body of a one-message chat saying text, with
// id making the conversation (and, for AG-UI, the run) unique.
func bodyFor(p protocol, id, text string) []byte {
	t, _ := json.Marshal(text)
	switch p {
	case agui:
		return []byte(`{"threadId":"t-` + id + `","runId":"r-` + id + `","messages":[{"id":"u1","role":"user","content":` +
			string(t) + `}],"tools":[],"context":[],"state":{},"forwardedProps":{}}`)
	default:
		return []byte(`{"id":"c-` + id + `","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":` +
			string(t) + `}]}],"trigger":"submit-message"}`)
	}
}

// newRequest builds a POST of body to the contender's endpoint with the
// headers its protocol's client sends.
func (c *contender) newRequest(body []byte) (*http.Request, error) {
	req, err := http.NewRequest(http.MethodPost, "http://"+c.srv.addr+c.path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.proto == agui {
		req.Header.Set("Accept", "text/event-stream")
	}
	return req, nil
}

// minFrames is the fewest SSE frames a complete reply to "count to n" has:
// Vercel start, start-step, text-start, n deltas, text-end, finish-step,
// finish and [DONE]; AG-UI RUN_STARTED, TEXT_MESSAGE_START, n contents,
// TEXT_MESSAGE_END and RUN_FINISHED.
func minFrames(p protocol, n int) int { // over a WebSocket: n+6 chunks and end
	if p == agui {
		return n + 4
	}
	return n + 7
}

// verify sends "count to 3" and checks the reply frame by frame, so every
// contender is known to do the same work before it is timed. A 404 means
// the endpoint does not exist in this build: the contender is skipped, not
// failed.
func (c *contender) verify(client *http.Client) (skip string, err error) {
	if c.proto == vercelWS {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return "", newWSChats(c.srv.addr, c.path).verify(ctx)
	}
	req, err := c.newRequest(bodyFor(c.proto, "verify", "count to 3"))
	if err != nil {
		return "", err
	}
	var body bytes.Buffer
	s, err := loadgen.Stream(client, req, &body, nil)
	if s.Status == http.StatusNotFound {
		return fmt.Sprintf("POST %s answered 404 (the endpoint is not in this build yet)", c.path), nil
	}
	if err != nil {
		return "", fmt.Errorf("count to 3: %w: %.200s", err, body.String())
	}
	if ct := s.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return "", fmt.Errorf("Content-Type %q, want text/event-stream", ct)
	}
	frames, err := parseFrames(body.Bytes())
	if err != nil {
		return "", err
	}
	if c.proto == vercel {
		return "", verifyVercel(frames)
	}
	return "", verifyAGUI(frames)
}

// frame is one decoded SSE data frame ("[DONE]" has only Raw).
type frame struct {
	Raw          string
	Type         string `json:"type"`
	Delta        string `json:"delta"`
	ID           string `json:"id"`
	MessageID    string `json:"messageId"`
	FinishReason string `json:"finishReason"`
}

// parseFrames splits an SSE body into its data frames.
func parseFrames(b []byte) ([]frame, error) {
	var out []frame
	for _, block := range strings.Split(strings.TrimRight(string(b), "\n"), "\n\n") {
		var data []string
		for _, line := range strings.Split(block, "\n") {
			if v, ok := strings.CutPrefix(line, "data:"); ok {
				data = append(data, strings.TrimPrefix(v, " "))
			}
		}
		if len(data) == 0 {
			continue // a comment or an event without data
		}
		f := frame{Raw: strings.Join(data, "\n")}
		if f.Raw != "[DONE]" {
			if err := json.Unmarshal([]byte(f.Raw), &f); err != nil {
				return nil, fmt.Errorf("frame %q: %w", f.Raw, err)
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// verifyVercel checks the exact frame sequence agentui sends for
// "count to 3".
func verifyVercel(frames []frame) error {
	var types []string
	var text strings.Builder
	for _, f := range frames {
		if f.Raw == "[DONE]" {
			types = append(types, "[DONE]")
			continue
		}
		types = append(types, f.Type)
		if f.Type == "text-delta" {
			text.WriteString(f.Delta)
		}
	}
	want := []string{"start", "start-step", "text-start", "text-delta", "text-delta", "text-delta",
		"text-end", "finish-step", "finish", "[DONE]"}
	if !slices.Equal(types, want) {
		return fmt.Errorf("frames %v, want %v", types, want)
	}
	if text.String() != "1 2 3 " {
		return fmt.Errorf("text %q, want %q", text.String(), "1 2 3 ")
	}
	return nil
}

// verifyAGUI checks the AG-UI reply: a run around one text message whose
// deltas are "1 ", "2 ", "3 ". Other events (steps, for instance) are
// allowed between them; their frames count as events like any other.
func verifyAGUI(frames []frame) error {
	if len(frames) == 0 {
		return fmt.Errorf("no frames")
	}
	if first, last := frames[0].Type, frames[len(frames)-1].Type; first != "RUN_STARTED" || last != "RUN_FINISHED" {
		return fmt.Errorf("run starts with %s and ends with %s, want RUN_STARTED … RUN_FINISHED", first, last)
	}
	var seen []string
	var text strings.Builder
	for _, f := range frames {
		switch f.Type {
		case "TEXT_MESSAGE_START", "TEXT_MESSAGE_END":
			seen = append(seen, f.Type)
		case "TEXT_MESSAGE_CONTENT":
			text.WriteString(f.Delta)
		}
	}
	if !slices.Equal(seen, []string{"TEXT_MESSAGE_START", "TEXT_MESSAGE_END"}) {
		return fmt.Errorf("text message events %v, want one start and one end", seen)
	}
	if text.String() != "1 2 3 " {
		return fmt.Errorf("text %q, want %q", text.String(), "1 2 3 ")
	}
	return nil
}

// countRequests returns a loadgen NewRequest function for "count to n" chats, each with
// a fresh conversation id.
func (c *contender) countRequests(prefix, text string) func(worker, seq int) (*http.Request, error) {
	return func(_, seq int) (*http.Request, error) {
		return c.newRequest(bodyFor(c.proto, prefix+"-"+strconv.Itoa(seq), text))
	}
}
