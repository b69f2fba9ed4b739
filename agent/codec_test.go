package agent_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
)

// codecEvents has one of every event type, with every field set.
func codecEvents() []agent.Event {
	type raw = json.RawMessage
	return []agent.Event{
		&agent.RunStarted{MessageID: "m1"},
		&agent.StepStarted{Step: 2, MessageID: "m2"},
		&agent.PartStarted{Kind: agent.PartToolCall, ID: "c1", ToolName: "weather", MessageID: "m2"},
		&agent.PartDelta{Kind: agent.PartText, ID: "t1", Delta: "héllo \"x\"\n"},
		&agent.PartEnded{Kind: agent.PartText, ID: "t1", Part: cmf.Text{Text: "héllo"}},
		&agent.PartEnded{Kind: agent.PartText, ID: "t2", Part: cmf.Text{Text: "signed", Opaque: &cmf.Opaque{Provider: "google", Model: "gemini-x", Data: "sig"}}},
		&agent.PartEnded{Kind: agent.PartText, ID: "t3", Part: cmf.Text{Text: "kept"}, Labels: []string{"pii"}},
		&agent.PartEnded{Kind: agent.PartThinking, ID: "r1", Part: cmf.Thinking{Text: "hm", Opaque: &cmf.Opaque{Provider: "anthropic", Model: "claude-x", Data: "sig"}}},
		&agent.PartEnded{Kind: agent.PartRedactedThinking, ID: "x1", Part: cmf.RedactedThinking{Opaque: cmf.Opaque{Provider: "anthropic", Model: "claude-x", Data: "enc"}}},
		&agent.PartEnded{Kind: agent.PartToolCall, ID: "c1", Part: cmf.ToolCall{ToolCallID: "c1", Name: "weather", Arguments: raw(`{"city":"Oslo","n":12345678901234567890}`)}, InputError: "bad"},
		&agent.PartEnded{Kind: agent.PartToolCall, ID: "c2"},
		&agent.ToolResult{ToolCallID: "c1", ToolName: "weather", Output: raw(`{"t":1}`), IsError: true, Approved: true, Denied: true, Reason: "r", ApprovalID: "a1", EditedInput: raw(`{"city":"Rome"}`), FromClient: true, MessageID: "m3"},
		&agent.ApprovalRequested{ToolCallID: "c1", ToolName: "delete", ApprovalID: "a1", Input: raw(`{}`), Signature: "s"},
		&agent.ClientToolCall{ToolCallID: "c3", ToolName: "ask", Input: raw(`[1]`)},
		&agent.StateSnapshot{State: raw(`{"a":1}`)},
		&agent.StateDelta{Patch: raw(`[{"op":"add","path":"/a","value":1}]`)},
		&agent.StateDelta{},
		&agent.Data{Name: "n", ID: "i", Value: raw(`"v"`), Transient: true},
		&agent.Data{Name: "empty"},
		&agent.Steered{Message: steeringMessage()},
		&agent.StepFinished{Step: 2, StopReason: cmf.StopCall, Usage: agent.Usage{InputTokens: 1, OutputTokens: 2, ReasoningTokens: 3, CachedInputTokens: 4, TotalTokens: 5}},
		&agent.RunFinished{StopReason: cmf.StopPaused, Usage: agent.Usage{TotalTokens: 9}, Pending: []agent.PendingCall{{Kind: agent.PendingApproval, ToolCallID: "c1", ToolName: "delete", ApprovalID: "a1", Input: raw(`{}`)}}},
	}
}

func steeringMessage() cmf.Message {
	m := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: "I meant Texas."}}}
	m.SetID("s1")
	return m
}

func TestEventsSurviveTheirCodec(t *testing.T) {
	seen := map[string]bool{}
	for _, ev := range codecEvents() {
		typ, data, err := agent.MarshalEvent(ev)
		if err != nil {
			t.Fatalf("%T: %v", ev, err)
		}
		seen[typ] = true
		back, err := agent.UnmarshalEvent(typ, data)
		if err != nil {
			t.Fatalf("%T: %v (%s)", ev, err, data)
		}
		if !reflect.DeepEqual(back, ev) {
			t.Errorf("%s: got %#v, want %#v", typ, back, ev)
		}
	}
	if len(seen) != 14 {
		t.Errorf("event types covered: %d, want all 14", len(seen))
	}
}

func TestUnmarshalEventRefusesWhatItDidNotWrite(t *testing.T) {
	for _, c := range []struct{ typ, data string }{
		{"nope", `{}`},
		{agent.TypePartDelta, `[`},
		{agent.TypePartEnded, `{"Part":{"role":"assistant","content":[]}}`},
		{agent.TypePartEnded, `{"Part":{"role":"assistant","content":[{"type":"bogus"}]}}`},
	} {
		if ev, err := agent.UnmarshalEvent(c.typ, []byte(c.data)); err == nil {
			t.Errorf("%s %s: decoded %#v, want an error", c.typ, c.data, ev)
		}
	}
}

// FuzzEventCodec: whatever a log holds, decoding never panics, and what
// decodes encodes to something that decodes to the same event.
func FuzzEventCodec(f *testing.F) {
	for _, ev := range codecEvents() {
		typ, data, _ := agent.MarshalEvent(ev)
		f.Add(typ, data)
	}
	f.Add(agent.TypePartDelta, []byte(`{"Kind":1,"ID":"a\"b","Delta":"\u00e9\n\ud83d\ude00"}`))
	f.Add(agent.TypePartDelta, []byte(`{"Kind":1,"ID":"a","Delta":"x"} `))
	f.Add(agent.TypePartEnded, []byte(`{"Kind":1,"ID":"a","Part":{"schema_version":"`+cmf.SchemaVersion+`","role":"assistant","content":[{"content_type":"text","text":"\u00e9\n"}]}}`))
	f.Fuzz(func(t *testing.T, typ string, data []byte) {
		ev, err := agent.UnmarshalEvent(typ, data)
		if err != nil {
			return
		}
		switch typ { // the hand-written readers agree with encoding/json
		case agent.TypePartDelta:
			var std agent.PartDelta
			if json.Unmarshal(data, &std) == nil && !reflect.DeepEqual(ev, &std) {
				t.Fatalf("%s: read %#v, encoding/json %#v", data, ev, &std)
			}
		case agent.TypePartEnded:
			var w struct {
				Kind       agent.PartKind
				ID         string
				Part       *cmf.Message
				InputError string
				Labels     []string
			}
			if json.Unmarshal(data, &w) == nil && w.Part != nil && len(w.Part.Content) == 1 {
				std := &agent.PartEnded{Kind: w.Kind, ID: w.ID, Part: w.Part.Content[0], InputError: w.InputError, Labels: w.Labels}
				if !reflect.DeepEqual(ev, std) {
					t.Fatalf("%s: read %#v, encoding/json %#v", data, ev, std)
				}
			}
		}
		typ2, data2, err := agent.MarshalEvent(ev)
		if err != nil {
			t.Fatalf("re-marshal: %v", err)
		}
		back, err := agent.UnmarshalEvent(typ2, data2)
		if err != nil {
			t.Fatalf("re-decode %s: %v", data2, err)
		}
		_, data3, _ := agent.MarshalEvent(back)
		if string(data3) != string(data2) {
			t.Fatalf("not stable: %s then %s", data2, data3)
		}
	})
}
