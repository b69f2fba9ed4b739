package uiadapter

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/ids"
)

// WithGuard gives every run a guard (a policy.Engine): it decides each
// new user message before the model sees it or it is stored (a denial is
// a 403 whose error is the guard's reason), and the agent loop asks it
// about each tool call, result and finished text part (see
// [agent.Guard]). The default is none, which costs nothing.
func WithGuard(g agent.Guard) Option { return func(c *config) { c.guard = g } }

// WithSubject authenticates a request as a subject (id, type, roles,
// permissions, teams, claims): policies see it on every message of the
// request and its run, and the subject's id is the request's scope, as
// [WithScope] would return it (use one of the two). Its errors mean what
// the scope function's do; a nil subject or one without an id is a 401.
func WithSubject(fn func(*http.Request) (*cmf.SubjectExtension, error)) Option {
	return func(c *config) { c.subject = fn }
}

// WithEnvironment names the deployment ("production", "staging") in the
// request extension of every message, for policies that differ by it.
// The default is none.
func WithEnvironment(env string) Option { return func(c *config) { c.environment = env } }

// DefaultRecordedHeaders are the request headers a new user message
// keeps in its http extension by default.
var DefaultRecordedHeaders = []string{"User-Agent", "Accept-Language", "Origin"}

// WithRecordedHeaders replaces the request headers a new user message
// keeps in its http extension (stored with it; policies read them with
// cmf.CapReadHeaders). Credentials are never kept: naming Authorization,
// Cookie, Proxy-Authorization or X-Api-Key is a configuration error.
func WithRecordedHeaders(names ...string) Option {
	return func(c *config) { c.headers = slices.Clone(names) }
}

// maxHeaderValue bounds a recorded header value.
const maxHeaderValue = 512

var credentialHeaders = []string{"Authorization", "Cookie", "Proxy-Authorization", "X-Api-Key"}

func checkHeaders(names []string) error {
	for _, n := range names {
		if slices.Contains(credentialHeaders, http.CanonicalHeaderKey(n)) {
			return errors.New("uiadapter: WithRecordedHeaders: " + http.CanonicalHeaderKey(n) + " holds credentials and is never recorded")
		}
	}
	return nil
}

// errNoSubject: a subject function returned no subject and no error.
var errNoSubject = errors.New("the subject function returned no subject")

// authenticate runs the subject or scope function for req.
func (h *Handler) authenticate(req *request) error {
	switch {
	case h.cfg.subject != nil:
		s, err := h.cfg.subject(req.r)
		if err == nil && (s == nil || s.ID == "") {
			err = errNoSubject
		}
		if err != nil {
			return err
		}
		req.subject, req.scope = s, s.ID
	case h.cfg.scope != nil:
		scope, err := h.cfg.scope(req.r)
		if err != nil {
			return err
		}
		req.scope = scope
	}
	return nil
}

// ingest fills the extensions of the turn's user messages (request,
// agent, http, subject, provenance), lets the guard decide them, and
// gives the run its context and guard. With history only the new user
// message is the request's; without, every user message the client sent
// is (the client resends its own copy each turn, unredacted), so all of
// them are stamped and decided. A denial of the new message is a 403 with
// the guard's reason, and nothing of the turn is stored; a resent message
// a guard denies is left out (the client still holds the message it was
// refused for, and would otherwise be refused on every turn after).
func (h *Handler) ingest(req *request, in *agent.Input, stateless bool) error {
	run := h.runContext(req)
	in.Extensions, in.Guard = run, h.cfg.guard
	msgs := in.Messages
	run.Agent.Turn = turnOf(in.History, msgs)
	first := len(msgs) - 1
	if first < 0 || msgs[first].Role != cmf.RoleUser {
		first = len(msgs) // a continuation: no new user message
	}
	if stateless {
		first = 0
	}
	var dropped map[int]bool
	for i := first; i < len(msgs); i++ {
		if msgs[i].Role != cmf.RoleUser {
			continue
		}
		parent := ""
		switch {
		case i > 0:
			parent = msgs[i-1].ID()
		case len(in.History) > 0:
			parent = in.History[len(in.History)-1].ID()
		}
		h.stampUser(req, &msgs[i], run, parent)
		err := h.checkInput(req, &msgs[i])
		switch {
		case err != nil && i == len(msgs)-1:
			return err
		case err != nil:
			req.log.Info("a resent user message was denied by policy: left out", "message", msgs[i].ID())
			if dropped == nil {
				dropped = map[int]bool{}
			}
			dropped[i] = true
		}
	}
	if dropped != nil {
		kept := make([]cmf.Message, 0, len(msgs)-len(dropped))
		for i := range msgs {
			if !dropped[i] {
				kept = append(kept, msgs[i])
			}
		}
		in.Messages, msgs = kept, kept
	}
	// The run works for the turn's user message, as the policies left it.
	run.Agent.Input = intent(lastUserText(in.History, msgs))
	return nil
}

