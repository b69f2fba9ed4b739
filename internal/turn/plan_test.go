package turn

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/wire"
)

func textMsg(role cmf.Role, id, text string) cmf.Message {
	m := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: role, Content: []cmf.Part{cmf.Text{Text: text}}}
	m.SetID(id)
	return m
}

func callMsg(id string, calls ...cmf.ToolCall) cmf.Message {
	m := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant}
	for _, c := range calls {
		m.Content = append(m.Content, c)
	}
	m.SetID(id)
	return m
}

func toolCall(id, name string) cmf.ToolCall {
	return cmf.ToolCall{ToolCallID: id, Name: name, Arguments: json.RawMessage(`{}`)}
}

func resultMsg(callID, tool string) cmf.Message {
	return cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleTool, Content: []cmf.Part{
		cmf.ToolResult{ToolCallID: callID, ToolName: tool, Content: json.RawMessage(`"ok"`)}}}
}

// A stored turn whose calls wait: "ap" for approval, "cl" for the
// client's output; "sv" ran on the server and has its result.
func waitingChat() []cmf.Message {
	asst := callMsg("a1", toolCall("ap", "delete_file"), toolCall("cl", "get_location"), toolCall("sv", "get_weather"))
	asst.SetCallRecord("ap", cmf.CallRecord{ApprovalID: "appr-1"})
	asst.SetCallRecord("cl", cmf.CallRecord{Client: true})
	return []cmf.Message{textMsg(cmf.RoleUser, "u1", "go"), asst, resultMsg("sv", "get_weather")}
}

func approve(id string) wire.Resolution {
	return wire.Resolution{Resolution: agent.Resolution{ToolCallID: id, Kind: agent.Approve}, Signature: "sig"}
}

func output(id string) wire.Resolution {
	return wire.Resolution{Resolution: agent.Resolution{ToolCallID: id, Kind: agent.ClientOutput, Output: json.RawMessage(`1`)}}
}

var roomy = ChatSize{MaxMessages: 100, MaxBytes: 1 << 20, AtLimitCheck: true}

