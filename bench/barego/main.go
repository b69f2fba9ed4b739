// Command barego is a benchmark contender: the smallest Go server that
// speaks the same Vercel AI SDK UI message stream as agentui's
// POST /api/chat for a "count to N" request. It uses net/http alone,
// encodes each frame with encoding/json and calls Flush after every frame —
// the obvious hand-written SSE handler. agentui should be at least as fast
// as this, or its framework layers (decoding, sanitising, the agent loop,
// the encoder) cost more than they are worth.
//
// "wait N ms" holds the stream open for N ms after its first frames, as
// agentui's demo model does: the idle stream S3 measures, what a stream
// costs the plain net/http server while nothing happens.
//
// With -batch B it is the other bound, the limit: the text deltas' frames
// appended by hand (no reflection), everything written in batches of B
// bytes (flushed when a batch is full and at the end): the least work
// any writer of this stream can do. It then also answers AG-UI on
// POST /api/agui, framed as agentui frames it.
//
// Usage:
//
//	barego -addr 127.0.0.1:8081 [-batch 32768] [-debug-addr 127.0.0.1:6061]
package main

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	_ "expvar" // /debug/vars on -debug-addr, as agentui serves it
	"flag"
	"fmt"
	"log"
	"net/http"
	_ "net/http/pprof" // /debug/pprof on -debug-addr
	"regexp"
	"strconv"
	"strings"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "address to listen on")
	batch := flag.Int("batch", 0, "write frames in batches of this many bytes (0: flush every frame)")
	debugAddr := flag.String("debug-addr", "", "serve /debug/pprof and /debug/vars on this address; off when empty")
	flag.Parse()
	if *debugAddr != "" {
		go func() { log.Fatal(http.ListenAndServe(*debugAddr, nil)) }()
	}
	srv := &server{batch: *batch}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/chat", srv.chat)
	if *batch > 0 {
		mux.HandleFunc("POST /api/agui", srv.agui)
	}
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

// server answers chats, flushing every frame or (batch > 0) batches.
type server struct{ batch int }

// frames writes SSE data frames: with batch 0 each is written and
// flushed; else they gather in buf, which is written and flushed when it
// holds batch bytes and at the end.
type frames struct {
	w     http.ResponseWriter
	f     http.Flusher
	batch int
	buf   []byte
}

func (fw *frames) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	fw.buf = append(append(append(fw.buf, "data: "...), b...), "\n\n"...)
	if len(fw.buf) >= fw.batch {
		return fw.flush()
	}
	return nil
}

// raw adds a frame written by hand.
func (fw *frames) raw(frame []byte) error {
	fw.buf = frame
	if len(fw.buf) >= fw.batch {
		return fw.flush()
	}
	return nil
}

func (fw *frames) flush() error {
	if len(fw.buf) == 0 {
		return nil
	}
	_, err := fw.w.Write(fw.buf)
	fw.buf = fw.buf[:0]
	fw.f.Flush()
	return err
}

// stream starts an SSE response and returns its frame writer; false when
// w cannot stream (answered 500).
func (s *server) stream(w http.ResponseWriter) (*frames, bool) {
	f, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return nil, false
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return &frames{w: w, f: f, batch: s.batch, buf: make([]byte, 0, s.batch+256)}, true
}

