package turn

import (
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/wire"
)

// Which requests show the reply their chat is producing: the reply "r"
// answers the turn that ended with "u1".
func TestShowsReply(t *testing.T) {
	user := func(id string) cmf.Message { return textMsg(cmf.RoleUser, id, "hi") }
	asst := func(id string) cmf.Message { return textMsg(cmf.RoleAssistant, id, "partial") }
	for _, c := range []struct {
		name string
		turn wire.Turn
		want bool
	}{
		{"useChat after stop(): the partial reply, then the new message", wire.Turn{Messages: []cmf.Message{user("u1"), asst("r"), user("u2")}}, true},
		{"regenerate of the running reply", wire.Turn{Intent: wire.Regenerate, MessageID: "r", Messages: []cmf.Message{user("u1")}}, true},
		{"assistant-ui: the new message's parent is the reply", wire.Turn{ParentID: "r", Messages: []cmf.Message{user("u2")}}, true},
		{"the agent named the reply: an assistant message after the turn", wire.Turn{Messages: []cmf.Message{user("u1"), asst("mine"), user("u2")}}, true},
		{"another tab that loaded before the turn", wire.Turn{Messages: []cmf.Message{user("u0"), user("u2")}}, false},
		{"another tab that loaded the turn but not its reply", wire.Turn{Messages: []cmf.Message{user("u1"), user("u2")}}, false},
		{"the turn is the request's last message", wire.Turn{Messages: []cmf.Message{user("u0"), user("u1")}}, false},
		{"messages without ids", wire.Turn{Messages: []cmf.Message{user(""), asst(""), user("")}}, false},
	} {
		if got := ShowsReply(&c.turn, "r", "u1"); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// A run whose ids are unknown is shown by nothing.
	if ShowsReply(&wire.Turn{Messages: []cmf.Message{user(""), asst("")}}, "", "") {
		t.Error("empty ids match")
	}
}

// Retries knows a request sent again: by its key when either names one,
// else (useChat) by its new message, sent again unchanged as a new one.
func TestRetries(t *testing.T) {
	asked := []cmf.Message{textMsg(cmf.RoleUser, "u1", "weather in Paris")}
	submit := func(key string, m cmf.Message) *wire.Turn {
		return &wire.Turn{Intent: wire.Submit, Key: key, Messages: []cmf.Message{m}}
	}
	var policy Policy
	for _, c := range []struct {
		name string
		t    *wire.Turn
		key  string
		want bool
	}{
		{"the same key", submit("k", textMsg(cmf.RoleUser, "u2", "other")), "k", true},
		{"another key", submit("k2", asked[0]), "k", false},
		{"a key where the run had none", submit("k", asked[0]), "", false},
		{"no key where the run had one", submit("", asked[0]), "k", false},
		{"the message again", submit("", asked[0]), "", true},
		{"the message edited", submit("", textMsg(cmf.RoleUser, "u1", "weather in Rome")), "", false},
		{"another message", submit("", textMsg(cmf.RoleUser, "u2", "weather in Paris")), "", false},
		{"a regeneration", &wire.Turn{Intent: wire.Regenerate, Messages: asked}, "", false},
	} {
		if got := Retries(c.t, RunAsked{Key: c.key, Asked: asked}, nil, &policy); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if Retries(submit("", asked[0]), RunAsked{Continued: "a1"}, nil, &policy) {
		t.Error("a run that asked nothing (a continuation) has no retry by message")
	}
	call := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant, Content: []cmf.Part{cmf.ToolCall{ToolCallID: "c1", Name: "delete_file", Arguments: []byte(`{}`)}}}
	call.SetID("a1")
	result := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleTool, Content: []cmf.Part{cmf.ToolResult{ToolCallID: "c1", ToolName: "delete_file", Content: []byte(`"ok"`)}}}
	stored := []cmf.Message{asked[0], call, result}
	deniedCall := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant, Content: []cmf.Part{
		cmf.ToolCall{ToolCallID: "d1", Name: "delete_file", Arguments: []byte(`{}`)}}}
	deniedCall.SetID("a1")
	deniedCall.SetCallRecord("d1", cmf.CallRecord{ApprovalID: "ap"})
	denial := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleTool, Content: []cmf.Part{cmf.ToolResult{ToolCallID: "d1", ToolName: "delete_file", Content: []byte(`"denied"`), IsError: true}}}
	denial.SetCallRecord("d1", cmf.CallRecord{Decision: &cmf.Decision{Approved: false}})
	denied := []cmf.Message{asked[0], deniedCall, denial}
	deny := func(id string) *wire.Turn {
		return &wire.Turn{Intent: wire.Continue, MessageID: "a1", Resolutions: []wire.Resolution{{Resolution: agent.Resolution{ToolCallID: id, Kind: agent.Deny}}}}
	}
	cont := func(id string) *wire.Turn {
		return &wire.Turn{Intent: wire.Continue, MessageID: "a1", Resolutions: []wire.Resolution{{Resolution: agent.Resolution{ToolCallID: id, Kind: agent.Approve}}}}
	}
	for _, c := range []struct {
		name      string
		t         *wire.Turn
		continued string
		stored    []cmf.Message
		want      bool
	}{
		{"the answer again", cont("c1"), "a1", stored, true},
		{"an answer for another message's run", cont("c1"), "a2", stored, false},
		{"an answer for a call never made", cont("invented"), "a1", stored, false},
		{"an answer for a call still waiting", cont("c1"), "a1", stored[:2], false},
		{"the conversation not loaded", cont("c1"), "a1", nil, false},
		{"a denial for a call that ran", deny("c1"), "a1", stored, false},
		{"the denial again", deny("d1"), "a1", denied, true},
		{"a denial sent again as an approval", cont("d1"), "a1", denied, false},
	} {
		if got := Retries(c.t, RunAsked{Continued: c.continued}, c.stored, &policy); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
