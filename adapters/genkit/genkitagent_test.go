package genkitagent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	genkitagent "github.com/agentui/agentui/adapters/genkit"
	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/cmf"
)

type deleteIn struct {
	Path string `json:"path"`
}

// g is one Genkit for the package's tests (it registers by name once).
var (
	g    = genkit.Init(context.Background())
	runs int
	a    = func() *genkitagent.Agent {
		del := genkit.DefineTool(g, "delete_file", "Delete a file.", func(tc *ai.ToolContext, in deleteIn) (map[string]string, error) {
			if err := genkitagent.Approval(tc); err != nil {
				return nil, err
			}
			runs++
			return map[string]string{"deleted": in.Path}, nil
		})
		a, err := genkitagent.New(g, genkitagent.Config{Model: genkitagent.DefineModel(g, "test/demo", demo.New()), Tools: []ai.ToolRef{del}})
		if err != nil {
			panic(err)
		}
		return a
	}()
)

func user(text string) cmf.Message {
	m := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: text}}}
	m.SetID("u-" + text)
	return m
}

func collect(ctx context.Context, in *agent.Input) ([]agent.Event, error) {
	var out []agent.Event
	for ev, err := range a.Run(ctx, in) {
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
	return out, nil
}

// An interrupt is an approval request with the call's arguments, and the
// run pauses; a denial resumes it without running the tool, an approval
// runs it, both from the recorded conversation alone.
func TestInterruptIsAnApproval(t *testing.T) {
	ctx := context.Background()
	ask := func() ([]cmf.Message, *agent.ApprovalRequested) {
		events, err := collect(ctx, &agent.Input{Messages: []cmf.Message{user("delete /tmp/x.txt")}})
		if err != nil {
			t.Fatal(err)
		}
		if got := agent.Balance(events, true); len(got) != len(events) {
			t.Fatalf("the stream needed balancing")
		}
		var asked *agent.ApprovalRequested
		rec := agent.NewRecorder()
		for _, ev := range events {
			rec.Add(ev)
			if e, ok := ev.(*agent.ApprovalRequested); ok {
				asked = e
			}
		}
		last, _ := events[len(events)-1].(*agent.RunFinished)
		if asked == nil || string(asked.Input) != `{"path":"/tmp/x.txt"}` || last == nil || last.StopReason != cmf.StopPaused || len(last.Pending) != 1 {
			t.Fatalf("approval asked: %+v, the end %+v", asked, events[len(events)-1])
		}
		return append([]cmf.Message{user("delete /tmp/x.txt")}, rec.Messages()...), asked
	}
	answer := func(history []cmf.Message, r agent.Resolution) (string, *agent.ToolResult) {
		events, err := collect(ctx, &agent.Input{History: history, Resume: []agent.Resolution{r}})
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		var result *agent.ToolResult
		for _, ev := range events {
			switch e := ev.(type) {
			case *agent.PartDelta:
				if e.Kind == agent.PartText {
					text.WriteString(e.Delta)
				}
			case *agent.ToolResult:
				result = e
			}
		}
		return text.String(), result
	}
	before := runs
	history, asked := ask()
	text, result := answer(history, agent.Resolution{ToolCallID: asked.ToolCallID, Kind: agent.Deny, Reason: "no"})
	if text != "Okay, I did not delete /tmp/x.txt (reason: no)." || result == nil || !result.Denied || runs != before {
		t.Fatalf("denied: %q %+v, %d runs", text, result, runs-before)
	}
	history, asked = ask()
	text, result = answer(history, agent.Resolution{ToolCallID: asked.ToolCallID, Kind: agent.Approve, EditedArgs: []byte(`{"path":"/tmp/y.txt"}`)})
	if text != "Deleted /tmp/y.txt." || result == nil || !result.Approved || string(result.Output) != `{"deleted":"/tmp/y.txt"}` || runs != before+1 {
		t.Fatalf("approved with edited arguments: %q %+v, %d runs", text, result, runs-before)
	}
}

// What cannot work says so.
func TestRefusals(t *testing.T) {
	if _, err := genkitagent.New(g, genkitagent.Config{}); err == nil {
		t.Error("an agent without a model")
	}
	_, err := collect(context.Background(), &agent.Input{Messages: []cmf.Message{user("hi")}, ClientTools: []agent.ToolSpec{{Name: "x"}}})
	if err == nil || !strings.Contains(err.Error(), "per-run and client tools") {
		t.Errorf("client tools: %v", err)
	}
	_, err = collect(context.Background(), &agent.Input{Messages: []cmf.Message{user("hi")}, Resume: []agent.Resolution{{ToolCallID: "c", Kind: agent.Approve}}})
	if err == nil || !strings.Contains(err.Error(), "no paused reply") {
		t.Errorf("a resume of nothing: %v", err)
	}
}

// A stopped run (its context cancelled) ends stopped, promptly.
func TestCancelledRunEndsStopped(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var events []agent.Event
	start := time.Now()
	for ev, err := range a.Run(ctx, &agent.Input{Messages: []cmf.Message{user("think: wait 60000 ms")}}) {
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
		if d, ok := ev.(*agent.PartDelta); ok && d.Kind == agent.PartThinking && strings.HasSuffix(d.Delta, "ms") {
			cancel()
		}
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("the stopped run took %s", d)
	}
	if last, ok := events[len(events)-1].(*agent.RunFinished); !ok || last.StopReason != cmf.StopAborted {
		t.Fatalf("the run ended with %#v", events[len(events)-1])
	}
	if got := agent.Balance(events, true); len(got) != len(events) {
		t.Fatalf("the stream needed balancing")
	}
}
