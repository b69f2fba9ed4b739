package uiadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/agentui/agentui/edge"
	"github.com/agentui/agentui/internal/wire"
)

// The AI SDK 7's WebSocketChatTransport, served: one socket carries the
// turns of any number of chats, each a request of its own (requestId).
// A frame is served as the HTTP request it stands for, through the same
// handlers (a send is POST {api}/chat, a resume GET {api}/chat/{id}/stream,
// an abort POST {api}/chat/{id}/stop), made from the handshake request
// (its cookies, address and origin: whose chats the socket may touch)
// and the frame's own headers, so every rule of those routes applies to
// every frame. What a handler streams is cut into UI message chunks and
// numbered per response from 0, as the transport requires; a handler's
// refusal is an error frame for that request alone.

// Bounds of a socket.
const (
	// DefaultMaxSockets is how many WebSockets one scope (or, without a
	// scope, one client address) may hold open at once.
	DefaultMaxSockets = 16
	// wsMaxRequests is how many requests one socket may have in flight.
	wsMaxRequests = 16
	// wsPingEvery is how often the server pings; a peer that does not
	// answer within wsPingTimeout is closed.
	wsPingEvery   = 30 * time.Second
	wsPingTimeout = 15 * time.Second
	// wsSendTimeout bounds how long a response waits for the socket to
	// take its next frame: a client that stops reading is cut, not
	// buffered for.
	wsSendTimeout = 30 * time.Second
)

// WebSocketHandler serves GET {api}/chat upgraded to a WebSocket, for the
// AI SDK 7's WebSocketChatTransport ({url: '/api/chat'}). The handshake
// is authenticated as any request of the handler (the scope cookie, or a
// credential in the URL's query the scope function reads) and checked
// for its origin: the page's own, or one CORS allows. Mount it on the
// useChat handler.
func (h *Handler) WebSocketHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log := h.log.With("transport", "websocket")
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			wire.WriteError(w, log, &wire.Error{Status: http.StatusMethodNotAllowed, Message: "method not allowed: use GET with a WebSocket upgrade"})
			return
		}
		if !upgradesToWebSocket(r) {
			w.Header().Set("Upgrade", "websocket")
			wire.WriteError(w, log, &wire.Error{Status: http.StatusUpgradeRequired, Message: "GET here opens a WebSocket (the AI SDK 7's WebSocketChatTransport); useChat over HTTP POSTs"})
			return
		}
		key := "addr:" + h.cfg.clientAddr(r)
		if h.cfg.scope != nil {
			scope, err := h.cfg.scope(r)
			switch {
			case err == nil:
				key = "scope:" + scope
			case !errors.Is(err, ErrNoScope):
				wire.WriteError(w, log, scopeError(err))
				return
			}
		}
		if !h.sockets.take(key, DefaultMaxSockets) {
			w.Header().Set("Retry-After", "1")
			wire.WriteError(w, log, &wire.Error{Status: http.StatusTooManyRequests, Message: "too many WebSockets open for you at once (" + strconv.Itoa(DefaultMaxSockets) + ")"})
			return
		}
		defer h.sockets.give(key)
		// Browsers open a WebSocket from any page without a preflight:
		// only the server's own origin, or one CORS allows, may.
		cw := &corkingWriter{ResponseWriter: w}
		c, err := websocket.Accept(cw, r, &websocket.AcceptOptions{InsecureSkipVerify: edge.CORSAllowed(r)})
		if err != nil {
			log.Info("a WebSocket handshake was refused", "error", err)
			return
		}
		c.SetReadLimit(2*h.cfg.maxBodyBytes + 64<<10)
		s := &wsSocket{h: h, c: c, conn: cw.conn, base: r, log: log, reqs: map[string]*wsRequest{}}
		s.serve()
	})
}

// upgradesToWebSocket reports whether r asks to upgrade to a WebSocket
// (Connection: upgrade, Upgrade: websocket).
func upgradesToWebSocket(r *http.Request) bool {
	if !strings.EqualFold(strings.TrimSpace(r.Header.Get("Upgrade")), "websocket") {
		return false
	}
	for _, v := range r.Header.Values("Connection") {
		for _, token := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(token), "upgrade") {
				return true
			}
		}
	}
	return false
}

// socketCount counts the open WebSockets per scope.
type socketCount struct {
	mu sync.Mutex
	n  map[string]int
}

