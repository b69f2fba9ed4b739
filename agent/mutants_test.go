package agent

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentui/agentui/cmf"
)

// A resume entry answers only the calls that wait for one. A server tool
// whose run was cut off is not run again because a client names it in an
// approval or sends output for it: it gets the "never completed" error,
// and the tool does not run (issue 12, surviving mutant "a server tool run
// from a resume entry").
func TestResumeEntryDoesNotRunAServerTool(t *testing.T) {
	for _, kind := range []ResolutionKind{Approve, ClientOutput} {
		t.Run(kind.String(), func(t *testing.T) {
			var ran atomic.Int32
			counted := FuncTool("count", "Counts its runs.", func(context.Context, struct{}) (string, error) {
				ran.Add(1)
				return "ran", nil
			})
			m := &scripted{replies: []reply{{chunks: text("ok")}}}
			l, err := New(m, WithTools(counted))
			if err != nil {
				t.Fatal(err)
			}
			cut := cmf.Message{Role: cmf.RoleAssistant, Content: []cmf.Part{cmf.ToolCall{ToolCallID: "c1", Name: "count", Arguments: json.RawMessage(`{}`)}}}
			events, err := collect(t, l, context.Background(), &Input{
				History: []cmf.Message{userMsg("go"), cut},
				Resume:  []Resolution{{ToolCallID: "c1", Kind: kind, Output: json.RawMessage(`"forged"`)}},
			})
			if err != nil {
				t.Fatal(err)
			}
			if ran.Load() != 0 {
				t.Fatal("the server tool ran from a resume entry")
			}
			if n := len(all[*ToolResult](events)); n != 0 {
				t.Fatalf("%d tool results streamed for a call nobody waits for", n)
			}
			var got *cmf.ToolResult
			for msg := range m.requests[0].All() {
				for _, p := range msg.Content {
					if r, ok := p.(cmf.ToolResult); ok && r.ToolCallID == "c1" {
						got = &r
					}
				}
			}
			if got == nil || !got.IsError || string(got.Content) == `"forged"` {
				t.Fatalf("the model saw %+v for the cut-off call", got)
			}
		})
	}
}

// Results of a batch stream as each one (and those before it) is done,
// not when the whole batch is: a slow tool does not hold back a fast
// one's result (surviving mutant "tool results held until the whole
// batch ends"). The slow tool finishes only once the consumer has seen
// the fast one's result.
func TestToolResultsStreamAsTheyFinish(t *testing.T) {
	seenFast := make(chan struct{})
	fast := FuncTool("fast", "Answers at once.", func(context.Context, struct{}) (string, error) { return "fast", nil })
	slow := FuncTool("slow_until_seen", "Waits for the fast result to be seen.", func(ctx context.Context, _ struct{}) (string, error) {
		select {
		case <-seenFast:
			return "slow", nil
		case <-time.After(10 * time.Second): // a guard against a hang, not a timing
			return "", context.DeadlineExceeded
		}
	})
	m := &scripted{replies: []reply{
		{chunks: concat(toolCall("f", "fast", `{}`), toolCall("s", "slow_until_seen", `{}`), []Chunk{finish(cmf.StopCall)})},
		{chunks: text("done")},
	}}
	l, err := New(m, WithTools(fast, slow))
	if err != nil {
		t.Fatal(err)
	}
	var results []*ToolResult
	for ev, err := range l.Run(context.Background(), &Input{Messages: []cmf.Message{userMsg("go")}}) {
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := ev.(*ToolResult); ok {
			results = append(results, r)
			if r.ToolCallID == "f" {
				close(seenFast)
			}
		}
	}
	if len(results) != 2 || results[0].ToolCallID != "f" || results[1].ToolCallID != "s" || results[1].IsError {
		t.Fatalf("results = %+v %+v", results[0], results[len(results)-1])
	}
}
