package uiadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/agentui/agentui/edge"
	"github.com/agentui/agentui/history"
)

// serveSend serves a send frame as POST {api}/chat: the body is the
// frame's body with the transport's fields, as DefaultChatTransport
// sends them.
func (s *wsSocket) serveSend(ctx context.Context, f *wsFrame) {
	body := map[string]json.RawMessage{}
	if len(f.Body) > 0 {
		if err := json.Unmarshal(f.Body, &body); err != nil {
			s.fail(f.RequestID, `"body" must be an object`)
			return
		}
	}
	id, _ := json.Marshal(*f.ID)
	trigger, _ := json.Marshal(f.Trigger)
	body["id"], body["messages"], body["trigger"] = id, f.Messages, trigger
	if f.MessageID != nil {
		mid, _ := json.Marshal(*f.MessageID)
		body["messageId"] = mid
	}
	b, _ := json.Marshal(body)
	r := s.request(ctx, http.MethodPost, "/chat", b, f.Headers)
	w := s.response(f.RequestID, false)
	s.h.ServeHTTP(w, r)
	w.finish()
}

// response is the writer of request id's response, kept with the
// request for abort.
func (s *wsSocket) response(id string, resume bool) *wsResponse {
	w := &wsResponse{s: s, requestID: id, header: http.Header{}, seq: -1, skip: -1, resume: resume, decided: make(chan struct{})}
	s.mu.Lock()
	if req := s.reqs[id]; req != nil {
		req.resp = w
	}
	s.mu.Unlock()
	return w
}

// serveResume serves a resume frame as GET {api}/chat/{id}/stream: a
// chat with no reply going is no-active; one with a reply is start, then
// the reply from its first chunk (after lastSequence, when the frame
// says), live.
func (s *wsSocket) serveResume(ctx context.Context, f *wsFrame) {
	r := s.request(withDeltas(ctx), http.MethodGet, "/chat/"+url.PathEscape(*f.ID)+"/stream", nil, f.Headers)
	r.SetPathValue("id", *f.ID)
	w := s.response(f.RequestID, true)
	if f.LastSequence != nil {
		// The client has part of the turn: it gets the rest, even when the
		// turn has ended since (within the run log's retention).
		w.skip, _ = strconv.ParseInt(f.LastSequence.String(), 10, 64)
		r = r.WithContext(context.WithValue(r.Context(), replayEndedKey{}, true))
	}
	s.h.ResumeHandler(nil).ServeHTTP(w, r)
	w.finish()
}

// abort is the transport's stop(): the reply the request asked for is
// stopped, on whichever replica runs it (over a WebSocket, unlike SSE, a
// stop is a signal of its own), and the request ends. A queued message
// whose turn has not begun leaves the queue instead; the reply it waits
// for goes on. An abort for a request that is not in flight does nothing.
func (s *wsSocket) abort(requestID string) {
	s.mu.Lock()
	req := s.reqs[requestID]
	var resp *wsResponse
	if req != nil {
		resp = req.resp
	}
	s.mu.Unlock()
	if req == nil {
		return
	}
	defer req.cancel()
	h, log := s.h, s.log.With("chat", req.chat)
	// Whose chat: the scope the frame's own request would have.
	scope, err := h.scopeOf(s.request(s.ctx, http.MethodPost, "/chat", nil, nil))
	if err != nil {
		return
	}
	key := history.Key{Scope: scope, Chat: req.chat}
	ctx, cancel := context.WithTimeout(s.ctx, h.cfg.storeTimeout)
	defer cancel()
	if resp == nil {
		return
	}
	// What the request asked for is known once its status is set: the
	// run it started, or the message it queued.
	select {
	case <-resp.decided:
	case <-ctx.Done():
	}
	run, queued := resp.ownRun()
	if queued != "" && h.cfg.queue != nil {
		if _, err := h.cfg.queue.Dequeue(ctx, key, queued); err != nil {
			log.Warn("an aborted queued message could not leave the queue", "error", err)
		}
	}
	if run != "" { // its turn may have begun meanwhile
		if err := h.runs.StopRun(ctx, key, run); err != nil {
			log.Warn("an aborted request's reply could not be stopped", "error", err)
		}
	}
}

