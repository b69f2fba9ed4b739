package vercelai_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/protocols/vercelai"
)

// continuedHistory is a conversation paused on an approval: step 1
// answered with text, reasoning and a weather call; step 2 has a denied
// call and one waiting for approval (d1, answered by the continuation).
func continuedHistory() []cmf.Message {
	msg := func(role cmf.Role, id string, parts ...cmf.Part) cmf.Message {
		m := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: role, Content: parts}
		m.SetID(id)
		return m
	}
	a2 := msg(cmf.RoleAssistant, "a2", toolCall("d0", "delete_file", `{"path":"y"}`), toolCall("d1", "delete_file", `{"path":"x"}`))
	a2.SetCallRecord("d0", cmf.CallRecord{ApprovalID: "ap0"})
	a2.SetCallRecord("d1", cmf.CallRecord{ApprovalID: "ap1"})
	t2 := msg(cmf.RoleTool, "t2", cmf.ToolResult{ToolCallID: "d0", ToolName: "delete_file", IsError: true, Content: json.RawMessage(`"denied: no"`)})
	t2.SetCallRecord("d0", cmf.CallRecord{Decision: &cmf.Decision{Approved: false, Reason: "no"}})
	return []cmf.Message{
		msg(cmf.RoleUser, "u1", cmf.Text{Text: "hi"}),
		msg(cmf.RoleAssistant, "a1", cmf.Text{Text: "Looking"}, cmf.Thinking{Text: "hmm"}, toolCall("w1", "get_weather", `{"city":"Paris"}`)),
		msg(cmf.RoleTool, "t1", cmf.ToolResult{ToolCallID: "w1", ToolName: "get_weather", Content: json.RawMessage(`{"temp":21}`)}),
		a2, t2,
	}
}

// A reader that attaches to a continuation (a resumed stream: the turn
// has the stored conversation but not the client's copy) gets the
// continued message's parts right after start; the client that asked for
// the continuation (its copy holds the message) does not.
func TestEncoderWritesTheContinuedMessageToAnAttachedReader(t *testing.T) {
	run := []agent.Event{
		&agent.RunStarted{MessageID: "new"},
		&agent.StepStarted{Step: 3},
		&agent.ToolResult{ToolCallID: "d1", ToolName: "delete_file", Approved: true, ApprovalID: "ap1", Output: json.RawMessage(`{"deleted":"x"}`)},
		&agent.StepFinished{Step: 3},
		&agent.RunFinished{StopReason: cmf.StopEnd},
	}
	prefix := func(v7 bool) []string {
		out := []string{
			`{"type":"start","messageId":"a1"}`,
			`{"type":"start-step"}`,
			`{"type":"text-start","id":"continued-1"}`, `{"type":"text-delta","id":"continued-1","delta":"Looking"}`, `{"type":"text-end","id":"continued-1"}`,
			`{"type":"reasoning-start","id":"continued-2"}`, `{"type":"reasoning-delta","id":"continued-2","delta":"hmm"}`, `{"type":"reasoning-end","id":"continued-2"}`,
			`{"type":"tool-input-available","toolCallId":"w1","toolName":"get_weather","input":{"city":"Paris"}}`,
			`{"type":"tool-output-available","toolCallId":"w1","output":{"temp":21}}`,
			`{"type":"finish-step"}`, `{"type":"start-step"}`,
			`{"type":"tool-input-available","toolCallId":"d0","toolName":"delete_file","input":{"path":"y"}}`,
			`{"type":"tool-approval-request","approvalId":"ap0","toolCallId":"d0"}`,
		}
		if v7 {
			out = append(out, `{"type":"tool-approval-response","approvalId":"ap0","approved":false,"reason":"no"}`)
		}
		out = append(out, `{"type":"tool-output-denied","toolCallId":"d0"}`,
			`{"type":"tool-input-available","toolCallId":"d1","toolName":"delete_file","input":{"path":"x"}}`)
		if v7 {
			out = append(out, `{"type":"tool-approval-request","approvalId":"ap1","toolCallId":"d1"}`)
		}
		out = append(out, `{"type":"finish-step"}`, `{"type":"start-step"}`)
		if v7 {
			out = append(out, `{"type":"tool-approval-response","approvalId":"ap1","approved":true}`)
		}
		return append(out, `{"type":"tool-output-available","toolCallId":"d1","output":{"deleted":"x"}}`,
			`{"type":"finish-step"}`, `{"type":"finish","finishReason":"stop"}`, `[DONE]`)
	}
	for _, v7 := range []bool{false, true} {
		var opts []vercelai.Option
		if v7 {
			opts = append(opts, vercelai.WithAISDK7())
		}
		p := vercelai.New(opts...)
		attached := &wire.Turn{ChatID: "c", Intent: wire.Continue, MessageID: "a1"}
		stored := wire.Trusted{History: continuedHistory()}
		if got, want := encodeTrusted(p, attached, stored, run...), prefix(v7); !slices.Equal(got, want) {
			t.Errorf("v7 %v, attached reader:\ngot  %q\nwant %q", v7, got, want)
		}
		// The client that continues holds the message: only the run.
		client := *attached
		client.Messages = continuedHistory()[:2]
		got := encodeTrusted(p, &client, stored, run...)
		if got[1] != `{"type":"start-step"}` || slices.ContainsFunc(got, func(s string) bool { return s == `{"type":"text-delta","id":"continued-1","delta":"Looking"}` }) {
			t.Errorf("v7 %v, the continuing client got the message again: %q", v7, got)
		}
	}
}

// Sources, data parts and files of a continued message are written as
// their chunks, where they streamed.
func TestEncoderWritesContinuedSourcesAndFiles(t *testing.T) {
	a1 := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant, Content: []cmf.Part{
		cmf.ResourceRef{ResourceRequestID: "s1", URI: "https://example.com/a", Name: "A", ResourceType: cmf.ResourceURI},
		cmf.Image{MediaSource: cmf.MediaSource{Type: cmf.SourceURL, Data: "https://example.com/a.png", MediaType: "image/png"}},
	}}
	a1.SetID("a1")
	a1.AddData(cmf.DataRecord{Name: "weather", ID: "w", Value: json.RawMessage(`{"t":1}`), Index: 1})
	turn := &wire.Turn{ChatID: "c", Intent: wire.Continue, MessageID: "a1"}
	got := encodeTrusted(vercelai.New(), turn, wire.Trusted{History: []cmf.Message{a1}}, &agent.RunStarted{}, &agent.RunFinished{StopReason: cmf.StopEnd})
	want := []string{`{"type":"start","messageId":"a1"}`, `{"type":"start-step"}`,
		`{"type":"source-url","sourceId":"s1","url":"https://example.com/a","title":"A"}`,
		`{"type":"data-weather","id":"w","data":{"t":1}}`,
		`{"type":"file","url":"https://example.com/a.png","mediaType":"image/png"}`,
		`{"type":"finish-step"}`, `{"type":"finish","finishReason":"stop"}`, `[DONE]`}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
