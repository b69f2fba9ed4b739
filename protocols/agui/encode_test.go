package agui_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/protocols/agui"
)

var timestampRe = regexp.MustCompile(`"timestamp":\d+`)

// encodeRun encodes events as one run; timestamps become 0.
func encodeRun(version string, events ...agent.Event) []string {
	body := testutil.Encode(agui.New(), &wire.Turn{ChatID: "t1", RunID: "r1", ProtocolVersion: version}, events...)
	var out []string
	for _, frame := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		out = append(out, timestampRe.ReplaceAllString(strings.TrimPrefix(frame, "data: "), `"timestamp":0`))
	}
	return out
}

// A run the server cancels ends as the client's version expects: a
// cancelled outcome for 1.0 clients, RUN_ERROR for older ones (which
// reject the outcome), with everything open closed first.
func TestEncoderCancelledRun(t *testing.T) {
	events := []agent.Event{
		&agent.RunStarted{MessageID: "m1"}, &agent.StepStarted{Step: 1, MessageID: "m1"},
		&agent.PartStarted{Kind: agent.PartText, ID: "p1", MessageID: "m1"},
		&agent.PartDelta{Kind: agent.PartText, ID: "p1", Delta: "Hel"},
		&agent.RunFinished{StopReason: cmf.StopAborted},
	}
	for version, want := range map[string][]string{
		"1.0": {
			`{"type":"TEXT_MESSAGE_END","timestamp":0,"messageId":"m1"}`,
			`{"type":"STEP_FINISHED","timestamp":0,"stepName":"step-1"}`,
			`{"type":"RUN_FINISHED","timestamp":0,"threadId":"t1","runId":"r1","outcome":{"type":"cancelled"}}`,
		},
		"": {
			`{"type":"TEXT_MESSAGE_END","timestamp":0,"messageId":"m1"}`,
			`{"type":"STEP_FINISHED","timestamp":0,"stepName":"step-1"}`,
			`{"type":"RUN_ERROR","timestamp":0,"message":"The run was cancelled.","code":"cancelled"}`,
		},
	} {
		got := encodeRun(version, events...)
		if tail := got[len(got)-3:]; strings.Join(tail, "\n") != strings.Join(want, "\n") {
			t.Errorf("protocol %q ends\n%s\nwant\n%s", version, strings.Join(tail, "\n"), strings.Join(want, "\n"))
		}
	}
}

// Data events are CUSTOM events whose value is always present, null when
// the agent gave none.
func TestEncoderCustomEvents(t *testing.T) {
	got := encodeRun("1.0", &agent.RunStarted{MessageID: "m1"},
		&agent.Data{Name: "progress", Value: json.RawMessage(`0.5`), Transient: true},
		&agent.Data{Name: "empty"},
		&agent.RunFinished{StopReason: cmf.StopEnd})
	want := []string{
		`{"type":"CUSTOM","timestamp":0,"name":"progress","value":0.5}`,
		`{"type":"CUSTOM","timestamp":0,"name":"empty","value":null}`,
	}
	if len(got) != 4 || got[1] != want[0] || got[2] != want[1] {
		t.Fatalf("got\n%s", strings.Join(got, "\n"))
	}
}

// Two approvals asked in one run are two interrupts in one outcome, each
// with its own id.
func TestEncoderTwoInterrupts(t *testing.T) {
	var events []agent.Event
	events = append(events, &agent.RunStarted{MessageID: "m1"}, &agent.StepStarted{Step: 1, MessageID: "m1"})
	for _, id := range []string{"c1", "c2"} {
		args := json.RawMessage(`{"path":"/tmp/` + id + `"}`)
		events = append(events,
			&agent.PartStarted{Kind: agent.PartToolCall, ID: id, ToolName: "delete_file", MessageID: "m1"},
			&agent.PartEnded{Kind: agent.PartToolCall, ID: id, Part: cmf.ToolCall{ToolCallID: id, Name: "delete_file", Arguments: args}},
			&agent.ApprovalRequested{ToolCallID: id, ToolName: "delete_file", ApprovalID: "a-" + id, Input: args, Signature: "sig" + id})
	}
	events = append(events, &agent.StepFinished{Step: 1, StopReason: cmf.StopPaused}, &agent.RunFinished{StopReason: cmf.StopPaused})
	got := encodeRun("1.0", events...)
	var last struct {
		Type    string
		Outcome struct {
			Type       string
			Interrupts []struct{ ID, Reason, ToolCallID string }
		}
	}
	if err := json.Unmarshal([]byte(got[len(got)-1]), &last); err != nil {
		t.Fatal(err)
	}
	irs := last.Outcome.Interrupts
	if last.Type != "RUN_FINISHED" || last.Outcome.Type != "interrupt" || len(irs) != 2 ||
		irs[0].ID != agui.InterruptID("c1", "sigc1") || irs[1].ID != agui.InterruptID("c2", "sigc2") ||
		irs[0].ToolCallID != "c1" || irs[1].Reason != "tool_call" {
		t.Fatalf("last event %s", got[len(got)-1])
	}
}

