package agent

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentui/agentui/cmf"
)

// funcGuard guards the points it has a function for, and records what it
// was asked.
type funcGuard struct {
	mu     sync.Mutex
	at     map[Point]func(c *Check) (Verdict, error)
	checks []*Check
}

func (g *funcGuard) Guards(p Point) bool { return g.at[p] != nil }

func (g *funcGuard) Check(_ context.Context, c *Check) (Verdict, error) {
	g.mu.Lock()
	g.checks = append(g.checks, c)
	g.mu.Unlock()
	return g.at[c.Point](c)
}

func (g *funcGuard) seen(p Point) []*Check {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []*Check
	for _, c := range g.checks {
		if c.Point == p {
			out = append(out, c)
		}
	}
	return out
}

func argsOf(c *Check) string { return string(c.Message.Content[0].(cmf.ToolCall).Arguments) }

func TestGuardPreTool(t *testing.T) {
	del := concat(toolCall("c1", "delete_file", `{"path":"/etc/passwd"}`), []Chunk{finish(cmf.StopCall)})
	weather := concat(toolCall("c1", "get_weather", `{"city":"Oslo"}`), []Chunk{finish(cmf.StopCall)})
	t.Run("deny: no approval asked, never runs, the model is told", func(t *testing.T) {
		var deleted atomic.Int32
		m := &scripted{replies: []reply{{chunks: del}, {chunks: text("ok")}}}
		g := &funcGuard{at: map[Point]func(*Check) (Verdict, error){PointPreTool: func(c *Check) (Verdict, error) {
			if strings.HasPrefix(argsOf(c), `{"path":"/tmp/`) {
				return Verdict{}, nil
			}
			return Verdict{Deny: "files may be deleted only under /tmp", Labels: []string{"blocked"}}, nil
		}}}
		events, err := collect(t, newLoop(t, m, &deleted), context.Background(), &Input{Messages: []cmf.Message{userMsg("delete")}, Guard: g})
		if err != nil {
			t.Fatal(err)
		}
		if len(all[*ApprovalRequested](events)) != 0 || deleted.Load() != 0 {
			t.Fatal("a denied call asked for approval or ran")
		}
		r := last[*ToolResult](t, events)
		if !r.IsError || r.ErrorText() != "This tool call was denied by policy: files may be deleted only under /tmp" {
			t.Fatalf("result = %s", r.Output)
		}
		var ended *PartEnded
		for _, e := range all[*PartEnded](events) {
			if e.Kind == PartToolCall {
				ended = e
			}
		}
		if !slices.Equal(ended.Labels, []string{"blocked"}) {
			t.Fatalf("call labels = %v", ended.Labels)
		}
		if got := m.requests[1].Messages[len(m.requests[1].Messages)-1].Content[0].(cmf.ToolResult); !strings.Contains(string(got.Content), "denied by policy") {
			t.Fatalf("the model saw %s", got.Content)
		}
	})
	t.Run("require approval, then the approved call runs", func(t *testing.T) {
		m := &scripted{replies: []reply{{chunks: weather}, {chunks: text("Sunny.")}}}
		g := &funcGuard{at: map[Point]func(*Check) (Verdict, error){PointPreTool: func(*Check) (Verdict, error) {
			return Verdict{RequireApproval: true}, nil
		}}}
		l := newLoop(t, m, nil)
		in := &Input{Messages: []cmf.Message{userMsg("weather")}, Guard: g}
		events, err := collect(t, l, context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		ask := last[*ApprovalRequested](t, events)
		if fin := last[*RunFinished](t, events); fin.StopReason != cmf.StopPaused || ask.ToolName != "get_weather" || len(all[*ToolResult](events)) != 0 {
			t.Fatalf("paused = %+v, asked %+v", fin, ask)
		}
		next := continueFrom(in, events, Resolution{ToolCallID: "c1", Kind: Approve})
		next.Guard = g
		events, err = collect(t, l, context.Background(), next)
		if err != nil {
			t.Fatal(err)
		}
		if r := all[*ToolResult](events); len(r) != 1 || r[0].IsError || !r[0].Approved || !strings.Contains(string(r[0].Output), "sunny") {
			t.Fatalf("results = %+v", r)
		}
	})
	t.Run("redact changes the arguments the call runs with", func(t *testing.T) {
		m := &scripted{replies: []reply{{chunks: weather}, {chunks: text("ok")}}}
		g := &funcGuard{at: map[Point]func(*Check) (Verdict, error){PointPreTool: func(c *Check) (Verdict, error) {
			r := *c.Message
			r.Content = []cmf.Part{cmf.ToolCall{ToolCallID: "c1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Bergen"}`)}}
			return Verdict{Message: &r}, nil
		}}}
		events, err := collect(t, newLoop(t, m, nil), context.Background(), &Input{Messages: []cmf.Message{userMsg("w")}, Guard: g})
		if err != nil {
			t.Fatal(err)
		}
		var call cmf.ToolCall
		for _, e := range all[*PartEnded](events) {
			if tc, ok := e.Part.(cmf.ToolCall); ok {
				call = tc
			}
		}
		if string(call.Arguments) != `{"city":"Bergen"}` || !strings.Contains(string(last[*ToolResult](t, events).Output), "Bergen") {
			t.Fatalf("call %s, result %s", call.Arguments, last[*ToolResult](t, events).Output)
		}
	})
	t.Run("the approver's edited arguments are checked too", func(t *testing.T) {
		var deleted atomic.Int32
		m := &scripted{replies: []reply{{chunks: concat(toolCall("c1", "delete_file", `{"path":"/tmp/a"}`), []Chunk{finish(cmf.StopCall)})}, {chunks: text("ok")}}}
		g := &funcGuard{at: map[Point]func(*Check) (Verdict, error){PointPreTool: func(c *Check) (Verdict, error) {
			if strings.HasPrefix(argsOf(c), `{"path":"/tmp/`) {
				return Verdict{}, nil
			}
			return Verdict{Deny: "only /tmp"}, nil
		}}}
		l := newLoop(t, m, &deleted)
		in := &Input{Messages: []cmf.Message{userMsg("delete")}, Guard: g}
		events, err := collect(t, l, context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		next := continueFrom(in, events, Resolution{ToolCallID: "c1", Kind: Approve, EditedArgs: json.RawMessage(`{"path":"/etc/passwd"}`)})
		next.Guard = g
		events, err = collect(t, l, context.Background(), next)
		if err != nil {
			t.Fatal(err)
		}
		if r := last[*ToolResult](t, events); !r.IsError || !strings.Contains(r.ErrorText(), "only /tmp") || deleted.Load() != 0 {
			t.Fatalf("result %s, deleted %d", r.Output, deleted.Load())
		}
	})
	t.Run("a failing guard fails closed", func(t *testing.T) {
		m := &scripted{replies: []reply{{chunks: weather}, {chunks: text("ok")}}}
		g := &funcGuard{at: map[Point]func(*Check) (Verdict, error){PointPreTool: func(*Check) (Verdict, error) {
			return Verdict{}, errors.New("engine down")
		}}}
		events, err := collect(t, newLoop(t, m, nil), context.Background(), &Input{Messages: []cmf.Message{userMsg("w")}, Guard: g})
		if err != nil {
			t.Fatal(err)
		}
		if r := last[*ToolResult](t, events); !r.IsError || !strings.Contains(r.ErrorText(), PolicyFailed) || strings.Contains(r.ErrorText(), "engine down") {
			t.Fatalf("result = %s", r.Output)
		}
	})
}

func TestGuardCheckCarriesContextAndProfiles(t *testing.T) {
	weather := concat(toolCall("c1", "get_weather", `{"city":"Oslo"}`), []Chunk{finish(cmf.StopCall)})
	m := &scripted{replies: []reply{{chunks: weather}, {chunks: text("ok")}}}
	g := &funcGuard{at: map[Point]func(*Check) (Verdict, error){
		PointPreTool:  func(*Check) (Verdict, error) { return Verdict{}, nil },
		PointPostTool: func(*Check) (Verdict, error) { return Verdict{Labels: []string{"checked"}}, nil },
	}}
	tools := testTools(new(atomic.Int32))
	tools[0].Object = &cmf.ObjectSecurityProfile{ManagedBy: "weather-team", Permissions: []string{"weather:read"}}
	tools[0].Data = &cmf.DataPolicy{ApplyLabels: []string{"external"}}
	l, err := New(m, WithTools(tools...))
	if err != nil {
		t.Fatal(err)
	}
	subject := &cmf.SubjectExtension{ID: "ann", Type: cmf.SubjectUser, Roles: []string{"admin"}}
	ctxExt := &cmf.Extensions{Request: &cmf.RequestExtension{RequestID: "r1"}, Security: &cmf.SecurityExtension{Subject: subject}}
	events, err := collect(t, l, context.Background(), &Input{Messages: []cmf.Message{userMsg("w")}, Guard: g, Extensions: ctxExt})
	if err != nil {
		t.Fatal(err)
	}
	pre := g.seen(PointPreTool)[0]
	views, _ := pre.Message.Views(cmf.CapReadObjects | cmf.CapReadSubject)
	if o := views[0].Object(); o == nil || o.ManagedBy != "weather-team" || views[0].Subject().ID != "ann" || views[0].RequestID() != "r1" {
		t.Fatalf("pre-tool view: object %+v", o)
	}
	if views, _ := pre.Message.Views(0); views[0].Object() != nil || views[0].Subject() != nil {
		t.Fatal("gated values visible without the capability")
	}
	post := g.seen(PointPostTool)[0]
	views, _ = post.Message.Views(cmf.CapReadData | cmf.CapReadLabels)
	if d := views[0].DataPolicy(); d == nil || !views[0].HasLabel("external") || post.Tool != "get_weather" {
		t.Fatalf("post-tool view: data %+v labels %v", d, views[0].Labels())
	}
	if r := last[*ToolResult](t, events); !slices.Equal(r.Labels, []string{"external", "checked"}) {
		t.Fatalf("result labels = %v", r.Labels)
	}
	if ctxExt.Security.Labels != nil {
		t.Fatal("the run's context was changed")
	}
}

func TestGuardPostTool(t *testing.T) {
	weather := concat(toolCall("c1", "get_weather", `{"city":"Oslo"}`), []Chunk{finish(cmf.StopCall)})
	for _, tc := range []struct {
		name string
		v    func(c *Check) Verdict
		want string
	}{
		{"deny", func(*Check) Verdict { return Verdict{Deny: "no weather today"} }, `"The result was withheld by policy: no weather today"`},
		{"redact", func(c *Check) Verdict {
			r := *c.Message
			r.Content = []cmf.Part{cmf.ToolResult{ToolCallID: "c1", ToolName: "get_weather", Content: json.RawMessage(`{"city":"[redacted]"}`)}}
			return Verdict{Message: &r}
		}, `{"city":"[redacted]"}`},
		{"allow", func(*Check) Verdict { return Verdict{} }, `{"city":"Oslo","forecast":"sunny"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &scripted{replies: []reply{{chunks: weather}, {chunks: text("ok")}}}
			g := &funcGuard{at: map[Point]func(*Check) (Verdict, error){PointPostTool: func(c *Check) (Verdict, error) { return tc.v(c), nil }}}
			events, err := collect(t, newLoop(t, m, nil), context.Background(), &Input{Messages: []cmf.Message{userMsg("w")}, Guard: g})
			if err != nil {
				t.Fatal(err)
			}
			if r := last[*ToolResult](t, events); string(r.Output) != tc.want {
				t.Fatalf("result = %s", r.Output)
			}
			seen := m.requests[1].Messages[len(m.requests[1].Messages)-1].Content[0].(cmf.ToolResult)
			if string(seen.Content) != tc.want {
				t.Fatalf("the model saw %s", seen.Content)
			}
		})
	}
}

func TestGuardOutput(t *testing.T) {
	for _, tc := range []struct {
		name   string
		v      func(c *Check) Verdict
		want   string
		labels []string
	}{
		{"redact", func(c *Check) Verdict {
			r := *c.Message
			r.Content = []cmf.Part{cmf.Text{Text: strings.ReplaceAll(c.Message.Text(), "4111", "****")}}
			return Verdict{Message: &r, Labels: []string{"PII"}}
		}, "card ****", []string{"PII"}},
		{"deny", func(*Check) Verdict { return Verdict{Deny: "off topic"} }, "[Withheld by policy: off topic]", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &scripted{replies: []reply{{chunks: text("card ", "4111")}}}
			g := &funcGuard{at: map[Point]func(*Check) (Verdict, error){PointOutput: func(c *Check) (Verdict, error) { return tc.v(c), nil }}}
			events, err := collect(t, newLoop(t, m, nil), context.Background(), &Input{Messages: []cmf.Message{userMsg("w")}, Guard: g})
			if err != nil {
				t.Fatal(err)
			}
			deltas := all[*PartDelta](events)
			if len(deltas) != 1 || deltas[0].Delta != tc.want {
				t.Fatalf("deltas = %+v (the text must stream only once decided)", deltas)
			}
			ended := last[*PartEnded](t, events)
			if ended.Part.(cmf.Text).Text != tc.want || !slices.Equal(ended.Labels, tc.labels) {
				t.Fatalf("ended = %+v", ended)
			}
			rec := NewRecorder()
			for _, ev := range events {
				rec.Add(ev)
			}
			views, _ := rec.Messages()[0].Views(cmf.CapReadLabels)
			if !slices.Equal(views[0].Labels(), tc.labels) && len(tc.labels) > 0 {
				t.Fatalf("recorded labels = %v", views[0].Labels())
			}
		})
	}
	t.Run("unguarded text streams as it comes", func(t *testing.T) {
		m := &scripted{replies: []reply{{chunks: text("a", "b", "c")}}}
		g := &funcGuard{at: map[Point]func(*Check) (Verdict, error){PointPreTool: func(*Check) (Verdict, error) { return Verdict{}, nil }}}
		events, _ := collect(t, newLoop(t, m, nil), context.Background(), &Input{Messages: []cmf.Message{userMsg("w")}, Guard: g})
		if len(all[*PartDelta](events)) != 3 {
			t.Fatal("text was held back without an output guard")
		}
	})
}

func TestRecorderStamp(t *testing.T) {
	weather := concat(toolCall("c1", "get_weather", `{"city":"Oslo"}`), []Chunk{finish(cmf.StopCall)})
	m := &scripted{replies: []reply{{chunks: weather}, {chunks: text("ok")}}}
	events, err := collect(t, newLoop(t, m, nil), context.Background(), &Input{Messages: []cmf.Message{userMsg("w")}})
	if err != nil {
		t.Fatal(err)
	}
	subject := &cmf.SubjectExtension{ID: "ann", Type: cmf.SubjectUser}
	turn := 3
	ctxExt := &cmf.Extensions{Request: &cmf.RequestExtension{RequestID: "r1"}, Agent: &cmf.AgentExtension{ConversationID: "chat", Turn: &turn},
		Security: &cmf.SecurityExtension{Subject: subject}}
	rec := NewRecorder()
	rec.Stamp(ctxExt, "u1")
	for _, ev := range events {
		rec.Add(ev)
	}
	msgs := rec.Messages()
	if len(msgs) != 3 {
		t.Fatalf("%d messages", len(msgs))
	}
	parent := "u1"
	for i, want := range []string{"model", "tool", "model"} {
		p := msgs[i].Extensions.Provenance
		if p.Source != want || p.ParentID != parent || p.MessageID != msgs[i].ID() {
			t.Fatalf("message %d provenance = %+v", i, p)
		}
		parent = p.MessageID
		views, _ := msgs[i].Views(cmf.CapReadSubject | cmf.CapReadAgent)
		if views[0].RequestID() != "r1" || views[0].ConversationID() != "chat" || views[0].Subject().ID != "ann" {
			t.Fatalf("message %d context missing", i)
		}
		if views, _ := msgs[i].Views(0); views[0].Subject() != nil || views[0].ConversationID() != "" {
			t.Fatalf("message %d: gated values visible without the capability", i)
		}
	}
	if msgs[0].Extensions.Completion == nil {
		t.Fatal("stamping lost the completion")
	}
}
