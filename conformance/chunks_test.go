package conformance

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/protocols/vercelai"
)

// TestVercelChunksTheDemoCannotMake: the chunk kinds and edge cases the
// demo model never produces (input and output errors, null input and
// output, data parts, every finish reason, abort) pass the real AI SDK's
// chunk schema and rebuild into the expected message; see js/chunks.mjs.
func TestVercelChunksTheDemoCannotMake(t *testing.T) {
	node := testutil.Node(t)
	testutil.NodeModules(t, "js")
	call := func(id, name, args string) cmf.ToolCall {
		tc := cmf.ToolCall{ToolCallID: id, Name: name}
		if args != "" {
			tc.Arguments = json.RawMessage(args)
		}
		return tc
	}
	step := func(stop cmf.StopReason, events ...agent.Event) []agent.Event {
		all := []agent.Event{&agent.RunStarted{MessageID: "m1"}, &agent.StepStarted{Step: 1}}
		return append(append(all, events...), &agent.StepFinished{Step: 1, StopReason: stop}, &agent.RunFinished{StopReason: stop})
	}
	type testCase struct {
		Name   string   `json:"name"`
		Stream string   `json:"stream"`
		Parts  []string `json:"parts"`
		events []agent.Event
	}
	cases := []testCase{
		{Name: "tool input error", Parts: []string{"step-start", "tool-get_weather:output-error"}, events: step(cmf.StopEnd,
			&agent.PartStarted{Kind: agent.PartToolCall, ID: "c1", ToolName: "get_weather"},
			&agent.PartDelta{Kind: agent.PartToolCall, ID: "c1", Delta: `{"city":1}`},
			&agent.PartEnded{Kind: agent.PartToolCall, ID: "c1", Part: call("c1", "get_weather", `{"city":1}`), InputError: "city: expected string"},
		)},
		{Name: "tool output error", Parts: []string{"step-start", "tool-get_weather:output-error"}, events: step(cmf.StopEnd,
			&agent.PartEnded{Kind: agent.PartToolCall, ID: "c1", Part: call("c1", "get_weather", `{}`)},
			&agent.ToolResult{ToolCallID: "c1", ToolName: "get_weather", IsError: true, Output: json.RawMessage(`"service down"`)},
		)},
		{Name: "null input and output", Parts: []string{"step-start", "tool-noop:output-available"}, events: step(cmf.StopEnd,
			&agent.PartEnded{Kind: agent.PartToolCall, ID: "c1", Part: call("c1", "noop", "")},
			&agent.ToolResult{ToolCallID: "c1", ToolName: "noop"},
		)},
		{Name: "data parts and state", Parts: []string{"step-start", "data-weather", "data-empty"}, events: step(cmf.StopEnd,
			&agent.Data{Name: "weather", ID: "d1", Value: json.RawMessage(`{"temp":21}`)},
			&agent.Data{Name: "progress", Value: json.RawMessage(`0.5`), Transient: true},
			&agent.Data{Name: "empty"},
			&agent.StateSnapshot{State: json.RawMessage(`{"a":1}`)},
			&agent.StateDelta{Patch: json.RawMessage(`[{"op":"add","path":"/b","value":2}]`)},
		)},
		{Name: "aborted mid-text", Parts: []string{"step-start", "text"}, events: step(cmf.StopAborted,
			&agent.PartStarted{Kind: agent.PartText, ID: "t1"},
			&agent.PartDelta{Kind: agent.PartText, ID: "t1", Delta: "Hel"},
		)},
	}
	for _, stop := range []cmf.StopReason{cmf.StopMaxTokens, cmf.StopGuardrail, cmf.StopCall, cmf.StopError, "something_new"} {
		cases = append(cases, testCase{Name: "finish " + string(stop), Parts: []string{"step-start", "text"}, events: step(stop,
			&agent.PartStarted{Kind: agent.PartText, ID: "t1"},
			&agent.PartDelta{Kind: agent.PartText, ID: "t1", Delta: "Hi"},
			&agent.PartEnded{Kind: agent.PartText, ID: "t1", Part: cmf.Text{Text: "Hi"}},
		)})
	}
	for i := range cases {
		cases[i].Stream = testutil.Encode(vercelai.New(), &wire.Turn{ChatID: "c", Intent: wire.Submit}, cases[i].events...)
	}
	t.Log(runNodeOnJSON(t, node, "chunks.mjs", cases))
}

// runNodeOnJSON writes v to a JSON file and runs script in js/ on it.
func runNodeOnJSON(t *testing.T, node, script string, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "input.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return runNode(t, node, nil, script, file)
}
