// Package uiadapter is the protocol-agnostic core of agentui: an
// [http.Handler] that decodes a chat request with a protocol, sanitizes
// it, merges it with the trusted history (when a store is configured), runs
// an [agent.Agent], and streams the agent's events back in the request's
// protocol.
//
// Protocols live in protocols/vercelai and protocols/agui; this package
// knows none of their wire types.
package uiadapter

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/turn"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/runlog"
)

// Handler serves one protocol's chat endpoint. Mount it on a ServeMux
// pattern (mux.Handle("POST /api/chat", h)) or in gin (gin.WrapH(h)).
//
// Before any byte is streamed, failures are JSON {"error": "..."} with a
// status: 405 for a method other than POST, 415 for a Content-Type other
// than application/json (a CSRF defence: browsers cannot send JSON across
// origins without a preflight), 413 for a body over the limit, 400 for a
// malformed body, 409 for resolutions the server cannot accept, 503 when a
// dependency is down. Once streaming has started, a failure becomes the
// protocol's error event with a generic message; the cause is logged.
//
// With history (WithStore) a run is detached from its request: a client
// that disconnects leaves it running, and it can be resumed
// (ResumeHandler, ConnectHandler) and stopped (StopHandler). Without
// history a client that disconnects cancels the run.
type Handler struct {
	proto wire.Protocol
	agent agent.Agent
	cfg   config
	// releasing bounds the lock releases retried in the background, so a
	// store that stays frozen under load cannot pile up goroutines: past
	// the bound, a lock is left to expire on its own.
	releasing chan struct{}
	inflight  inflight
	// background counts what goes on after a stream ended (lock releases
	// retried, a save or a shared log's end finished later), which
	// Shutdown waits for.
	background sync.WaitGroup

	log     *slog.Logger   // the configured logger, with the protocol's name
	local   *runlog.Memory // this process's runs
	shared  runlog.Log     // every replica's runs (WithRunLog), or nil
	runs    runs           // this handler's live runs
	unwatch func()
}

// maxReleasing is how many lock releases a handler retries at once.
const maxReleasing = 1024

// New returns a handler that serves proto with a. A configuration that
// cannot work is an error that says which option to fix.
func New(proto wire.Protocol, a agent.Agent, opts ...Option) (*Handler, error) {
	cfg := defaults()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.check(proto, a); err != nil {
		return nil, err
	}
	if subject := cfg.subject; subject != nil {
		// The subject's id is the scope of the handlers that only need
		// the scope (resume, stop, threads).
		cfg.scope = func(r *http.Request) (string, error) {
			s, err := subject(r)
			if err == nil && (s == nil || s.ID == "") {
				err = errNoSubject
			}
			if err != nil {
				return "", err
			}
			return s.ID, nil
		}
	}
	cfg.logger = slog.New(newOutageLog(cfg.logger.Handler(), time.Now))
	if cfg.signer == nil {
		cfg.signer, cfg.randomKey = turn.NewSigner(turn.RandomKey()), true
	}
	if cfg.replay == nil {
		cfg.replay = NewMemoryReplayGuard(0)
	}
	if cfg.runLimits == nil {
		cfg.runLimits = &RunLimits{}
	}
	if cfg.store != nil && cfg.locker == nil {
		if l, ok := cfg.store.(history.Locker); ok {
			cfg.locker = l
		} else {
			cfg.locker = history.NewLocalLocker()
		}
	}
	h := &Handler{proto: proto, agent: a, cfg: cfg, releasing: make(chan struct{}, maxReleasing), log: cfg.logger.With("protocol", proto.Name())}
	if m, ok := cfg.runLog.(*runlog.Memory); ok {
		h.local = m
	} else {
		h.local, h.shared = runlog.NewMemory(), cfg.runLog
	}
	if cfg.runLog != nil { // shared: stop requests may come from elsewhere
		h.unwatch = cfg.runLog.Watch(func(key history.Key, run string) { h.runs.stop(key, run) })
	}
	return h, nil
}

