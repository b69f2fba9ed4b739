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
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/outagelog"
	"github.com/agentui/agentui/internal/run"
	"github.com/agentui/agentui/internal/turn"
	"github.com/agentui/agentui/internal/wire"
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
	log   *slog.Logger // the configured logger, with the protocol's name
	runs  *run.Engine  // runs its turns, and keeps them with history
	// sockets counts the WebSockets open per scope (WebSocketHandler).
	sockets socketCount
}

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
	cfg.logger = slog.New(outagelog.New(cfg.logger.Handler(), time.Now))
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
	if q, ok := cfg.store.(history.Queue); ok {
		cfg.queue = q
	}
	h := &Handler{proto: proto, agent: a, cfg: cfg, log: cfg.logger.With("protocol", proto.Name())}
	rc := run.Config{Store: cfg.store, Locker: cfg.locker, RunLog: cfg.runLog, LockTTL: cfg.lockTTL,
		StoreTimeout: cfg.storeTimeout, Retention: cfg.runRetention, KeepAlive: cfg.keepAlive, Log: h.log}
	if cfg.redrives > 0 {
		rc.Redrive, rc.MaxRedrives = h.redrive, cfg.redrives
	}
	h.runs = run.New(rc)
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

// request is one chat request being served.
type request struct {
	h      *Handler
	r      *http.Request
	cancel context.CancelCauseFunc // cancels r's context
	log    *slog.Logger

	// What the client said: the decoded turn, and its body when only its
	// last message was decoded (see decodeAll).
	turn *wire.Turn
	body []byte
	// Who asks (authenticate).
	who caller

	// What the server decided for the turn, beside it. model is the model
	// the run asks for: the turn's, when the agent offers a choice (""
	// its default); trusted is what the encoder gets beside the turn.
	model   string
	trusted wire.Trusted
	// signed are the turn's verified answers to signed approval requests
	// (without history), spent by spendAnswers.
	signed []signedAnswer
	// slot is the key of the run's place under RunLimits (with history;
	// "" when it holds none); the run gives it back once it ends.
	slot string
	// steered is set when the turn's message went to the chat's running
	// reply instead of a run of its own (whenBusy).
	steered *agent.SendOutcome
	// queued is set when the turn's message was queued behind the chat's
	// running reply (enqueue); queuedID names the queued message a
	// request runs (queuedRequest).
	queued   *agent.SendOutcome
	queuedID string
	// retry is set when the request is the one that started the chat's
	// latest run, sent again: it is answered with that run's stream
	// (serveRetry).
	retry *run.Source
	// protocol is the run's protocol when it is not the handler's: a run
	// another protocol's handler started, which this one runs again
	// (redrive); its approvals are signed for that protocol.
	protocol string
}

// caller is who a request comes from.
type caller struct {
	scope   string                // "" without a scope function
	subject *cmf.SubjectExtension // nil without WithSubject
	addr    string                // the client address it is counted under (WithClientAddr)
}

// Shutdown stops the handler taking requests (503 "the server is shutting
// down") and waits for those it is serving. When ctx ends first, it cuts
// them: each run is cancelled, what it produced is stored (stop reason
// aborted), its stream ends with the protocol's error event
// (ShutdownMessage), and its lock is released. Shutdown then waits for
// them to finish, which the store and write timeouts bound, and for what
// they left to finish in the background (a lock release, a save or a
// shared log's end the store did not take in time, each bounded by the
// lock's TTL) until ctx ends, and returns ctx's error when it ended
// first. Call it alongside http.Server.Shutdown, which stops the
// listeners but would otherwise wait for streams or drop them unfinished.
func (h *Handler) Shutdown(ctx context.Context) error { return h.runs.Shutdown(ctx) }

// signedAnswer is a verified answer to a signed approval request: its
// nonce is spent once the turn can no longer be refused.
type signedAnswer struct {
	call    string
	nonce   string
	expires time.Time
}
