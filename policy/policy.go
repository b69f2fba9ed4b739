// Package policy runs an application's policies over CMF messages at the
// pipeline's guard points: a new user message (input), each tool call
// before it is approved or run (pre-tool), each tool result (post-tool)
// and each finished text part of the model (output).
//
// A [Policy] sees the message at its point through capability-gated
// [cmf.View]s and returns a [Decision]: allow, deny with a reason, redact
// (a changed copy, checked against the mutability tiers), add security
// labels, or require the user's approval for a tool call. An [Engine]
// composes policies in order and is the [agent.Guard] a handler gives
// each run (uiadapter.WithGuard). Every decision is audited: a
// structured slog record and an optional [AuditSink].
//
// See docs/policy.md for the points, what each sees, and the cost.
package policy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
)

// Policy is one rule set. Decide is called at each of Points (every
// point when empty), with views that expose only what Capabilities
// allow. An error, a panic or a redaction the tiers refuse fails closed:
// the message is denied and the failure logged.
type Policy struct {
	Name         string
	Points       []agent.Point
	Capabilities cmf.Capabilities
	Decide       func(ctx context.Context, in *Input) (Decision, error)
}

func (p *Policy) applies(at agent.Point) bool {
	return len(p.Points) == 0 || slices.Contains(p.Points, at)
}

// Input is what a policy decides on.
type Input struct {
	Point agent.Point
	// Tool is the tool's name at the pre-tool and post-tool points.
	Tool string
	// Views are the message's parts as the policy's capabilities let it
	// see them: at the loop's points one (the call, the result or the
	// text); at input, one per part of the user's message.
	Views []*cmf.View

	msg *cmf.Message
}

// Copy returns a copy of the message to change and return in a
// [Redact] decision: its content is the policy's to change; its
// extensions are copied on write, and may change only as the tiers allow
// (labels added, never removed; immutable extensions left as they are).
func (in *Input) Copy() *cmf.Message {
	m := *in.msg
	m.Content = slices.Clone(in.msg.Content)
	m.Extensions = in.msg.Extensions.Clone()
	return &m
}

// Decision is a policy's answer. The zero Decision allows.
type Decision struct {
	// Deny, when set, refuses the message; the reason is what the user
	// and the model see.
	Deny string
	// Redacted, when not nil, replaces the message: a changed [Input.Copy].
	Redacted *cmf.Message
	// Labels are security labels to add to the message.
	Labels []string
	// RequireApproval makes a tool call wait for the user's approval
	// (pre-tool only).
	RequireApproval bool
	// Reason says why, for the audit record.
	Reason string
}

// Allow lets the message pass unchanged.
func Allow() Decision { return Decision{} }

// Deny refuses the message; reason is shown to the user and the model.
func Deny(reason string) Decision { return Decision{Deny: reason, Reason: reason} }

// Redact replaces the message with m, a changed [Input.Copy].
func Redact(m *cmf.Message, reason string) Decision { return Decision{Redacted: m, Reason: reason} }

// Label adds security labels to the message.
func Label(labels ...string) Decision { return Decision{Labels: labels} }

// RequireApproval makes a tool call wait for the user's approval.
func RequireApproval(reason string) Decision {
	return Decision{RequireApproval: true, Reason: reason}
}

// Effect is a decision's kind, as the audit names it: the strongest of
// what it does ("deny", "require_approval", "redact", "label", "allow"),
// or "error" for a policy that failed.
func (d *Decision) Effect() string {
	switch {
	case d.Deny != "":
		return "deny"
	case d.RequireApproval:
		return "require_approval"
	case d.Redacted != nil:
		return "redact"
	case len(d.Labels) > 0:
		return "label"
	}
	return "allow"
}

// Record is one audited decision.
type Record struct {
	Time      time.Time
	Point     agent.Point
	Policy    string
	Decision  string // see [Decision.Effect]; "error" for a failed policy
	Reason    string
	Labels    []string // the labels the decision added
	URI       string   // the view's URI: tool://…/name, tool_result://name; "" for text
	Tool      string
	Subject   string // the authenticated subject's id
	Chat      string // the conversation id
	RequestID string
}

// AuditSink receives every decision, in order, on the request's
// goroutine: it must be fast (buffer and ship elsewhere) and safe for
// concurrent use.
type AuditSink interface {
	Audit(ctx context.Context, r Record)
}

// Engine runs policies in order. It implements [agent.Guard].
type Engine struct {
	policies []Policy
	points   [agent.PointOutput + 1]bool
	sink     AuditSink
	log      *slog.Logger
}

// Option configures an [Engine].
type Option func(*Engine)

// WithAudit sends every decision to sink too (the slog record is always
// written).
func WithAudit(sink AuditSink) Option { return func(e *Engine) { e.sink = sink } }

// WithLogger sets the logger decisions and failures go to (default
// slog.Default()). Decisions other than allow are logged at Info, allows
// at Debug, failures at Error.
func WithLogger(l *slog.Logger) Option { return func(e *Engine) { e.log = l } }