// checkInput lets the guard decide a user message, in place.
func (h *Handler) checkInput(req *request, m *cmf.Message) error {
	g := h.cfg.guard
	if g == nil || !g.Guards(agent.PointInput) {
		return nil
	}
	v, err := g.Check(req.r.Context(), &agent.Check{Point: agent.PointInput, Message: m})
	if err != nil {
		v = agent.Verdict{Deny: agent.PolicyFailed}
	}
	if v.Deny != "" {
		req.log.Info("the user's message was denied by policy", "reason", v.Deny)
		return &Error{Status: http.StatusForbidden, Message: v.Deny}
	}
	if v.Message != nil {
		*m = *v.Message
	}
	m.AddLabels(v.Labels...)
	return nil
}

// maxIntent bounds the user's intent each produced message repeats.
const maxIntent = 512

// intent is the turn's user text as the run's messages carry it: cut at
// maxIntent bytes (on a rune boundary), since every message of the run
// repeats it and the whole text is in the user's message.
func intent(text string) string {
	if len(text) <= maxIntent {
		return text
	}
	cut := maxIntent
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + "…"
}

// runContext is the run's context extensions: the request, the agent's
// session and the subject.
func (h *Handler) runContext(req *request) *cmf.Extensions {
	r := req.r
	rx := &cmf.RequestExtension{Environment: h.cfg.environment, RequestID: requestID(r), Timestamp: time.Now().UTC().Format(time.RFC3339Nano)}
	if sc := spanContext(r); sc.IsValid() {
		rx.TraceID, rx.SpanID = sc.TraceID().String(), sc.SpanID().String()
	}
	ext := &cmf.Extensions{Request: rx, Agent: &cmf.AgentExtension{SessionID: req.scope, ConversationID: req.turn.ChatID}}
	if req.subject != nil {
		ext.Security = &cmf.SecurityExtension{Subject: req.subject}
	}
	return ext
}

// stampUser fills a new user message's extensions (keeping what the
// decoder put there: its id, UI records).
func (h *Handler) stampUser(req *request, m *cmf.Message, run *cmf.Extensions, parent string) {
	e := m.Extensions.Clone()
	if e == nil {
		e = &cmf.Extensions{}
	}
	e.Request = run.Request
	a := *run.Agent // the run's, without its Input: the message is the intent
	e.Agent = &a
	if req.subject != nil {
		e.Security = &cmf.SecurityExtension{Subject: req.subject}
	}
	names := h.cfg.headers
	if names == nil {
		names = DefaultRecordedHeaders
	}
	var hdr map[string]string
	for _, n := range names {
		if v := req.r.Header.Get(n); v != "" {
			if hdr == nil {
				hdr = make(map[string]string, len(names))
			}
			if len(v) > maxHeaderValue {
				v = v[:maxHeaderValue]
			}
			hdr[http.CanonicalHeaderKey(n)] = v
		}
	}
	if hdr != nil {
		e.HTTP = &cmf.HTTPExtension{Headers: hdr}
	}
	e.Provenance = &cmf.ProvenanceExtension{Source: "user", MessageID: m.ID(), ParentID: parent}
	m.Extensions = e
}

// turnOf numbers the turn of a conversation (history, then msgs, before
// they are stamped): the user messages from the last one that carries
// its turn (stored messages do, so this reads from the end), plus that
// turn.
func turnOf(history, msgs []cmf.Message) *int {
	n := 0
	for _, part := range [2][]cmf.Message{msgs, history} {
		for i := len(part) - 1; i >= 0; i-- {
			if e := part[i].Extensions; e != nil && e.Agent != nil && e.Agent.Turn != nil {
				n += *e.Agent.Turn
				return &n
			}
			if part[i].Role == cmf.RoleUser {
				n++
			}
		}
	}
	return &n
}

func lastUserText(history, msgs []cmf.Message) string {
	for _, part := range [2][]cmf.Message{msgs, history} {
		for i := len(part) - 1; i >= 0; i-- {
			if part[i].Role == cmf.RoleUser {
				return part[i].Text()
			}
		}
	}
	return ""
}

// lastID is the id of the conversation's last message.
func lastID(history, msgs []cmf.Message) string {
	switch {
	case len(msgs) > 0:
		return msgs[len(msgs)-1].ID()
	case len(history) > 0:
		return history[len(history)-1].ID()
	}
	return ""
}

// requestID is the request's X-Request-Id when it is a sane token, else
// a new id.
func requestID(r *http.Request) string {
	id := r.Header.Get("X-Request-Id")
	if id == "" || len(id) > 128 {
		return ids.New()
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return ids.New()
		}
	}
	return id
}

// spanContext is the request's trace: the server span an OpenTelemetry
// handler (package telemetry) started, else the caller's traceparent.
func spanContext(r *http.Request) trace.SpanContext {
	if sc := trace.SpanContextFromContext(r.Context()); sc.IsValid() {
		return sc
	}
	if r.Header.Get("Traceparent") == "" {
		return trace.SpanContext{}
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(r.Header))
	return trace.SpanContextFromContext(ctx)
}
