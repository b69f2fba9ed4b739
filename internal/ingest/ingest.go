// Package ingest takes in what a turn brings: it gives the turn's user
// messages their extensions (request, agent, http, subject, provenance)
// and lets the guard (a policy.Engine, or any agent.Guard) decide the
// messages that are the request's, at the point that matches what each
// claims to be. The handler (uiadapter) makes one Turn per request.
package ingest

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/ids"
	"github.com/agentui/agentui/internal/wire"
)

// Turn is one request's intake: who sent it, and what the handler's
// configuration says to record and guard.
type Turn struct {
	Request     *http.Request
	Guard       agent.Guard // nil: nothing is decided
	Environment string      // WithEnvironment
	Headers     []string    // the request headers a user message records
	Scope       string
	Subject     *cmf.SubjectExtension
	ChatID      string
	Log         *slog.Logger
}

// Ingest fills the extensions of the turn's user messages (request,
// agent, http, subject, provenance), lets the guard decide the messages
// that are the request's, and gives the run its context and guard.
//
// With history only the new user message is the request's. Without, the
// client's whole thread is (it resends its own copy each turn, and nothing
// in it is the server's), so every message passes the point that matches
// what it claims to be: user and assistant text the input point, tool
// results the post-tool point. A denial of the new user message is a 403
// with the guard's reason, and nothing of the turn is stored; a resent
// message a guard denies is left out (the client still holds the message
// it was refused for, and would otherwise be refused on every turn after),
// and a resent result it denies is replaced by a note that a policy
// withheld it.
func (it *Turn) Ingest(in *agent.Input, stateless bool) error {
	run := it.runContext()
	in.Extensions, in.Guard = run, it.Guard
	run.Agent.Turn = turnOf(in.History, in.Messages)
	if stateless {
		var err error
		if in.History, err = it.screenThread(run, in.History, nil, false); err != nil {
			return err
		}
		if in.Messages, err = it.screenThread(run, in.Messages, in.History, true); err != nil {
			return err
		}
	} else if n := len(in.Messages); n > 0 && in.Messages[n-1].Role == cmf.RoleUser {
		in.Messages = it.screenGreeting(in.Messages)
		n = len(in.Messages)
		m := &in.Messages[n-1]
		it.stampUser(m, run, wire.LastID(in.History, in.Messages[:n-1]))
		if err := it.checkInput(m); err != nil {
			return err
		}
	}
	if err := it.checkContext(in); err != nil {
		return err
	}
	// The run works for the turn's user message, as the policies left it.
	run.Agent.Input = intent(lastUserText(in.History, in.Messages))
	return nil
}

// screenGreeting marks the assistant messages a new chat's turn adds
// before its user message (the client's opening greeting, see
// openingGreeting) as the client's, and lets the guard decide them at the
// input point like the user's words: a greeting it denies is left out.
// The turn's other added messages are the server's own.
func (it *Turn) screenGreeting(msgs []cmf.Message) []cmf.Message {
	if !slices.ContainsFunc(msgs[:len(msgs)-1], func(m cmf.Message) bool { return m.Role == cmf.RoleAssistant }) {
		return msgs
	}
	out := msgs[:0:0]
	for i, m := range msgs {
		if m.Role != cmf.RoleAssistant || i == len(msgs)-1 {
			out = append(out, m)
			continue
		}
		e := m.Extensions.Clone()
		if e == nil {
			e = &cmf.Extensions{}
		}
		e.Provenance = &cmf.ProvenanceExtension{Source: "client", MessageID: m.ID()}
		m.Extensions = e
		if err := it.checkInput(&m); err != nil {
			it.Log.Info("the client's greeting was denied by policy: left out", "message", m.ID())
			continue
		}
		out = append(out, m)
	}
	return out
}

// checkContext lets the guard decide the client's application context
// (AG-UI's "context") at the input point, as the user's text: the model
// reads it as a user message. The guard sees one user message with a
// text part per item (its description, a colon, its value); a denial is
// a 403 with the guard's reason, and a redaction of a part's text
// replaces its item's value.
func (it *Turn) checkContext(in *agent.Input) error {
	g := it.Guard
	if len(in.Context) == 0 || g == nil || !g.Guards(agent.PointInput) {
		return nil
	}
	m := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Extensions: in.Extensions}
	for _, c := range in.Context {
		m.Content = append(m.Content, cmf.Text{Text: c.Description + ": " + c.Value})
	}
	if err := it.checkInput(&m); err != nil {
		return err
	}
	items := slices.Clone(in.Context)
	for i := range items {
		t, ok := m.Content[i].(cmf.Text)
		if !ok {
			continue
		}
		if v, cut := strings.CutPrefix(t.Text, items[i].Description+": "); cut {
			items[i].Value = v
		} else {
			items[i].Value = t.Text
		}
	}
	in.Context = items
	return nil
}