// request is the HTTP request a frame stands for: the handshake's
// (cookies, address, origin, TLS), with the frame's headers, except
// those only the connection may say.
func (s *wsSocket) request(ctx context.Context, method, path string, body []byte, headers map[string]string) *http.Request {
	r := s.base.Clone(ctx)
	r.Method, r.RequestURI = method, ""
	r.URL = &url.URL{Path: path, RawQuery: s.base.URL.RawQuery} // a credential in the handshake's query holds for every frame
	for k := range r.Header {
		if k == "Connection" || k == "Upgrade" || strings.HasPrefix(k, "Sec-Websocket") {
			r.Header.Del(k)
		}
	}
	for k, v := range headers {
		switch http.CanonicalHeaderKey(k) {
		case "Cookie", "Host", "Origin", "Content-Length", "Content-Type", "Transfer-Encoding", "Connection", "Upgrade", "Referer",
			"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Real-Ip":
			continue // the connection's (its address is the handshake's), not the frame's to say
		}
		if !strings.HasPrefix(strings.ToLower(k), "sec-") {
			r.Header.Set(k, v)
		}
	}
	r.Body, r.ContentLength = http.NoBody, 0
	if body != nil {
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		r.Header.Set("Content-Type", "application/json")
	}
	return r
}

// wsResponse is the http.ResponseWriter a frame's handler writes to: a
// 200's server-sent events become chunk frames numbered from 0 (SSE ids,
// comments and the [DONE] marker are the HTTP stream's, not the
// transport's), and any other status an error frame with the refusal's
// body.
type wsResponse struct {
	s         *wsSocket
	requestID string
	header    http.Header
	status    int
	resume    bool // a resume: 200 is start, 204 no-active
	quiet     bool // nothing goes to the socket
	mu        sync.Mutex
	run       string        // the run the response shows (its run header when its status was set)
	queued    string        // the message a queued send's outcome named, until its turn starts
	decided   chan struct{} // closed once the handler has set the status, or the request ended
	decide    sync.Once
	seq       int64 // the last chunk's sequence
	skip      int64 // chunks up to this sequence are not sent (a resume's lastSequence)
	pending   []byte
	frame     []byte       // the chunk frame being written (the library copies it out)
	quoted    []byte       // requestID as JSON
	refusal   bytes.Buffer // a non-200's body
	err       error
}

func (w *wsResponse) Header() http.Header { return w.header }

func (w *wsResponse) WriteHeader(status int) {
	if w.status != 0 {
		return
	}
	w.status = status
	w.mu.Lock()
	w.run = w.header.Get(edge.RunHeader)
	w.mu.Unlock()
	w.decide.Do(func() { close(w.decided) })
	if w.resume && status == http.StatusOK && !w.quiet {
		w.err = w.s.reply("start", w.requestID)
	}
}

func (w *wsResponse) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.err != nil {
		return 0, w.err
	}
	if w.status != http.StatusOK {
		if w.refusal.Len() < 64<<10 {
			w.refusal.Write(p)
		}
		return len(p), nil
	}
	w.pending = append(w.pending, p...)
	// The events of one Write are a burst the stream cut at once: their
	// frames leave in one write to the connection.
	w.s.conn.cork()
	for w.err == nil {
		i := bytes.Index(w.pending, []byte("\n\n"))
		if i < 0 {
			break
		}
		w.event(w.pending[:i])
		w.pending = w.pending[i+2:]
	}
	w.err = w.s.uncork(w.err)
	if len(w.pending) == 0 {
		w.pending = nil // an idle stream holds no buffer
	}
	if w.err != nil {
		return 0, w.err
	}
	return len(p), nil
}

// Flush implements http.Flusher: frames go out as they are cut.
func (w *wsResponse) Flush() {}

