package policy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/policy"
)

type sink struct {
	mu      sync.Mutex
	records []policy.Record
}

func (s *sink) Audit(_ context.Context, r policy.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records = append(s.records, r)
}

// callCheck is a pre-tool check of delete_file, with the context a
// handler gives a run.
func callCheck(path string) *agent.Check {
	m := &cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant,
		Content: []cmf.Part{cmf.ToolCall{ToolCallID: "c1", Name: "delete_file", Arguments: json.RawMessage(`{"path":"` + path + `"}`)}},
		Extensions: &cmf.Extensions{
			Request:  &cmf.RequestExtension{RequestID: "req-1"},
			Agent:    &cmf.AgentExtension{SessionID: "ann", ConversationID: "chat-1"},
			Security: &cmf.SecurityExtension{Subject: &cmf.SubjectExtension{ID: "ann", Type: cmf.SubjectUser, Roles: []string{"staff"}}, Labels: []string{"seen"}},
		}}
	m.SetID("m1")
	return &agent.Check{Point: agent.PointPreTool, Tool: "delete_file", Message: m}
}

func newEngine(t *testing.T, ps []policy.Policy, opts ...policy.Option) *policy.Engine {
	t.Helper()
	e, err := policy.New(ps, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestEngineComposes(t *testing.T) {
	var order []string
	mark := func(name string, d policy.Decision) policy.Policy {
		return policy.Policy{Name: name, Points: []agent.Point{agent.PointPreTool}, Capabilities: cmf.CapReadLabels,
			Decide: func(_ context.Context, in *policy.Input) (policy.Decision, error) {
				order = append(order, name+":"+strings.Join(in.Views[0].Labels(), ","))
				return d, nil
			}}
	}
	e := newEngine(t, []policy.Policy{
		mark("a", policy.Label("pii")),
		mark("b", policy.RequireApproval("risky")),
		mark("c", policy.Allow()),
	})
	v, err := e.Check(context.Background(), callCheck("/tmp/x"))
	if err != nil || v.Deny != "" || !v.RequireApproval || !slices.Equal(v.Labels, []string{"pii"}) || v.Message != nil {
		t.Fatalf("verdict = %+v, %v", v, err)
	}
	// Each policy sees the labels the ones before it added.
	if want := []string{"a:seen", "b:seen,pii", "c:seen,pii"}; !slices.Equal(order, want) {
		t.Fatalf("order = %v", order)
	}
	if e.Guards(agent.PointInput) || !e.Guards(agent.PointPreTool) {
		t.Fatal("Guards is wrong")
	}
}

func TestEngineFirstDenialWins(t *testing.T) {
	called := false
	e := newEngine(t, []policy.Policy{
		{Name: "deny", Decide: func(context.Context, *policy.Input) (policy.Decision, error) { return policy.Deny("no"), nil }},
		{Name: "after", Decide: func(context.Context, *policy.Input) (policy.Decision, error) {
			called = true
			return policy.Allow(), nil
		}},
	})
	v, _ := e.Check(context.Background(), callCheck("/etc"))
	if v.Deny != "no" || called {
		t.Fatalf("verdict %+v, later policy called %v", v, called)
	}
}

// A denial keeps the labels its policy and the ones before it put on the
// message: the stored message (a denied call, a withheld result) carries
// them.
func TestEngineDenialKeepsLabels(t *testing.T) {
	e := newEngine(t, []policy.Policy{
		{Name: "label", Decide: func(context.Context, *policy.Input) (policy.Decision, error) { return policy.Label("pii"), nil }},
		{Name: "deny", Decide: func(context.Context, *policy.Input) (policy.Decision, error) {
			d := policy.Deny("no")
			d.Labels = []string{"blocked"}
			return d, nil
		}},
	})
	v, _ := e.Check(context.Background(), callCheck("/etc"))
	if v.Deny != "no" || !slices.Equal(v.Labels, []string{"pii", "blocked"}) {
		t.Fatalf("verdict %+v", v)
	}
}

func TestEngineRedaction(t *testing.T) {
	redactWith := func(change func(m *cmf.Message)) policy.Policy {
		return policy.Policy{Name: "redact", Decide: func(_ context.Context, in *policy.Input) (policy.Decision, error) {
			m := in.Copy()
			change(m)
			return policy.Redact(m, "test"), nil
		}}
	}
	t.Run("a changed copy replaces the message", func(t *testing.T) {
		check := callCheck("/etc/passwd")
		e := newEngine(t, []policy.Policy{redactWith(func(m *cmf.Message) {
			m.Content[0] = cmf.ToolCall{ToolCallID: "c1", Name: "delete_file", Arguments: json.RawMessage(`{"path":"/tmp/passwd"}`)}
			m.Extensions.Security.Labels = append(m.Extensions.Security.Labels, "rewritten")
		})})
		v, _ := e.Check(context.Background(), check)
		if v.Deny != "" || v.Message == nil || string(v.Message.Content[0].(cmf.ToolCall).Arguments) != `{"path":"/tmp/passwd"}` {
			t.Fatalf("verdict %+v", v)
		}
		if string(check.Message.Content[0].(cmf.ToolCall).Arguments) != `{"path":"/etc/passwd"}` || len(check.Message.Extensions.Security.Labels) != 1 {
			t.Fatal("the policy's copy changed the original")
		}
	})
	for name, c := range map[string]struct {
		change func(m *cmf.Message)
		why    string // in the audit record's reason
	}{
		"an immutable extension changed": {func(m *cmf.Message) { m.Extensions.Request = &cmf.RequestExtension{RequestID: "forged"} }, "immutable extension request"},
		"a label removed":                {func(m *cmf.Message) { m.Extensions.Security.Labels = nil }, "security.labels"},
		"the subject changed":            {func(m *cmf.Message) { m.Extensions.Security.Subject = &cmf.SubjectExtension{ID: "root"} }, "security.subject"},
		"a part added":                   {func(m *cmf.Message) { m.Content = append(m.Content, cmf.Text{Text: "x"}) }, "added or removed parts"},
		"the role changed":               {func(m *cmf.Message) { m.Role = cmf.RoleUser }, "changed the message's role"},
		"the id changed":                 {func(m *cmf.Message) { m.SetID("m2") }, "changed the message's id"},
		"a part's type changed":          {func(m *cmf.Message) { m.Content[0] = cmf.Text{Text: "x"} }, "changed the type of part 0"},
	} {
		change := c.change
		t.Run("refused: "+name, func(t *testing.T) {
			var s sink
			var logs bytes.Buffer
			e := newEngine(t, []policy.Policy{redactWith(change)}, policy.WithAudit(&s),
				policy.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
			v, err := e.Check(context.Background(), callCheck("/etc/passwd"))
			if err != nil || v.Deny != agent.PolicyFailed || v.Message != nil {
				t.Fatalf("verdict %+v, %v", v, err)
			}
			if len(s.records) != 1 || s.records[0].Decision != "error" || !strings.Contains(s.records[0].Reason, c.why) {
				t.Fatalf("audit = %+v, want a reason with %q", s.records, c.why)
			}
			if !strings.Contains(logs.String(), `"decision":"error"`) || !strings.Contains(logs.String(), `"level":"ERROR"`) {
				t.Fatalf("log = %s", logs.String())
			}
		})
	}
}

func TestEngineFailsClosed(t *testing.T) {
	for name, decide := range map[string]func(context.Context, *policy.Input) (policy.Decision, error){
		"error": func(context.Context, *policy.Input) (policy.Decision, error) {
			return policy.Allow(), errors.New("rego: undefined")
		},
		"panic": func(context.Context, *policy.Input) (policy.Decision, error) { panic("boom") },
	} {
		t.Run(name, func(t *testing.T) {
			var s sink
			e := newEngine(t, []policy.Policy{{Name: "p", Decide: decide}}, policy.WithAudit(&s), policy.WithLogger(slog.New(slog.DiscardHandler)))
			v, _ := e.Check(context.Background(), callCheck("/tmp/a"))
			if v.Deny != agent.PolicyFailed || len(s.records) != 1 || s.records[0].Decision != "error" {
				t.Fatalf("verdict %+v, audit %+v", v, s.records)
			}
		})
	}
}

func TestEngineAuditRecord(t *testing.T) {
	var s sink
	var logs bytes.Buffer
	e := newEngine(t, []policy.Policy{{Name: "tmp-only", Points: []agent.Point{agent.PointPreTool}, Decide: func(_ context.Context, in *policy.Input) (policy.Decision, error) {
		return policy.Deny("only under /tmp"), nil
	}}}, policy.WithAudit(&s), policy.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	if _, err := e.Check(context.Background(), callCheck("/etc/passwd")); err != nil {
		t.Fatal(err)
	}
	r := s.records[0]
	if r.Point != agent.PointPreTool || r.Policy != "tmp-only" || r.Decision != "deny" || r.Reason != "only under /tmp" ||
		r.URI != "tool:///delete_file" || r.Subject != "ann" || r.Chat != "chat-1" || r.RequestID != "req-1" || r.Tool != "delete_file" || r.Time.IsZero() {
		t.Fatalf("record = %+v", r)
	}
	var line map[string]any
	if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"msg": "policy decision", "decision": "deny", "policy": "tmp-only", "point": "pre_tool",
		"reason": "only under /tmp", "uri": "tool:///delete_file", "subject": "ann", "chat": "chat-1", "request_id": "req-1"} {
		if line[k] != want {
			t.Errorf("log %s = %v, want %s", k, line[k], want)
		}
	}
}

func TestEngineViewsAreGated(t *testing.T) {
	var without, with *cmf.SubjectExtension
	e := newEngine(t, []policy.Policy{
		{Name: "blind", Decide: func(_ context.Context, in *policy.Input) (policy.Decision, error) {
			without = in.Views[0].Subject()
			return policy.Allow(), nil
		}},
		{Name: "sees", Capabilities: cmf.CapReadSubject | cmf.CapReadRoles, Decide: func(_ context.Context, in *policy.Input) (policy.Decision, error) {
			with = in.Views[0].Subject()
			return policy.Allow(), nil
		}},
	})
	if _, err := e.Check(context.Background(), callCheck("/tmp/a")); err != nil {
		t.Fatal(err)
	}
	if without != nil || with == nil || with.ID != "ann" || !slices.Equal(with.Roles, []string{"staff"}) {
		t.Fatalf("without %+v, with %+v", without, with)
	}
}

func TestEngineRequireApprovalOnlyBeforeATool(t *testing.T) {
	e := newEngine(t, []policy.Policy{{Name: "p", Decide: func(context.Context, *policy.Input) (policy.Decision, error) {
		return policy.RequireApproval("why"), nil
	}}})
	c := callCheck("/tmp/a")
	c.Point = agent.PointOutput
	if v, _ := e.Check(context.Background(), c); v.RequireApproval {
		t.Fatal("approval required outside pre-tool")
	}
}

func TestNewRefusesBadPolicies(t *testing.T) {
	ok := func(context.Context, *policy.Input) (policy.Decision, error) { return policy.Allow(), nil }
	for name, ps := range map[string][]policy.Policy{
		"no name":       {{Decide: ok}},
		"no Decide":     {{Name: "a"}},
		"duplicate":     {{Name: "a", Decide: ok}, {Name: "a", Decide: ok}},
		"unknown point": {{Name: "a", Decide: ok, Points: []agent.Point{9}}},
	} {
		if _, err := policy.New(ps); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