// chat answers "count to N" in the last user message with N text deltas
// "1 ", "2 ", … framed exactly as agentui frames them.
func (s *server) chat(w http.ResponseWriter, r *http.Request) {
	var req request
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 8<<20)).Decode(&req); err != nil {
		http.Error(w, "bad request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	n, wait, ok := parse(req)
	if !ok {
		http.Error(w, `this server only answers "count to N" (1 ≤ N ≤ 100000) and "wait N ms"`, http.StatusBadRequest)
		return
	}
	w.Header().Set("X-Vercel-Ai-Ui-Message-Stream", "v1")
	fw, ok := s.stream(w)
	if !ok {
		return
	}
	for _, c := range []chunk{{Type: "start", MessageID: newID()}, {Type: "start-step"}} {
		if fw.send(c) != nil {
			return
		}
	}
	textID := newID()
	if wait > 0 {
		if fw.flush() != nil {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
		for _, c := range []chunk{{Type: "text-start", ID: textID}, {Type: "text-delta", ID: textID, Delta: "done"}} {
			if fw.send(c) != nil {
				return
			}
		}
	} else if fw.send(chunk{Type: "text-start", ID: textID}) != nil {
		return
	}
	for i := 1; i <= n; i++ {
		var err error
		if s.batch > 0 { // the limit: {"type":"text-delta","id":"…","delta":"i "}
			b := append(fw.buf, `data: {"type":"text-delta","id":"`...)
			b = append(strconv.AppendInt(append(append(b, textID...), `","delta":"`...), int64(i), 10), " \"}\n\n"...)
			err = fw.raw(b)
		} else {
			err = fw.send(chunk{Type: "text-delta", ID: textID, Delta: strconv.Itoa(i) + " "})
		}
		if err != nil {
			return // the client went away
		}
	}
	for _, c := range []chunk{{Type: "text-end", ID: textID}, {Type: "finish-step"}, {Type: "finish", FinishReason: "stop"}} {
		if fw.send(c) != nil {
			return
		}
	}
	fw.buf = append(fw.buf, "data: [DONE]\n\n"...)
	_ = fw.flush()
}

// aguiRequest is the part of RunAgentInput this server reads.
type aguiRequest struct {
	ThreadID string `json:"threadId"`
	RunID    string `json:"runId"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
}

// aguiEvent is one AG-UI event, its fields in agentui's order.
type aguiEvent struct {
	Type      string `json:"type"`
	Timestamp int64  `json:"timestamp"`
	ThreadID  string `json:"threadId,omitempty"`
	RunID     string `json:"runId,omitempty"`
	Protocol  string `json:"protocolVersion,omitempty"`
	StepName  string `json:"stepName,omitempty"`
	MessageID string `json:"messageId,omitempty"`
	Role      string `json:"role,omitempty"`
	Delta     string `json:"delta,omitempty"`
}

// agui answers "count to N" over AG-UI, with the events agentui sends:
// a run, a step, a text message of N contents.
func (s *server) agui(w http.ResponseWriter, r *http.Request) {
	var req aguiRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 8<<20)).Decode(&req); err != nil {
		http.Error(w, "bad request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	n := 0
	for i := len(req.Messages) - 1; i >= 0 && n == 0; i-- {
		if req.Messages[i].Role == "user" {
			if sub := countRE.FindStringSubmatch(req.Messages[i].Content); sub != nil {
				n, _ = strconv.Atoi(sub[1])
			}
			break
		}
	}
	if n < 1 || n > maxCount {
		http.Error(w, `this server only answers "count to N" (1 ≤ N ≤ 100000)`, http.StatusBadRequest)
		return
	}
	fw, ok := s.stream(w)
	if !ok {
		return
	}
	now := func() int64 { return time.Now().UnixMilli() }
	msg := newID()
	for _, e := range []aguiEvent{
		{Type: "RUN_STARTED", ThreadID: req.ThreadID, RunID: req.RunID, Protocol: "1.0"},
		{Type: "STEP_STARTED", StepName: "step-1"},
		{Type: "TEXT_MESSAGE_START", MessageID: msg, Role: "assistant"},
	} {
		e.Timestamp = now()
		if fw.send(e) != nil {
			return
		}
	}
	for i := 1; i <= n; i++ {
		b := strconv.AppendInt(append(fw.buf, `data: {"type":"TEXT_MESSAGE_CONTENT","timestamp":`...), now(), 10)
		b = append(append(append(b, `,"messageId":"`...), msg...), `","delta":"`...)
		if fw.raw(append(strconv.AppendInt(b, int64(i), 10), " \"}\n\n"...)) != nil {
			return
		}
	}
	for _, e := range []aguiEvent{
		{Type: "TEXT_MESSAGE_END", MessageID: msg},
		{Type: "STEP_FINISHED", StepName: "step-1"},
		{Type: "RUN_FINISHED", ThreadID: req.ThreadID, RunID: req.RunID},
	} {
		e.Timestamp = now()
		if fw.send(e) != nil {
			return
		}
	}
	_ = fw.flush()
}

var waitRE = regexp.MustCompile(`(?i)\bwait (\d+) ?ms\b`)

// parse reads the last user message: "count to N" (n deltas) or
// "wait N ms" (one delta after wait).
func parse(req request) (n int, wait time.Duration, ok bool) {
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
		if sub := waitRE.FindStringSubmatch(text.String()); sub != nil {
			ms, err := strconv.Atoi(sub[1])
			return 0, time.Duration(ms) * time.Millisecond, err == nil && ms > 0
		}
		sub := countRE.FindStringSubmatch(text.String())
		if sub == nil {
			return 0, 0, false
		}
		n, err := strconv.Atoi(sub[1])
		return n, 0, err == nil && n >= 1 && n <= maxCount
	}
	return 0, 0, false
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