func (sc *socketCount) take(key string, max int) bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.n[key] >= max {
		return false
	}
	if sc.n == nil {
		sc.n = map[string]int{}
	}
	sc.n[key]++
	return true
}

func (sc *socketCount) give(key string) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.n[key]--; sc.n[key] <= 0 {
		delete(sc.n, key)
	}
}

// wsSocket is one open socket.
type wsSocket struct {
	h    *Handler
	c    *websocket.Conn
	conn *corkedConn   // under c: a burst of frames goes out in one write
	base *http.Request // the handshake
	log  *slog.Logger
	ctx  context.Context

	mu   sync.Mutex
	reqs map[string]*wsRequest // in flight, by requestId
	wg   sync.WaitGroup
}

// wsRequest is a request in flight on a socket.
type wsRequest struct {
	chat   string
	cancel context.CancelFunc
	resp   *wsResponse // set once it is served
}

// wsFrame is a client's frame: send, resume or abort.
type wsFrame struct {
	Type         string            `json:"type"`
	RequestID    string            `json:"requestId"`
	ID           *string           `json:"id"`
	Messages     json.RawMessage   `json:"messages"`
	Trigger      string            `json:"trigger"`
	MessageID    *string           `json:"messageId"`
	Headers      map[string]string `json:"headers"`
	Body         json.RawMessage   `json:"body"`
	LastSequence *json.Number      `json:"lastSequence"`
}

// serve reads frames until the socket closes, then waits for the
// requests it started (their runs go on, as after a dropped SSE stream).
func (s *wsSocket) serve() {
	ctx, cancel := context.WithCancel(s.base.Context())
	defer cancel()
	s.ctx = ctx
	go s.ping(ctx)
	defer func() {
		cancel()
		s.wg.Wait()
		_ = s.c.CloseNow()
	}()
	for {
		typ, data, err := s.c.Read(ctx)
		if err != nil {
			if st := websocket.CloseStatus(err); st == -1 && ctx.Err() == nil {
				s.log.Debug("a WebSocket closed", "error", err)
			}
			return
		}
		if typ != websocket.MessageText {
			s.log.Info("a binary WebSocket frame was ignored")
			continue
		}
		s.dispatch(data)
	}
}

