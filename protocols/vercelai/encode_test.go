package vercelai_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/protocols/vercelai"
)

// encodeRun encodes events as one run and returns its frames' data.
func encodeRun(p *vercelai.Protocol, turn *wire.Turn, events ...agent.Event) []string {
	return encodeTrusted(p, turn, wire.Trusted{}, events...)
}

// encodeTrusted is encodeRun with the trusted conversation a handler with
// history gives the encoder.
func encodeTrusted(p *vercelai.Protocol, turn *wire.Turn, tr wire.Trusted, events ...agent.Event) []string {
	var out []string
	for _, frame := range strings.Split(strings.TrimSuffix(testutil.EncodeTrusted(p, turn, tr, events...), "\n\n"), "\n\n") {
		out = append(out, strings.TrimPrefix(frame, "data: "))
	}
	return out
}

var submit = &wire.Turn{ChatID: "c", Intent: wire.Submit}

func toolCall(id, name, args string) cmf.ToolCall {
	tc := cmf.ToolCall{ToolCallID: id, Name: name}
	if args != "" {
		tc.Arguments = json.RawMessage(args)
	}
	return tc
}

// Every chunk type the encoder writes, with the exact bytes: optional
// fields omitted, input/output/data present even when null.
func TestEncoderChunks(t *testing.T) {
	run := func(events ...agent.Event) []agent.Event {
		all := []agent.Event{&agent.RunStarted{MessageID: "m1"}, &agent.StepStarted{Step: 1}}
		return append(append(all, events...), &agent.StepFinished{Step: 1}, &agent.RunFinished{StopReason: cmf.StopEnd})
	}
	head := []string{`{"type":"start","messageId":"m1"}`, `{"type":"start-step"}`}
	tail := []string{`{"type":"finish-step"}`, `{"type":"finish","finishReason":"stop"}`, `[DONE]`}
	for _, tc := range []struct {
		name   string
		events []agent.Event
		want   []string
	}{
		{"tool input error; its failed result is not sent again", run(
			&agent.PartStarted{Kind: agent.PartToolCall, ID: "c1", ToolName: "get_weather"},
			&agent.PartDelta{Kind: agent.PartToolCall, ID: "c1", Delta: `{"city":1}`},
			&agent.PartEnded{Kind: agent.PartToolCall, ID: "c1", Part: toolCall("c1", "get_weather", `{"city":1}`), InputError: "city: expected string"},
			&agent.ToolResult{ToolCallID: "c1", ToolName: "get_weather", IsError: true, Output: json.RawMessage(`"city: expected string"`)},
		), []string{
			`{"type":"tool-input-start","toolCallId":"c1","toolName":"get_weather"}`,
			`{"type":"tool-input-delta","toolCallId":"c1","inputTextDelta":"{\"city\":1}"}`,
			`{"type":"tool-input-error","toolCallId":"c1","toolName":"get_weather","input":{"city":1},"errorText":"city: expected string"}`,
		}},
		{"tool output error", run(
			&agent.PartEnded{Kind: agent.PartToolCall, ID: "c1", Part: toolCall("c1", "get_weather", `{}`)},
			&agent.ToolResult{ToolCallID: "c1", ToolName: "get_weather", IsError: true, Output: json.RawMessage(`"service down"`)},
		), []string{
			`{"type":"tool-input-available","toolCallId":"c1","toolName":"get_weather","input":{}}`,
			`{"type":"tool-output-error","toolCallId":"c1","errorText":"service down"}`,
		}},
		{"null input and output are written, not left out", run(
			&agent.PartEnded{Kind: agent.PartToolCall, ID: "c1", Part: toolCall("c1", "noop", "")},
			&agent.ToolResult{ToolCallID: "c1", ToolName: "noop"},
		), []string{
			`{"type":"tool-input-available","toolCallId":"c1","toolName":"noop","input":null}`,
			`{"type":"tool-output-available","toolCallId":"c1","output":null}`,
		}},
		{"denied call", run(
			&agent.PartEnded{Kind: agent.PartToolCall, ID: "c1", Part: toolCall("c1", "delete_file", `{"path":"/x"}`)},
			&agent.ToolResult{ToolCallID: "c1", ToolName: "delete_file", Denied: true, Reason: "no", ApprovalID: "a1"},
		), []string{
			`{"type":"tool-input-available","toolCallId":"c1","toolName":"delete_file","input":{"path":"/x"}}`,
			`{"type":"tool-output-denied","toolCallId":"c1"}`,
		}},
		{"results for calls not in this message are dropped", run(
			&agent.ToolResult{ToolCallID: "elsewhere", ToolName: "t", Output: json.RawMessage(`1`)},
			&agent.ApprovalRequested{ToolCallID: "elsewhere", ToolName: "t", ApprovalID: "a"},
		), nil},
		{"data parts, state and a null value", run(
			&agent.Data{Name: "weather", ID: "d1", Value: json.RawMessage(`{"temp":21}`)},
			&agent.Data{Name: "progress", Value: json.RawMessage(`0.5`), Transient: true},
			&agent.Data{Name: "empty"},
			&agent.StateSnapshot{State: json.RawMessage(`{"a":1}`)},
			&agent.StateDelta{Patch: json.RawMessage(`[{"op":"add","path":"/b","value":2}]`)},
		), []string{
			`{"type":"data-weather","id":"d1","data":{"temp":21}}`,
			`{"type":"data-progress","data":0.5,"transient":true}`,
			`{"type":"data-empty","data":null}`,
			`{"type":"data-state-snapshot","data":{"a":1},"transient":true}`,
			`{"type":"data-state-delta","data":[{"op":"add","path":"/b","value":2}],"transient":true}`,
		}},
		{"open text is ended before the step", []agent.Event{
			&agent.RunStarted{MessageID: "m1"}, &agent.StepStarted{Step: 1},
			&agent.PartStarted{Kind: agent.PartThinking, ID: "r1"},
			&agent.PartDelta{Kind: agent.PartThinking, ID: "r1", Delta: "hm"},
			&agent.PartStarted{Kind: agent.PartText, ID: "t1"},
			&agent.PartDelta{Kind: agent.PartText, ID: "t1", Delta: "Hi"},
			&agent.PartDelta{Kind: agent.PartText, ID: "never-started", Delta: "x"},
			&agent.StepFinished{Step: 1}, &agent.RunFinished{StopReason: cmf.StopEnd},
		}, []string{
			`{"type":"reasoning-start","id":"r1"}`,
			`{"type":"reasoning-delta","id":"r1","delta":"hm"}`,
			`{"type":"text-start","id":"t1"}`,
			`{"type":"text-delta","id":"t1","delta":"Hi"}`,
			`{"type":"reasoning-end","id":"r1"}`,
			`{"type":"text-end","id":"t1"}`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := encodeRun(vercelai.New(), submit, tc.events...)
			want := append(append(append([]string{}, head...), tc.want...), tail...)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// Stop reasons map to the AI SDK 6 finishReason enum; an aborted run ends
// with abort instead of finish.
func TestEncoderFinishReasons(t *testing.T) {
	for reason, want := range map[cmf.StopReason]string{
		cmf.StopEnd:       `{"type":"finish","finishReason":"stop"}`,
		cmf.StopMaxTokens: `{"type":"finish","finishReason":"length"}`,
		cmf.StopCall:      `{"type":"finish","finishReason":"tool-calls"}`,
		cmf.StopPaused:    `{"type":"finish","finishReason":"tool-calls"}`,
		cmf.StopGuardrail: `{"type":"finish","finishReason":"content-filter"}`,
		cmf.StopError:     `{"type":"finish","finishReason":"error"}`,
		"something_new":   `{"type":"finish","finishReason":"other"}`,
		cmf.StopAborted:   `{"type":"abort"}`,
	} {
		got := encodeRun(vercelai.New(), submit, &agent.RunStarted{MessageID: "m1"}, &agent.RunFinished{StopReason: reason})
		if len(got) != 3 || got[1] != want || got[2] != "[DONE]" {
			t.Errorf("%s: %v, want %s", reason, got, want)
		}
	}
	// A run that neither finished nor failed is finished "other".
	if got := encodeRun(vercelai.New(), submit, &agent.RunStarted{MessageID: "m1"}); strings.Join(got, " ") != `{"type":"start","messageId":"m1"} {"type":"finish","finishReason":"other"} [DONE]` {
		t.Errorf("unfinished run: %v", got)
	}
}

// tool-approval-response is an AI SDK 7 chunk: written only with
// WithAISDK7, before the outcome of the answered call.
func TestEncoderAISDK7(t *testing.T) {
	continued := &wire.Turn{ChatID: "c", Intent: wire.Continue, MessageID: "m0", Messages: []cmf.Message{{
		SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant,
		Content: []cmf.Part{toolCall("c1", "delete_file", `{"path":"/x"}`), toolCall("c2", "delete_file", `{"path":"/y"}`)},
	}}}
	events := []agent.Event{
		&agent.RunStarted{MessageID: "new"},
		&agent.ToolResult{ToolCallID: "c1", ToolName: "delete_file", Approved: true, ApprovalID: "a1", Output: json.RawMessage(`"ok"`)},
		&agent.ToolResult{ToolCallID: "c2", ToolName: "delete_file", Denied: true, Reason: "not that one", ApprovalID: "a2"},
		&agent.RunFinished{StopReason: cmf.StopEnd},
	}
	v6 := []string{
		`{"type":"start","messageId":"m0"}`,
		`{"type":"tool-output-available","toolCallId":"c1","output":"ok"}`,
		`{"type":"tool-output-denied","toolCallId":"c2"}`,
		`{"type":"finish","finishReason":"stop"}`, `[DONE]`,
	}
	v7 := []string{
		`{"type":"start","messageId":"m0"}`,
		`{"type":"tool-approval-response","approvalId":"a1","approved":true}`,
		`{"type":"tool-output-available","toolCallId":"c1","output":"ok"}`,
		`{"type":"tool-approval-response","approvalId":"a2","approved":false,"reason":"not that one"}`,
		`{"type":"tool-output-denied","toolCallId":"c2"}`,
		`{"type":"finish","finishReason":"stop"}`, `[DONE]`,
	}
	if got := encodeRun(vercelai.New(), continued, events...); strings.Join(got, "\n") != strings.Join(v6, "\n") {
		t.Errorf("AI SDK 6:\n%s", strings.Join(got, "\n"))
	}
	if got := encodeRun(vercelai.New(vercelai.WithAISDK7()), continued, events...); strings.Join(got, "\n") != strings.Join(v7, "\n") {
		t.Errorf("AI SDK 7:\n%s", strings.Join(got, "\n"))
	}
}