func (c *config) check(proto wire.Protocol, a agent.Agent) error {
	var problem string
	switch {
	case proto == nil:
		problem = "no protocol"
	case a == nil:
		problem = "no agent"
	case c.store != nil && c.scope == nil && c.subject == nil:
		problem = "WithStore needs WithScope or WithSubject (uiadapter.SingleScope for a single-user app)"
	case c.scope != nil && c.subject != nil:
		problem = "WithScope and WithSubject both set: the subject's id is the scope, use one"
	case c.lockTTL <= 0 || c.storeTimeout <= 0 || c.approvalTTL <= 0 || c.runRetention <= 0:
		problem = "WithLockTTL, WithStoreTimeout, WithApprovalTTL and WithRunRetention need a positive duration"
	case c.runLog != nil && c.store == nil:
		problem = "WithRunLog needs WithStore: without history nothing resumes a run"
	case c.keepAlive < 0 || c.bodyTimeout < 0 || c.writeTimeout < 0:
		problem = "WithKeepAlive, WithBodyTimeout and WithWriteTimeout take 0 (off) or a positive duration"
	case c.maxBodyBytes <= 0 || c.maxChatMessages <= 0 || c.maxChatBytes <= 0:
		problem = "WithMaxBodyBytes and WithChatLimits need positive limits"
	case c.logger == nil:
		problem = "WithLogger(nil)"
	}
	if err := checkHeaders(c.headers); err != nil {
		return err
	}
	if c.runLimits != nil {
		if err := c.runLimits.check(); err != nil {
			return err
		}
	}
	if problem != "" {
		return errors.New("uiadapter: " + problem)
	}
	return nil
}

// ServeHTTP handles one chat request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	id, ok := h.inflight.enter(cancel)
	if !ok {
		wire.WriteError(w, h.log, wire.Unavailable("the server is shutting down; try again", nil))
		return
	}
	defer h.inflight.exit(id)
	req, err := h.decode(w, r.WithContext(ctx))
	if err != nil {
		wire.WriteError(w, h.log, err)
		return
	}
	req.cancel = cancel
	h.serve(w, req)
}

// decode reads and decodes the request's body. It is apart from serve,
// and ServeHTTP small, so that the stack under the JSON decoder stays
// small: see vercelai's Decode.
func (h *Handler) decode(w http.ResponseWriter, r *http.Request) (*request, error) {
	body, err := h.postBody(w, r)
	if err != nil {
		return nil, err
	}
	req := &request{r: r, addr: h.cfg.clientAddr(r)}
	if _, ok := h.proto.(wire.TailDecoder); ok && h.cfg.store != nil {
		req.body = body // for decodeAll, should the request be served without history
	}
	if req.turn, err = h.decodeTurn(r, body, req.body != nil); err != nil {
		return nil, err
	}
	return req, nil
}

// decodeAll decodes the whole of a request that was decoded for a
// handler that keeps the history (its last turn only), once it is to be
// served without: its client has no scope credential.
func (h *Handler) decodeAll(req *request) error {
	if req.body == nil {
		return nil
	}
	turn, err := h.decodeTurn(req.r, req.body, false)
	if err != nil {
		return err
	}
	req.turn, req.body = turn, nil
	return nil
}