// New returns an engine over policies, which run in the order given. It
// fails on a policy without a name or a Decide function, two policies
// with one name, or an unknown point.
func New(policies []Policy, opts ...Option) (*Engine, error) {
	e := &Engine{policies: slices.Clone(policies), log: slog.Default()}
	for _, o := range opts {
		o(e)
	}
	if e.log == nil {
		return nil, errors.New("policy: WithLogger(nil)")
	}
	names := map[string]bool{}
	for _, p := range e.policies {
		switch {
		case p.Name == "":
			return nil, errors.New("policy: a policy has no name")
		case p.Decide == nil:
			return nil, fmt.Errorf("policy: %s has no Decide function", p.Name)
		case names[p.Name]:
			return nil, fmt.Errorf("policy: two policies are named %s", p.Name)
		}
		names[p.Name] = true
		for _, at := range p.Points {
			if at < agent.PointInput || at > agent.PointOutput {
				return nil, fmt.Errorf("policy: %s: unknown point %d", p.Name, at)
			}
		}
		for at := agent.PointInput; at <= agent.PointOutput; at++ {
			e.points[at] = e.points[at] || p.applies(at)
		}
	}
	return e, nil
}

// Guards reports whether a policy applies at p.
func (e *Engine) Guards(p agent.Point) bool { return int(p) < len(e.points) && e.points[p] }

// Check runs the policies that apply at c.Point, in order, each on the
// message as the ones before it left it. The first denial ends the
// check; labels and approval requirements add up; a redaction replaces
// the message for the policies after it. A policy that fails, or whose
// redaction breaks the tiers, denies with [agent.PolicyFailed]. Check
// never returns an error: it fails closed itself.
func (e *Engine) Check(ctx context.Context, c *agent.Check) (agent.Verdict, error) {
	var v agent.Verdict
	cur := c.Message
	for i := range e.policies {
		p := &e.policies[i]
		if !p.applies(c.Point) {
			continue
		}
		d, views, err := e.decide(ctx, p, c, cur)
		if err == nil && d.Redacted != nil {
			err = checkRedaction(cur, d.Redacted, p.Capabilities)
		}
		if err != nil {
			e.audit(ctx, c, p, views, cur, "error", err.Error(), nil)
			v.Deny, v.Message = agent.PolicyFailed, nil
			return v, nil
		}
		e.audit(ctx, c, p, views, cur, d.Effect(), d.Reason, d.Labels)
		if d.Deny != "" {
			v.Deny, v.Message = d.Deny, nil
			v.Labels = cmf.AddLabels(v.Labels, d.Labels...)
			return v, nil
		}
		if d.Redacted != nil {
			cur, v.Message = d.Redacted, d.Redacted
		}
		if len(d.Labels) > 0 {
			v.Labels = cmf.AddLabels(v.Labels, d.Labels...)
			cur = withLabels(cur, d.Labels) // the next policy sees them
		}
		v.RequireApproval = v.RequireApproval || (d.RequireApproval && c.Point == agent.PointPreTool)
	}
	return v, nil
}

// decide runs one policy, turning a panic into an error.
func (e *Engine) decide(ctx context.Context, p *Policy, c *agent.Check, m *cmf.Message) (d Decision, views []*cmf.View, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	views, err = m.Views(p.Capabilities)
	if err != nil {
		return Decision{}, nil, err
	}
	d, err = p.Decide(ctx, &Input{Point: c.Point, Tool: c.Tool, Views: views, msg: m})
	return d, views, err
}

// checkRedaction refuses a replacement that is not a changed copy of m:
// another role, id or shape, or extensions changed against the tiers.
func checkRedaction(m, r *cmf.Message, caps cmf.Capabilities) error {
	switch {
	case r.Role != m.Role:
		return errors.New("a redaction changed the message's role")
	case r.ID() != m.ID():
		return errors.New("a redaction changed the message's id")
	case len(r.Content) != len(m.Content):
		return errors.New("a redaction added or removed parts")
	}
	for i := range r.Content {
		if r.Content[i] == nil || r.Content[i].ContentType() != m.Content[i].ContentType() {
			return fmt.Errorf("a redaction changed the type of part %d", i)
		}
	}
	if err := cmf.CheckExtensionChange(m.Extensions, r.Extensions, caps); err != nil {
		return fmt.Errorf("a redaction was refused: %w", err)
	}
	return nil
}

func (e *Engine) audit(ctx context.Context, c *agent.Check, p *Policy, views []*cmf.View, m *cmf.Message, effect, reason string, labels []string) {
	r := Record{Time: time.Now(), Point: c.Point, Policy: p.Name, Decision: effect, Reason: reason, Labels: labels, Tool: c.Tool}
	if len(views) > 0 {
		r.URI = views[0].URI()
	}
	if x := m.Extensions; x != nil {
		if x.Security != nil && x.Security.Subject != nil {
			r.Subject = x.Security.Subject.ID
		}
		if x.Agent != nil {
			r.Chat = x.Agent.ConversationID
		}
		if x.Request != nil {
			r.RequestID = x.Request.RequestID
		}
	}
	level, msg := slog.LevelInfo, "policy decision"
	switch effect {
	case "allow":
		level = slog.LevelDebug
	case "error":
		level, msg = slog.LevelError, "policy failed; denied"
	}
	if e.log.Enabled(ctx, level) {
		e.log.LogAttrs(ctx, level, msg, slog.String("point", r.Point.String()), slog.String("policy", r.Policy),
			slog.String("decision", r.Decision), slog.String("reason", r.Reason), slog.Any("labels", r.Labels),
			slog.String("uri", r.URI), slog.String("subject", r.Subject), slog.String("chat", r.Chat), slog.String("request_id", r.RequestID))
	}
	if e.sink != nil {
		e.sink.Audit(ctx, r)
	}
}

// withLabels returns a copy of m with labels added.
func withLabels(m *cmf.Message, labels []string) *cmf.Message {
	c := *m
	c.AddLabels(labels...)
	return &c
}