// An interrupt's message shows the tool input compacted, as the model's
// layout (newlines, indentation) means nothing to the user.
func TestInterruptMessageCompactsInput(t *testing.T) {
	args := json.RawMessage("{\n  \"path\":\r\n  \"/tmp/x\"\n}")
	got := encodeRun("1.0",
		&agent.RunStarted{MessageID: "m1"}, &agent.StepStarted{Step: 1, MessageID: "m1"},
		&agent.PartStarted{Kind: agent.PartToolCall, ID: "c1", ToolName: "delete_file", MessageID: "m1"},
		&agent.PartEnded{Kind: agent.PartToolCall, ID: "c1", Part: cmf.ToolCall{ToolCallID: "c1", Name: "delete_file", Arguments: args}},
		&agent.ApprovalRequested{ToolCallID: "c1", ToolName: "delete_file", ApprovalID: "a1", Input: args, Signature: "s"},
		&agent.StepFinished{Step: 1, StopReason: cmf.StopPaused}, &agent.RunFinished{StopReason: cmf.StopPaused})
	if last := got[len(got)-1]; !strings.Contains(last, `"message":"Allow delete_file with {\"path\":\"/tmp/x\"}?"`) {
		t.Fatalf("last event %s", last)
	}
}

// Token usage goes on RUN_FINISHED for 1.0 clients only (older ones
// reject the field), with every kind the model reported.
func TestEncoderUsage(t *testing.T) {
	fin := &agent.RunFinished{StopReason: cmf.StopEnd, Model: "m-1",
		Usage: agent.Usage{InputTokens: 10, OutputTokens: 7, ReasoningTokens: 3, CachedInputTokens: 4, CacheWriteTokens: 2}}
	for version, want := range map[string]string{
		"1.0": `{"type":"RUN_FINISHED","timestamp":0,"threadId":"t1","runId":"r1","usage":[{"model":"m-1","inputTokens":10,"outputTokens":7,"totalTokens":17,"reasoningTokens":3,"cachedInputTokens":4,"cacheWriteInputTokens":2}]}`,
		"":    `{"type":"RUN_FINISHED","timestamp":0,"threadId":"t1","runId":"r1"}`,
	} {
		got := encodeRun(version, &agent.RunStarted{}, fin)
		if got[len(got)-1] != want {
			t.Errorf("protocol %q: %s\nwant %s", version, got[len(got)-1], want)
		}
	}
	if got := encodeRun("1.0", &agent.RunStarted{}, &agent.RunFinished{StopReason: cmf.StopEnd}); strings.Contains(got[len(got)-1], "usage") {
		t.Errorf("usage without any: %s", got[len(got)-1])
	}
}

// A step that starts with a tool call sends no empty text message: the
// tool call names the step's message as its parent, which the client
// makes; a text after the call in the same step is a message of its own.
func TestEncoderToolCallWithoutEmptyText(t *testing.T) {
	got := encodeRun("1.0",
		&agent.RunStarted{MessageID: "m1"}, &agent.StepStarted{Step: 1, MessageID: "m1"},
		&agent.PartStarted{Kind: agent.PartToolCall, ID: "c1", ToolName: "get_weather", MessageID: "m1"},
		&agent.PartDelta{Kind: agent.PartToolCall, ID: "c1", Delta: `{}`},
		&agent.PartEnded{Kind: agent.PartToolCall, ID: "c1"},
		&agent.PartStarted{Kind: agent.PartText, ID: "p2", MessageID: "m1"},
		&agent.PartDelta{Kind: agent.PartText, ID: "p2", Delta: "Sunny."},
		&agent.PartEnded{Kind: agent.PartText, ID: "p2"},
		&agent.RunFinished{StopReason: cmf.StopEnd})
	want := []string{
		`{"type":"RUN_STARTED","timestamp":0,"threadId":"t1","runId":"r1","protocolVersion":"1.0"}`,
		`{"type":"STEP_STARTED","timestamp":0,"stepName":"step-1"}`,
		`{"type":"TOOL_CALL_START","timestamp":0,"toolCallId":"c1","toolCallName":"get_weather","parentMessageId":"m1"}`,
		`{"type":"TOOL_CALL_ARGS","timestamp":0,"toolCallId":"c1","delta":"{}"}`,
		`{"type":"TOOL_CALL_END","timestamp":0,"toolCallId":"c1"}`,
		`{"type":"TEXT_MESSAGE_START","timestamp":0,"messageId":"p2","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","timestamp":0,"messageId":"p2","delta":"Sunny."}`,
		`{"type":"TEXT_MESSAGE_END","timestamp":0,"messageId":"p2"}`,
		`{"type":"STEP_FINISHED","timestamp":0,"stepName":"step-1"}`,
		`{"type":"RUN_FINISHED","timestamp":0,"threadId":"t1","runId":"r1"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