// event sends one server-sent event's data as a chunk frame, within a
// burst.
func (w *wsResponse) event(ev []byte) {
	for _, line := range bytes.Split(ev, []byte("\n")) {
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok || string(data) == "[DONE]" || w.quiet {
			continue
		}
		if bytes.HasPrefix(data, []byte(`{"type":"data-queue"`)) {
			// A queued send's outcome: not a chunk of the turn, which a
			// resume numbers from its start. The socket's client learns
			// of the queue from GET …/queue; abort uses it.
			var o struct{ Data struct{ MessageID string } }
			_ = json.Unmarshal(data, &o)
			w.mu.Lock()
			w.queued = o.Data.MessageID
			w.mu.Unlock()
			continue
		}
		if w.queued != "" && bytes.HasPrefix(data, []byte(`{"type":"start"`)) {
			w.mu.Lock()
			w.queued = ""
			w.mu.Unlock()
		}
		w.seq++
		if w.seq <= w.skip {
			continue
		}
		w.frame = append(append(w.frame[:0], `{"type":"chunk","requestId":`...), w.quotedID()...)
		w.frame = strconv.AppendInt(append(w.frame, `,"sequence":`...), w.seq, 10)
		w.frame = append(append(append(w.frame, `,"chunk":`...), data...), '}')
		w.err = w.s.write(w.frame)
	}
}

// ownRun is the run the request asked for (its response's run header),
// and the message it queued when its turn has not begun.
func (w *wsResponse) ownRun() (run, queued string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.run, w.queued
}

// setQueued records that the request's message was queued, before the
// response's status is set: an abort that waited for the status then
// knows to take the message out of the queue.
func (w *wsResponse) setQueued(id string) {
	w.mu.Lock()
	w.queued = id
	w.mu.Unlock()
}

// queuedRecorder is a response writer that is told which message its
// request queued (wsResponse).
type queuedRecorder interface{ setQueued(id string) }

// quotedID is the request's id as a JSON string.
func (w *wsResponse) quotedID() []byte {
	if w.quoted == nil {
		w.quoted, _ = json.Marshal(w.requestID)
	}
	return w.quoted
}

// finish ends the request: end after a stream, no-active for a resume
// with nothing to resume, an error frame for a refusal (its JSON body).
func (w *wsResponse) finish() {
	w.decide.Do(func() { close(w.decided) })
	if w.quiet || w.err != nil || w.s.ctx.Err() != nil {
		return
	}
	switch {
	case w.status == 0 || w.status == http.StatusOK:
		_ = w.s.reply("end", w.requestID)
	case w.resume && (w.status == http.StatusNoContent || w.status == http.StatusNotFound):
		// Nothing to resume (a server without history has no runs).
		_ = w.s.reply("no-active", w.requestID)
	default:
		var e struct {
			Error string `json:"error"`
		}
		body := bytes.TrimSpace(w.refusal.Bytes())
		if json.Unmarshal(body, &e) != nil || e.Error == "" {
			w.s.fail(w.requestID, http.StatusText(w.status))
			return
		}
		w.s.refuse(w.requestID, body)
	}
}

// deltasKey marks a resume whose chunks are numbered (a WebSocket's):
// it reads the run's log as it was logged, every delta on its own, as
// the stream that started the run got it and as every replica's shared
// log holds it, so that a chunk's number is the same wherever the turn is
// read.
type deltasKey struct{}

func withDeltas(ctx context.Context) context.Context {
	return context.WithValue(ctx, deltasKey{}, true)
}

func wantsDeltas(ctx context.Context) bool { v, _ := ctx.Value(deltasKey{}).(bool); return v }

// replayEndedKey marks a resume from a client that has part of the turn
// (a WebSocket resume with lastSequence): a turn that has ended is
// replayed, not no-active.
type replayEndedKey struct{}

func replaysEnded(ctx context.Context) bool { v, _ := ctx.Value(replayEndedKey{}).(bool); return v }

// scopeOf is r's scope, as a request's (authenticate): "" without a
// scope function.
func (h *Handler) scopeOf(r *http.Request) (string, error) {
	if h.cfg.scope == nil {
		return "", nil
	}
	return h.cfg.scope(r)
}