// ping pings the peer every wsPingEvery; one that does not answer is
// closed.
func (s *wsSocket) ping(ctx context.Context) {
	t := time.NewTicker(wsPingEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			pctx, cancel := context.WithTimeout(ctx, wsPingTimeout)
			err := s.c.Ping(pctx)
			cancel()
			if err != nil && ctx.Err() == nil {
				s.log.Info("a WebSocket peer did not answer a ping: closed")
				_ = s.c.CloseNow()
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// send writes one frame, as a burst of its own. Responses write from
// their own goroutines; the connection orders their frames.
func (s *wsSocket) send(f []byte) error {
	s.conn.cork()
	err := s.write(f)
	return s.uncork(err)
}

// write frames f within a burst (between conn.cork and uncork), where it
// is only held: it needs no deadline of its own, and gets none (the
// library would start a timer per frame for one).
func (s *wsSocket) write(f []byte) error {
	return s.c.Write(context.Background(), websocket.MessageText, f)
}

// uncork ends a burst begun with conn.cork and returns the first of err
// and its own error. What the burst held goes out within wsSendTimeout:
// a client that stops reading for that long is cut.
func (s *wsSocket) uncork(err error) error {
	if uerr := s.conn.uncork(); err == nil {
		err = uerr
	}
	if errors.Is(err, os.ErrDeadlineExceeded) && s.ctx.Err() == nil {
		s.log.Warn("a WebSocket client stopped reading: closed")
		s.c.CloseNow()
	}
	return err
}

// reply sends a frame of type typ for requestID with fields (already
// JSON-encoded values after the requestId).
func (s *wsSocket) reply(typ, requestID string, fields ...string) error {
	b := append([]byte(`{"type":"`), typ...)
	b = append(b, `","requestId":`...)
	id, _ := json.Marshal(requestID)
	b = append(b, id...)
	for _, f := range fields {
		b = append(append(b, ','), f...)
	}
	return s.send(append(b, '}'))
}

// fail answers requestID with an error frame saying message.
func (s *wsSocket) fail(requestID, message string) {
	body, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{message})
	s.refuse(requestID, body)
}

// refuse answers requestID with an error frame whose errorText is body,
// a refusal's JSON as the HTTP route sends it ({"error", "code"}): a
// client's error.message is the same string over both transports.
func (s *wsSocket) refuse(requestID string, body []byte) {
	t, _ := json.Marshal(string(body))
	_ = s.reply("error", requestID, `"errorText":`+string(t))
}

// dispatch checks one frame and starts what it asks for. A frame with
// no requestId cannot be answered (the client drops replies it cannot
// correlate, and closes the socket on malformed ones): it is logged and
// dropped. Any other bad frame is an error for its request alone.
func (s *wsSocket) dispatch(data []byte) {
	f, err := parseFrame(data)
	switch {
	case f.RequestID == "":
		s.log.Info("a WebSocket frame without a valid requestId was dropped")
		return
	case err != nil:
		s.fail(f.RequestID, err.Error())
		return
	case f.Type == "abort":
		s.abort(f.RequestID)
		return
	}
	ctx, cancel := context.WithCancel(s.ctx)
	s.mu.Lock()
	_, dup := s.reqs[f.RequestID]
	full := len(s.reqs) >= wsMaxRequests
	if !dup && !full {
		s.reqs[f.RequestID] = &wsRequest{chat: *f.ID, cancel: cancel}
		s.wg.Add(1)
	}
	s.mu.Unlock()
	switch {
	case dup:
		cancel()
		s.fail(f.RequestID, "a request with this requestId is in progress")
		return
	case full:
		cancel()
		s.fail(f.RequestID, "too many requests in progress on this connection ("+strconv.Itoa(wsMaxRequests)+")")
		return
	}
	go func() {
		defer s.wg.Done()
		defer func() {
			s.mu.Lock()
			delete(s.reqs, f.RequestID)
			s.mu.Unlock()
			cancel()
		}()
		if f.Type == "send" {
			s.serveSend(ctx, &f)
		} else {
			s.serveResume(ctx, &f)
		}
	}()
}

// parseFrame decodes and checks a client's frame. A frame it cannot
// answer (no valid requestId) comes back with none; one it can but that
// is not a valid send, resume or abort comes back with its requestId and
// the error to answer.
func parseFrame(data []byte) (wsFrame, error) {
	var f wsFrame
	if err := json.Unmarshal(data, &f); err != nil {
		var probe struct {
			RequestID string `json:"requestId"`
		}
		if json.Unmarshal(data, &probe) != nil || probe.RequestID == "" || wire.CheckID("requestId", probe.RequestID) != nil {
			return wsFrame{}, err
		}
		return wsFrame{RequestID: probe.RequestID}, errors.New("the frame is not a valid send, resume or abort frame")
	}
	if f.RequestID == "" || wire.CheckID("requestId", f.RequestID) != nil {
		return wsFrame{}, errors.New("no valid requestId")
	}
	if f.Type == "abort" {
		return f, nil
	}
	return f, f.check()
}

// check validates a send or resume frame as the transport's own
// validator does (safeValidateWebSocketChatTransportRequest); the
// messages themselves are the decoder's to check.
func (f *wsFrame) check() error {
	switch {
	case f.Type != "send" && f.Type != "resume":
		return errors.New(`unknown frame type: want "send", "resume" or "abort"`)
	case f.ID == nil:
		return errors.New(`the frame has no chat "id"`)
	case len(f.Body) > 0 && (bytes.TrimSpace(f.Body)[0] != '{'):
		return errors.New(`"body" must be an object`)
	}
	if err := wire.CheckChatID(*f.ID); err != nil {
		return err
	}
	if f.Type == "send" {
		if f.Trigger != "submit-message" && f.Trigger != "regenerate-message" {
			return errors.New(`"trigger" must be "submit-message" or "regenerate-message"`)
		}
		if len(f.Messages) == 0 || bytes.TrimSpace(f.Messages)[0] != '[' {
			return errors.New(`"messages" must be an array`)
		}
	}
	if f.LastSequence != nil {
		n, err := strconv.ParseInt(f.LastSequence.String(), 10, 64)
		if err != nil || n < 0 {
			return errors.New(`"lastSequence" must be a non-negative integer`)
		}
	}
	return nil
}
