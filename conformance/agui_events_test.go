package conformance

import (
	"encoding/json"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/protocols/agui"
)

// TestAGUIEventsTheDemoCannotMake: a run the server cancels (for 1.0 and
// pre-1.0 clients), CUSTOM events with and without a value, and two
// interrupts in one run pass the real client's schema and ordering rules;
// see js/agui-events.mjs.
func TestAGUIEventsTheDemoCannotMake(t *testing.T) {
	node := testutil.Node(t)
	testutil.NodeModules(t, "js")
	text := []agent.Event{
		&agent.RunStarted{MessageID: "m1"}, &agent.StepStarted{Step: 1, MessageID: "m1"},
		&agent.PartStarted{Kind: agent.PartText, ID: "p1", MessageID: "m1"},
		&agent.PartDelta{Kind: agent.PartText, ID: "p1", Delta: "Hel"},
	}
	var interrupts []agent.Event
	interrupts = append(interrupts, &agent.RunStarted{MessageID: "m1"}, &agent.StepStarted{Step: 1, MessageID: "m1"})
	for _, id := range []string{"c1", "c2"} {
		args := json.RawMessage(`{"path":"/tmp/` + id + `"}`)
		interrupts = append(interrupts,
			&agent.PartStarted{Kind: agent.PartToolCall, ID: id, ToolName: "delete_file", MessageID: "m1"},
			&agent.PartDelta{Kind: agent.PartToolCall, ID: id, Delta: string(args)},
			&agent.PartEnded{Kind: agent.PartToolCall, ID: id, Part: cmf.ToolCall{ToolCallID: id, Name: "delete_file", Arguments: args}},
			&agent.ApprovalRequested{ToolCallID: id, ToolName: "delete_file", ApprovalID: "a-" + id, Input: args, Signature: "sig" + id})
	}
	interrupts = append(interrupts, &agent.StepFinished{Step: 1, StopReason: cmf.StopPaused}, &agent.RunFinished{StopReason: cmf.StopPaused})

	type testCase struct {
		Name    string         `json:"name"`
		Stream  string         `json:"stream"`
		Legacy  bool           `json:"legacy"`
		Last    map[string]any `json:"last"`
		version string
		events  []agent.Event
	}
	cases := []testCase{
		{Name: "cancelled, 1.0 client", version: "1.0", events: append(text[:4:4], &agent.RunFinished{StopReason: cmf.StopAborted}),
			Last: map[string]any{"type": "RUN_FINISHED", "outcome": map[string]any{"type": "cancelled"}}},
		{Name: "cancelled, pre-1.0 client", Legacy: true, events: append(text[:4:4], &agent.RunFinished{StopReason: cmf.StopAborted}),
			Last: map[string]any{"type": "RUN_ERROR", "code": "cancelled"}},
		{Name: "custom events", version: "1.0", events: []agent.Event{&agent.RunStarted{MessageID: "m1"},
			&agent.Data{Name: "progress", Value: json.RawMessage(`0.5`)}, &agent.Data{Name: "empty"},
			&agent.RunFinished{StopReason: cmf.StopEnd}},
			Last: map[string]any{"type": "RUN_FINISHED"}},
		{Name: "two interrupts", version: "1.0", events: interrupts, Last: map[string]any{"type": "RUN_FINISHED"}},
		{Name: "two interrupts, pre-1.0 client", Legacy: true, events: interrupts, Last: map[string]any{"type": "RUN_FINISHED"}},
	}
	for i := range cases {
		cases[i].Stream = testutil.Encode(agui.New(), &wire.Turn{ChatID: "t1", RunID: "r1", ProtocolVersion: cases[i].version}, cases[i].events...)
	}
	t.Log(runNodeOnJSON(t, node, "agui-events.mjs", cases))
}