// decodeTurn decodes and checks a request's turn: only its last message
// with tail (the protocol is a TailDecoder), else all of it.
func (h *Handler) decodeTurn(r *http.Request, body []byte, tail bool) (*wire.Turn, error) {
	var t *wire.Turn
	var err error
	if tail {
		t, err = h.proto.(wire.TailDecoder).DecodeTail(r, body)
	} else {
		t, err = h.proto.Decode(r, body)
	}
	if err == nil {
		err = turn.Check(t)
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// serve answers a decoded request: one pipeline for both modes. The
// turn is planned from the conversation it builds on (the stored one, or
// without history the client's, sanitized), with no I/O (plan.go); the
// plan's answers are verified and its messages pass the guard (ingest);
// then it is committed (with history: one compare-and-set write, made
// while the run starts) and run.
//
//go:noinline
func (h *Handler) serve(w http.ResponseWriter, req *request) {
	in, s, err := h.prepare(w, req)
	if err != nil {
		if !errors.Is(err, errClientGone) {
			wire.WriteError(w, req.log, err)
		}
		return
	}
	// The stream runs from this small frame: what prepare needed is not
	// on the stack for as long as the stream lasts (see
	// TestStreamFitsStartingStack).
	h.stream(w, req, in, s)
}

// prepare takes a request up to its run: who it is and what it may spend,
// its plan (without history, or on the stored conversation), the guard's
// decisions. On an error nothing was stored and nothing runs.
//
//go:noinline
func (h *Handler) prepare(w http.ResponseWriter, req *request) (*agent.Input, *session, error) {
	r, t := req.r, req.turn
	log := h.log.With("chat", t.ChatID, "intent", t.Intent.String())
	req.log = log
	if len(t.Skipped) > 0 {
		log.Debug("skipped client input", "skipped", t.Skipped)
	}
	stateless := h.cfg.store == nil
	if err := h.authenticate(req); errors.Is(err, ErrNoScope) {
		stateless = true
		log.Debug("no scope credential: served without history")
	} else if err != nil {
		return nil, nil, scopeError(err)
	}
	if err := h.checkModel(req); err != nil {
		return nil, nil, err
	}
	if err := h.allow(w, req); err != nil {
		return nil, nil, err
	}
	var s *session
	var in *agent.Input
	var err error
	if stateless {
		in, err = h.planClient(req)
	} else {
		// A run with history outlives its request: bounded before anything
		// is locked, stored or run.
		key := limitKey(req)
		if err = h.cfg.runLimits.take(key, req.addr); err != nil {
			if err == errRunsPerAddress {
				log.Warn("run refused: its client address has as many runs going as RunLimits.PerAddress allows (behind a reverse proxy, see WithClientAddr)", "addr", req.addr)
			} else {
				log.Info("run refused: too many at once", "key", key, "addr", req.addr)
			}
			return nil, nil, err
		}
		req.slot = key
		s, in, err = h.planStored(req)
		req.body = nil // the t is all it needs, and req lasts as long as the stream
		switch {
		case err != nil && shuttingDown(r):
			err = wire.Unavailable("the server is shutting down; try again", err)
		case errors.Is(err, errClientGone):
			log.Debug("the client left before the conversation was loaded")
		}
	}
	if err == nil && (s == nil || s.plan.Refusal == "") {
		err = h.ingest(req, in, stateless)
		if s != nil {
			// What the t adds, as the policies left it (a client's
			// greeting they denied is left out), is what is stored.
			s.plan.Add, req.trusted.Added = in.Messages, in.Messages
		}
	}
	if err == nil && stateless {
		err = h.spendAnswers(req, in)
	}
	if err != nil {
		if s != nil {
			s.release()
		}
		h.giveSlot(req)
		var ra *turn.RefusedAnswer
		if errors.As(err, &ra) {
			refused(log, ra.Answer, ra.Why)
			err = wire.Conflict(ra.Why)
		}
		return nil, nil, err
	}
	return in, s, nil
}

// planClient plans a turn without history: the client's thread is the
// conversation, sanitized, with the provider values it carried sealed
// opened, and its approvals must carry valid signatures. The run's own
// provider values go back to the client sealed.
func (h *Handler) planClient(req *request) (*agent.Input, error) {
	if err := h.decodeAll(req); err != nil {
		return nil, err
	}
	kinds, _ := h.agent.(agent.ToolKinds)
	var seal *wire.ChatSeal
	if len(req.turn.Sealed) > 0 {
		seal = h.chatSeal(req)
	}
	base, p, findings, err := turn.PlanClient(req.turn, kinds, &h.cfg.policy, seal)
	if err != nil {
		return nil, err
	}
	req.trusted.Sealer = wire.NewSealer(seal, func() *wire.ChatSeal { return h.chatSeal(req) })
	findings.Log(req.log)
	p.Log(req.log)
	if err := h.verify(req, base, p.Resume); err != nil {
		return nil, err
	}
	return h.input(req, base[:p.Keep:p.Keep], p.Add, p.Resume), nil
}

// checkModel refuses a model the agent does not offer, when it offers a
// choice ([agent.ModelNames]). An agent that serves one model serves it
// whatever the request names: AG-UI apps forward props of their own,
// "model" among them, to agents that offer no choice.
func (h *Handler) checkModel(req *request) error {
	model := req.turn.Model
	if model == "" {
		return nil
	}
	mn, ok := h.agent.(agent.ModelNames)
	names := []string(nil)
	if ok {
		names = mn.ModelNames()
	}
	switch {
	case names == nil:
		return nil
	case slices.Contains(names, model):
		req.model = model
		return nil
	}
	if len(model) > 64 {
		model = model[:64] + "…"
	}
	return wire.BadRequest("unknown model " + strconv.Quote(model))
}

// input is the agent's input for a planned turn: the conversation it
// builds on, what the turn adds, and the answers that count.
func (h *Handler) input(req *request, history, added []cmf.Message, resume []wire.Resolution) *agent.Input {
	t := req.turn
	in := &agent.Input{
		History:      history,
		Messages:     added,
		Instructions: h.cfg.instructions,
		ClientTools:  t.ClientTools,
		State:        t.State,
		Context:      t.Context,
		Model:        req.model,
	}
	for _, res := range resume {
		in.Resume = append(in.Resume, res.Resolution)
	}
	return in
}

// request is one chat request being served.
type request struct {
	r      *http.Request
	body   []byte                  // kept when only its last turn was decoded (see decodeAll)
	cancel context.CancelCauseFunc // cancels r's context
	turn   *wire.Turn
	// model is the model the run asks for: the turn's, when the agent
	// offers a choice ("" its default).
	model   string
	trusted wire.Trusted          // what the encoder gets beside the turn
	scope   string                // "" without a scope function
	addr    string                // the client address it is counted under (WithClientAddr)
	subject *cmf.SubjectExtension // nil without WithSubject
	log     *slog.Logger
	// signed are the turn's verified answers to signed approval requests
	// (without history), spent by spendAnswers.
	signed []signedAnswer
	// slot is the key of the run's place under RunLimits (with history;
	// "" when it holds none); the run gives it back once it starts.
	slot string
}

// giveSlot gives back the request's place under RunLimits, if it holds one.
func (h *Handler) giveSlot(req *request) {
	if req.slot != "" {
		h.cfg.runLimits.give(req.slot, req.addr)
		req.slot = ""
	}
}

// signedCall is what the signature of an approval request in this
// request's chat covers.
func (h *Handler) signedCall(req *request, toolCallID, toolName string, input json.RawMessage) turn.SignedCall {
	return turn.SignedCall{Protocol: h.proto.Name(), Scope: req.scope, ChatID: req.turn.ChatID, ToolCallID: toolCallID, ToolName: toolName, Input: input}
}

// postBody checks that r is a POST of JSON (405, 415) and reads its body
// (413, 408, 400).
func (h *Handler) postBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.Method != http.MethodPost {
		wire.CloseUnread(w, r)
		w.Header().Set("Allow", http.MethodPost)
		return nil, &wire.Error{Status: http.StatusMethodNotAllowed, Message: "method not allowed: use POST"}
	}
	if !isJSON(r.Header.Get("Content-Type")) {
		wire.CloseUnread(w, r)
		return nil, &wire.Error{Status: http.StatusUnsupportedMediaType, Message: "content type must be application/json"}
	}
	return h.readBody(w, r)
}

// readBody reads the body within the size limit (413) and the body
// timeout (408), then clears the read deadline: the server's watch for a
// client that hangs up reads the connection during the stream, and must
// not trip over it.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rc := http.NewResponseController(w)
	if h.cfg.bodyTimeout > 0 {
		_ = rc.SetReadDeadline(time.Now().Add(h.cfg.bodyTimeout))
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.maxBodyBytes))
	var tooBig *http.MaxBytesError
	switch {
	case err == nil:
		// Cleared whoever set it (this handler, or a server's edge that
		// bounds every body): a deadline left on the connection would cut
		// the stream.
		_ = rc.SetReadDeadline(time.Time{})
		return body, nil
	case errors.As(err, &tooBig):
		return nil, &wire.Error{Status: http.StatusRequestEntityTooLarge, Message: "request body too large"}
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The deadline stays: the server must not wait for the rest of
		// the body either, and closes the connection.
		w.Header().Set("Connection", "close")
		return nil, &wire.Error{Status: http.StatusRequestTimeout, Message: "the request body did not arrive in time"}
	}
	return nil, wire.BadRequest("could not read the request body")
}