// screenThread stamps and guards the client's messages (without history),
// returning them as the policies leave them: before are the messages that
// precede msgs. last says msgs end with the request's new message, whose
// denial refuses the request.
func (it *Turn) screenThread(run *cmf.Extensions, msgs, before []cmf.Message, last bool) ([]cmf.Message, error) {
	var out []cmf.Message
	for i := range msgs {
		m := msgs[i]
		if m.Role == cmf.RoleUser {
			parent := wire.LastID(before, msgs[:i])
			it.stampUser(&m, run, parent)
		}
		keep, err := it.checkClient(&m)
		switch {
		case err != nil && last && i == len(msgs)-1 && m.Role == cmf.RoleUser:
			return nil, err
		case err != nil:
			it.Log.Info("a resent message was denied by policy: left out", "message", m.ID(), "role", m.Role)
		case keep:
			if out == nil {
				out = make([]cmf.Message, 0, len(msgs))
			}
			out = append(out, m)
		}
	}
	return out, nil
}

// checkClient lets the guard decide a message the client wrote, in
// place: text at the input point, tool results at the post-tool point
// (a denied result becomes an error result saying a policy withheld it).
// It returns false when the message is to be left out.
func (it *Turn) checkClient(m *cmf.Message) (bool, error) {
	switch m.Role {
	case cmf.RoleUser, cmf.RoleAssistant:
		return true, it.checkInput(m)
	case cmf.RoleTool:
		return true, it.checkResults(m)
	}
	return true, nil
}

// checkResults lets the guard decide each tool result of a client's tool
// message at the post-tool point, as the loop does for the results it
// makes.
func (it *Turn) checkResults(m *cmf.Message) error {
	g := it.Guard
	if g == nil || !g.Guards(agent.PointPostTool) {
		return nil
	}
	var content []cmf.Part
	for i, p := range m.Content {
		tr, ok := p.(cmf.ToolResult)
		if !ok {
			continue
		}
		one := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleTool, Content: []cmf.Part{tr}, Extensions: m.Extensions}
		v, err := g.Check(it.Request.Context(), &agent.Check{Point: agent.PointPostTool, Message: &one, Tool: tr.ToolName})
		if err != nil {
			v = agent.Verdict{Deny: agent.PolicyFailed}
		}
		switch {
		case v.Deny != "":
			it.Log.Info("a client tool result was denied by policy", "call", tr.ToolCallID, "reason", v.Deny)
			tr.Content, tr.IsError = deniedResult(v.Deny), true
		case v.Message != nil && len(v.Message.Content) == 1:
			if r, ok := v.Message.Content[0].(cmf.ToolResult); ok {
				tr = r
			}
		}
		if content == nil {
			content = slices.Clone(m.Content)
		}
		content[i] = tr
		if len(v.Labels) > 0 {
			m.AddLabels(v.Labels...)
		}
	}
	if content != nil {
		m.Content = content
	}
	return nil
}

// deniedResult is the output of a result a policy withheld, as the model
// sees it.
func deniedResult(reason string) json.RawMessage {
	b, _ := json.Marshal("Tool result denied by policy: " + reason)
	return b
}

// checkInput lets the guard decide a message at the input point, in
// place.
func (it *Turn) checkInput(m *cmf.Message) error {
	g := it.Guard
	if g == nil || !g.Guards(agent.PointInput) {
		return nil
	}
	v, err := g.Check(it.Request.Context(), &agent.Check{Point: agent.PointInput, Message: m})
	if err != nil {
		v = agent.Verdict{Deny: agent.PolicyFailed}
	}
	if v.Deny != "" {
		it.Log.Info("a message was denied by policy", "role", m.Role, "reason", v.Deny)
		return &wire.Error{Status: http.StatusForbidden, Message: v.Deny}
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
func (it *Turn) runContext() *cmf.Extensions {
	r := it.Request
	rx := &cmf.RequestExtension{Environment: it.Environment, RequestID: requestID(r), Timestamp: time.Now().UTC().Format(time.RFC3339Nano)}
	if sc := spanContext(r); sc.IsValid() {
		rx.TraceID, rx.SpanID = sc.TraceID().String(), sc.SpanID().String()
	}
	ext := &cmf.Extensions{Request: rx, Agent: &cmf.AgentExtension{SessionID: it.Scope, ConversationID: it.ChatID}}
	if it.Subject != nil {
		ext.Security = &cmf.SecurityExtension{Subject: it.Subject}
	}
	return ext
}

// stampUser fills a new user message's extensions (keeping what the
// decoder put there: its id, UI records).
func (it *Turn) stampUser(m *cmf.Message, run *cmf.Extensions, parent string) {
	e := m.Extensions.Clone()
	if e == nil {
		e = &cmf.Extensions{}
	}
	e.Request = run.Request
	a := *run.Agent // the run's, without its Input: the message is the intent
	e.Agent = &a
	if it.Subject != nil {
		e.Security = &cmf.SecurityExtension{Subject: it.Subject}
	}
	names := it.Headers
	if names == nil {
		names = DefaultHeaders
	}
	var hdr map[string]string
	for _, n := range names {
		if v := it.Request.Header.Get(n); v != "" {
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

// DefaultHeaders are the request headers a new user message
// keeps in its http extension by default.
var DefaultHeaders = []string{"User-Agent", "Accept-Language", "Origin"}

// maxHeaderValue bounds a recorded header value.
const maxHeaderValue = 512
