package einoagent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"

	einoagent "github.com/agentui/agentui/adapters/eino"
	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/cmf"
)

type deleteIn struct {
	Path string `json:"path"`
}

// newAgent is an Eino agent over the demo model with delete_file behind
// an approval; runs counts the tool's runs.
func newAgent(t *testing.T, runs *int) *einoagent.Agent {
	t.Helper()
	del, err := utils.InferTool("delete_file", "Delete a file.", func(_ context.Context, in deleteIn) (map[string]string, error) {
		*runs++
		return map[string]string{"deleted": in.Path}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := adk.NewChatModelAgent(context.Background(), &adk.ChatModelAgentConfig{
		Name: "assistant", Description: "test", Model: einoagent.ChatModel(demo.New()),
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{einoagent.NeedsApproval(del)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return einoagent.New(a)
}

func user(text string) cmf.Message {
	m := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: text}}}
	m.SetID("u-" + text)
	return m
}

func collect(t *testing.T, ctx context.Context, a agent.Agent, in *agent.Input) ([]agent.Event, error) {
	t.Helper()
	var out []agent.Event
	for ev, err := range a.Run(ctx, in) {
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
	return out, nil
}

var chat = agent.WithRunInfo(context.Background(), agent.RunInfo{Scope: "alice", ChatID: "c1"})

// An interrupt is an approval request with the call's arguments, and the
// run pauses; the answer resumes it from the checkpoint, and the stream
// stays balanced both times. The recorded messages carry on as the loop's
// would.
func TestInterruptIsAnApproval(t *testing.T) {
	runs := 0
	a := newAgent(t, &runs)
	events, err := collect(t, chat, a, &agent.Input{Messages: []cmf.Message{user("delete /tmp/x.txt")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := agent.Balance(events, true); len(got) != len(events) {
		t.Fatalf("the stream needed balancing: %d events, %d balanced", len(events), len(got))
	}
	var asked *agent.ApprovalRequested
	var finished *agent.RunFinished
	for _, ev := range events {
		switch e := ev.(type) {
		case *agent.ApprovalRequested:
			asked = e
		case *agent.RunFinished:
			finished = e
		}
	}
	if asked == nil || asked.ToolName != "delete_file" || string(asked.Input) != `{"path":"/tmp/x.txt"}` || runs != 0 {
		t.Fatalf("approval asked: %+v, %d runs", asked, runs)
	}
	if finished == nil || finished.StopReason != cmf.StopPaused || len(finished.Pending) != 1 || finished.Pending[0].ToolCallID != asked.ToolCallID {
		t.Fatalf("the run's end: %+v", finished)
	}
	rec := agent.NewRecorder()
	for _, ev := range events {
		rec.Add(ev)
	}
	history := append([]cmf.Message{user("delete /tmp/x.txt")}, rec.Messages()...)

	// Another agent value over the same store would do as well: the
	// checkpoint is all a resume needs.
	events, err = collect(t, chat, a, &agent.Input{History: history, Resume: []agent.Resolution{{ToolCallID: asked.ToolCallID, Kind: agent.Approve}}})
	if err != nil {
		t.Fatal(err)
	}
	var result *agent.ToolResult
	var text strings.Builder
	for _, ev := range events {
		switch e := ev.(type) {
		case *agent.ToolResult:
			result = e
		case *agent.PartDelta:
			if e.Kind == agent.PartText {
				text.WriteString(e.Delta)
			}
		}
	}
	if result == nil || !result.Approved || result.ToolCallID != asked.ToolCallID || string(result.Output) != `{"deleted":"/tmp/x.txt"}` || runs != 1 {
		t.Fatalf("the resumed call: %+v, %d runs", result, runs)
	}
	if text.String() != "Deleted /tmp/x.txt." {
		t.Fatalf("the answer: %q", text.String())
	}
}

// What cannot work says so: a run outside agentui's handlers (no chat),
// per-run tools, and a resume whose checkpoint is gone.
func TestRefusals(t *testing.T) {
	runs := 0
	a := newAgent(t, &runs)
	for name, c := range map[string]struct {
		ctx  context.Context
		in   *agent.Input
		want string
	}{
		"no chat":       {context.Background(), &agent.Input{Messages: []cmf.Message{user("hi")}}, "no chat id"},
		"per-run tools": {chat, &agent.Input{Messages: []cmf.Message{user("hi")}, Tools: []agent.Tool{{Name: "x"}}}, "per-run and client tools"},
		"no checkpoint": {agent.WithRunInfo(context.Background(), agent.RunInfo{ChatID: "other"}), &agent.Input{Resume: []agent.Resolution{{ToolCallID: "c", Kind: agent.Approve}}}, "no interrupted run of this chat"},
		"client tools":  {chat, &agent.Input{Messages: []cmf.Message{user("hi")}, ClientTools: []agent.ToolSpec{{Name: "x"}}}, "per-run and client tools"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := collect(t, c.ctx, a, c.in)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%v, want %q", err, c.want)
			}
		})
	}
}

// A stopped run (its context cancelled) ends stopped, promptly, with what
// it said so far ended whole.
func TestCancelledRunEndsStopped(t *testing.T) {
	runs := 0
	a := newAgent(t, &runs)
	ctx, cancel := context.WithCancel(chat)
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
	last, ok := events[len(events)-1].(*agent.RunFinished)
	if !ok || last.StopReason != cmf.StopAborted {
		b, _ := json.Marshal(events[len(events)-1])
		t.Fatalf("the run ended with %T %s", events[len(events)-1], b)
	}
	if got := agent.Balance(events, true); len(got) != len(events) {
		t.Fatalf("the stream needed balancing")
	}
}