// verify checks that every approval, denial or edit answers an approval
// request this server signed, unexpired, for this scope: the signature
// must match the tool call as the client's history shows it (protocol,
// scope, chat, call id, tool name, input). It spends nothing: the
// answers' nonces are kept in req for spendAnswers, once nothing else can
// refuse the turn.
func (h *Handler) verify(req *request, msgs []cmf.Message, answers []wire.Resolution) error {
	for _, res := range answers {
		if !res.NeedsSignature() {
			continue
		}
		var refusal string
		call, ok := turn.FindCall(msgs, res.ToolCallID)
		switch {
		case !ok:
			refusal = "approval for a tool call the server did not request"
		case res.Signature == "":
			refusal = "approval without a signature"
		}
		if refusal == "" {
			nonce, expires, err := h.cfg.signer.Verify(res.Signature, h.signedCall(req, call.ToolCallID, call.Name, call.Arguments), time.Now())
			if err != nil {
				refusal = err.Error()
			} else {
				req.signed = append(req.signed, signedAnswer{call: res.ToolCallID, nonce: nonce, expires: expires})
			}
		}
		if refusal != "" {
			refused(req.log, res, refusal)
			return wire.Conflict(refusal)
		}
	}
	return nil
}

// signedAnswer is a verified answer to a signed approval request: its
// nonce is spent once the turn can no longer be refused.
type signedAnswer struct {
	call    string
	nonce   string
	expires time.Time
}