// The answer rules, with history: what each kind of answer to each kind
// of stored call becomes.
func TestAnswerRulesWithHistory(t *testing.T) {
	for _, c := range []struct {
		name    string
		answers []wire.Resolution
		resume  []string // call ids accepted
		refusal string
	}{
		{"an approval for the call that waits for one", []wire.Resolution{approve("ap")}, []string{"ap"}, ""},
		{"the client's output for its call", []wire.Resolution{output("cl")}, []string{"cl"}, ""},
		{"an approval for a call that waits for the client", []wire.Resolution{approve("cl")}, nil, "approval for a tool call that is not waiting for one"},
		{"an approval for a server call", []wire.Resolution{approve("sv")}, nil, "approval for a tool call that is not waiting for one"},
		{"an approval for a call the chat does not have", []wire.Resolution{approve("zz")}, nil, "approval for a tool call the server did not request"},
		{"output resent for an answered call is ignored", []wire.Resolution{output("sv"), output("cl")}, []string{"cl"}, ""},
		{"output for a call waiting for approval is ignored", []wire.Resolution{output("ap"), output("cl")}, []string{"cl"}, ""},
		{"output with the approval of its call: the approval decides", []wire.Resolution{output("ap"), approve("ap")}, []string{"ap"}, ""},
		{"output for a call the chat does not have", []wire.Resolution{output("zz")}, nil, "tool output for a tool call that is not waiting for one"},
		{"nothing that counts", []wire.Resolution{output("sv")}, nil, "nothing to continue: no tool call in this chat is waiting for these answers"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, _, err := PlanStored(waitingChat(), &wire.Turn{Intent: wire.Continue, Resolutions: c.answers}, roomy, &Policy{})
			if c.refusal != "" {
				if err == nil || refusalText(err) != c.refusal {
					t.Fatalf("err = %v, want %q", err, c.refusal)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := resumed(p.Resume); !equal(got, c.resume) {
				t.Fatalf("resumed %v, want %v", got, c.resume)
			}
			if p.Keep != 3 || len(p.Add) != 0 {
				t.Fatalf("a continuation changes the chat: keep %d, add %d", p.Keep, len(p.Add))
			}
		})
	}
}

// A chat at its size limit takes no new message, but still takes the
// answers its pending calls wait for (WithChatLimits).
func TestChatAtItsLimitStillTakesAnswers(t *testing.T) {
	full := ChatSize{Messages: 3, MaxMessages: 3, MaxBytes: 1 << 20, AtLimitCheck: true}
	if _, _, err := PlanStored(waitingChat(), &wire.Turn{Intent: wire.Continue, Resolutions: []wire.Resolution{approve("ap")}}, full, &Policy{}); err != nil {
		t.Fatalf("an answer to a pending call was refused at the limit: %v", err)
	}
	submit := &wire.Turn{Intent: wire.Submit, Messages: []cmf.Message{textMsg(cmf.RoleUser, "u2", "more")}}
	if _, _, err := PlanStored(waitingChat(), submit, full, &Policy{}); err == nil {
		t.Fatal("a new message was taken at the limit")
	}
}

// Planning writes nothing: an edit plans the cut and the new message as
// one write, which the handler makes only once the message has passed
// the guard.
func TestPlanEditCutsAndAddsInOneWrite(t *testing.T) {
	stored := []cmf.Message{textMsg(cmf.RoleUser, "u1", "first"), textMsg(cmf.RoleAssistant, "a1", "reply"),
		textMsg(cmf.RoleUser, "u2", "second"), textMsg(cmf.RoleAssistant, "a2", "reply")}
	edit := &wire.Turn{Intent: wire.Submit, Messages: []cmf.Message{textMsg(cmf.RoleUser, "u1", "first, edited")}}
	p, _, err := PlanStored(stored, edit, roomy, &Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Keep != 0 || len(p.Add) != 1 || p.Add[0].Text() != "first, edited" {
		t.Fatalf("plan keep %d add %+v", p.Keep, p.Add)
	}
	if stored[0].Text() != "first" || len(stored) != 4 {
		t.Fatal("planning changed the stored conversation")
	}
	// A new message after calls that wait answers them "not answered".
	p, _, err = PlanStored(waitingChat(), &wire.Turn{Intent: wire.Submit, Messages: []cmf.Message{textMsg(cmf.RoleUser, "u9", "never mind")}}, roomy, &Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Keep != 3 || len(p.Add) != 3 || p.Add[2].ID() != "u9" {
		t.Fatalf("plan keep %d add %d", p.Keep, len(p.Add))
	}
}

// AG-UI's pending-interrupts rule (Turn.ResumeRequired): a new message
// is refused while a call awaits approval, the interrupt the client must
// resume. A call that awaits a client tool's output is no interrupt: the
// new message goes on, and the call is answered "not answered". Without
// the rule a waiting approval is answered so too.
func TestPlanPendingInterrupts(t *testing.T) {
	const refusal = "This thread has pending interrupts: resume them before sending a new message."
	awaiting := func(call cmf.ToolCall, record cmf.CallRecord) []cmf.Message {
		asst := callMsg("a1", call)
		asst.SetCallRecord(call.ToolCallID, record)
		return []cmf.Message{textMsg(cmf.RoleUser, "u1", "go"), asst}
	}
	approval := awaiting(toolCall("ap", "delete_file"), cmf.CallRecord{ApprovalID: "appr-1"})
	client := awaiting(toolCall("cl", "get_location"), cmf.CallRecord{Client: true})
	for _, c := range []struct {
		name           string
		stored         []cmf.Message
		resumeRequired bool
		refused        bool
	}{
		{"an approval waits", approval, true, true},
		{"an approval waits, no rule", approval, false, false},
		{"a client tool waits", client, true, false},
		{"both wait", waitingChat(), true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			turn := &wire.Turn{Intent: wire.Submit, ResumeRequired: c.resumeRequired, Messages: []cmf.Message{textMsg(cmf.RoleUser, "u2", "something else")}}
			p, _, err := PlanStored(c.stored, turn, roomy, &Policy{})
			if err != nil {
				t.Fatal(err)
			}
			if c.refused {
				if p.Refusal != refusal || len(p.Add) != 0 {
					t.Fatalf("refusal %q, adds %d", p.Refusal, len(p.Add))
				}
				return
			}
			if p.Refusal != "" || len(p.Add) != 2 || p.Add[1].ID() != "u2" {
				t.Fatalf("refusal %q, adds %d", p.Refusal, len(p.Add))
			}
			if r, ok := p.Add[0].Content[0].(cmf.ToolResult); !ok || !r.IsError || !strings.Contains(string(r.Content), "Not answered") {
				t.Fatalf("the waiting call's answer: %+v", p.Add[0].Content)
			}
		})
	}
}

// A client that shows messages before its new one, in a chat the server
// does not have, is told so (409 unknown_chat) instead of starting
// another conversation under the same id.
func TestPlanUnknownChat(t *testing.T) {
	turn := &wire.Turn{Intent: wire.Submit, ParentID: "a7", Messages: []cmf.Message{textMsg(cmf.RoleUser, "u8", "and then?")}}
	_, _, err := PlanStored(nil, turn, roomy, &Policy{})
	var e *wire.Error
	if !errors.As(err, &e) || e.Status != 409 || e.Code != wire.CodeUnknownChat {
		t.Fatalf("err = %v", err)
	}
	turn.ParentID = ""
	if _, _, err := PlanStored(nil, turn, roomy, &Policy{}); err != nil {
		t.Fatalf("a first message: %v", err)
	}
}

// Where "the server lost this chat" begins: with nothing stored, a new
// message alone (or after the client's own system and developer
// messages, or its greeting) starts the chat; one earlier message of any
// other kind, an answer or a regeneration says the client knew a chat the
// server does not. With one message stored, the client's past is ignored as always.
func TestPlanUnknownChatBoundary(t *testing.T) {
	user := textMsg(cmf.RoleUser, "u9", "and then?")
	system, developer := textMsg(cmf.RoleSystem, "s1", "Be brief."), textMsg(cmf.RoleDeveloper, "d1", "Be kind.")
	// A reply that is more than text is the past of a chat the server
	// lost; text alone before the first user message is the client's
	// greeting (openingGreeting).
	greeting := textMsg(cmf.RoleAssistant, "g1", "Hi! How can I help?")
	called := textMsg(cmf.RoleAssistant, "a1", "hi")
	called.Content = append(called.Content, cmf.ToolCall{ToolCallID: "c1", Name: "get_weather", Arguments: []byte(`{}`)})
	for _, c := range []struct {
		name    string
		stored  []cmf.Message
		turn    wire.Turn
		unknown bool
	}{
		{"the first message", nil, wire.Turn{Intent: wire.Submit, Messages: []cmf.Message{user}}, false},
		{"after a system message", nil, wire.Turn{Intent: wire.Submit, Messages: []cmf.Message{system, user}}, false},
		{"after system and developer messages", nil, wire.Turn{Intent: wire.Submit, Messages: []cmf.Message{system, developer, user}}, false},
		{"after one earlier reply", nil, wire.Turn{Intent: wire.Submit, Messages: []cmf.Message{called, user}}, true},
		{"after one earlier user message", nil, wire.Turn{Intent: wire.Submit, Messages: []cmf.Message{textMsg(cmf.RoleUser, "u1", "hi"), user}}, true},
		{"after a system message and one earlier reply", nil, wire.Turn{Intent: wire.Submit, Messages: []cmf.Message{system, called, user}}, true},
		{"an earlier reply after the system message", nil, wire.Turn{Intent: wire.Submit, Messages: []cmf.Message{called, system, user}}, true},
		{"after the client's greeting", nil, wire.Turn{Intent: wire.Submit, ParentID: "g1", Messages: []cmf.Message{greeting, user}}, false},
		{"after a system message and the client's greeting", nil, wire.Turn{Intent: wire.Submit, Messages: []cmf.Message{system, greeting, user}}, false},
		{"after a greeting, naming another parent", nil, wire.Turn{Intent: wire.Submit, ParentID: "a7", Messages: []cmf.Message{greeting, user}}, true},
		{"after a user message and a greeting", nil, wire.Turn{Intent: wire.Submit, Messages: []cmf.Message{textMsg(cmf.RoleUser, "u1", "hi"), greeting, user}}, true},
		{"answers", nil, wire.Turn{Intent: wire.Continue, Resolutions: []wire.Resolution{approve("ap")}}, true},
		{"a regeneration", nil, wire.Turn{Intent: wire.Regenerate}, true},
		{"one message stored", []cmf.Message{textMsg(cmf.RoleUser, "u1", "hi")},
			wire.Turn{Intent: wire.Submit, ParentID: "a1", Messages: []cmf.Message{textMsg(cmf.RoleAssistant, "a1", "hi"), user}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := PlanStored(c.stored, &c.turn, roomy, &Policy{})
			var e *wire.Error
			if unknown := errors.As(err, &e) && e.Code == wire.CodeUnknownChat; unknown != c.unknown {
				t.Fatalf("err = %v, want unknown chat: %v", err, c.unknown)
			}
			if !c.unknown && err != nil {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

// kinds says what the agent does with each demo tool.
type kinds map[string]agent.ToolKind

func (k kinds) ToolKind(name string, _ json.RawMessage, _ []agent.ToolSpec) agent.ToolKind {
	return k[name]
}

var demoKinds = kinds{"delete_file": agent.ToolApproval, "get_location": agent.ToolClient, "get_weather": agent.ToolServer}

// Without history the same rules decide, the call's status read from
// what the agent does with it; output for a server tool stays as history
// but answers nothing.
func TestAnswerRulesWithoutHistory(t *testing.T) {
	thread := []cmf.Message{textMsg(cmf.RoleUser, "u1", "go"), callMsg("a1", toolCall("ap", "delete_file"), toolCall("cl", "get_location"), toolCall("sv", "get_weather")),
		resultMsg("sv", "get_weather"), resultMsg("cl", "get_location"), resultMsg("ap", "delete_file")}
	turn := &wire.Turn{Intent: wire.Continue, Messages: thread, Resolutions: []wire.Resolution{output("sv"), output("cl"), output("ap")}}
	base, p, _, err := PlanClient(turn, demoKinds, &Policy{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := resumed(p.Resume); !equal(got, []string{"cl"}) {
		t.Fatalf("resumed %v", got)
	}
	// The output for the call that needs approval left the thread (and
	// with it the call, which has no result now); the server tool's stays.
	var results []string
	for _, m := range base {
		for _, part := range m.Content {
			if r, ok := part.(cmf.ToolResult); ok {
				results = append(results, r.ToolCallID)
			}
		}
	}
	if !equal(results, []string{"sv", "cl"}) {
		t.Fatalf("results left in the thread: %v", results)
	}
	turn.Resolutions = []wire.Resolution{approve("cl")}
	turn.Messages = thread[:2]
	if _, _, _, err := PlanClient(turn, demoKinds, &Policy{}, nil); err != nil {
		// Signed as an approval of the call: it is the signature
		// (verify) that refuses it, the rules cannot tell.
		t.Fatalf("planClient: %v", err)
	}
	turn.Resolutions = []wire.Resolution{approve("nope")}
	if _, _, _, err := PlanClient(turn, demoKinds, &Policy{}, nil); refusalText(err) != "approval for a tool call the server did not request" {
		t.Fatalf("err = %v", err)
	}
}

func refusalText(err error) string {
	var ra *RefusedAnswer
	var e *wire.Error
	switch {
	case errors.As(err, &ra):
		return ra.Why
	case errors.As(err, &e):
		return e.Message
	case err != nil:
		return err.Error()
	}
	return ""
}

func resumed(rs []wire.Resolution) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ToolCallID)
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