// spendAnswers is the last check of a turn without history: the signed
// answers the run resumes are recorded as answered, all at once, and a
// request that repeats one is refused (409) with none of them spent. An
// answer whose call the policies left out of the thread is not resumed,
// and not spent: the approval request can still be answered.
func (h *Handler) spendAnswers(req *request, in *agent.Input) error {
	if len(req.signed) == 0 {
		return nil
	}
	var nonces []string
	var last time.Time
	for _, a := range req.signed {
		_, inHistory := turn.FindCall(in.History, a.call)
		if _, inTurn := turn.FindCall(in.Messages, a.call); !inHistory && !inTurn {
			in.Resume = slices.DeleteFunc(in.Resume, func(r agent.Resolution) bool { return r.ToolCallID == a.call })
			req.log.Info("an answer's tool call was left out by policy: not resumed", "call", a.call)
			continue
		}
		nonces = append(nonces, a.nonce)
		if a.expires.After(last) {
			last = a.expires
		}
	}
	if len(nonces) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(req.r.Context(), h.cfg.storeTimeout)
	fresh, err := h.cfg.replay.Use(ctx, req.turn.ChatID, last, nonces...)
	cancel()
	switch {
	case err != nil:
		return wire.Unavailable("approvals cannot be checked right now", err)
	case !fresh:
		const why = "this approval request was already answered"
		req.log.Warn("refused an answer to a tool call", "reason", why)
		return wire.Conflict(why)
	}
	return nil
}

// refused logs an answer the server would not accept: every refused
// approval is worth a look (a stale tab, a replay, an attack).
func refused(log *slog.Logger, res wire.Resolution, why string) {
	log.Warn("refused an answer to a tool call", "call", res.ToolCallID, "answer", res.Kind.String(), "reason", why)
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}
