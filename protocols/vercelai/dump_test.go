package vercelai

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/cmf"
)

// summary is a UI message reduced to what a reload must reproduce.
func summary(msgs []UIMessage) []string {
	var out []string
	for _, m := range msgs {
		var parts []string
		for _, p := range m.Parts {
			s := p.Type
			switch {
			case p.IsTool():
				s += "/" + p.State
				if p.Approval != nil {
					s += "/approval:" + p.Approval.ID
				}
			case p.Text != nil:
				s += "=" + *p.Text
			}
			parts = append(parts, s)
		}
		out = append(out, m.ID+" "+m.Role+": "+strings.Join(parts, " | "))
	}
	return out
}

// What the client held at the end of the recorded flows survives
// decode → Dump with its ids, steps and tool states.
func TestDumpRoundTripsRecordedMessages(t *testing.T) {
	for _, name := range []string{"approval-final-messages.json", "client-tool-final-messages.json", "deny-final-messages.json"} {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "samples", name))
			if err != nil {
				t.Fatal(err)
			}
			var original []UIMessage
			if err := json.Unmarshal(raw, &original); err != nil {
				t.Fatal(err)
			}
			body, _ := json.Marshal(map[string]any{"id": "c", "messages": original})
			turn, err := New().Decode(httptest.NewRequest("POST", "/", nil), body)
			if err != nil {
				t.Fatal(err)
			}
			got, want := summary(Dump(turn.Messages)), summary(original)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("dump:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// A conversation the server recorded dumps as useChat built it live: one
// assistant message per turn, a step-start per step, tool states.
func TestDumpRecordedConversation(t *testing.T) {
	loop, err := agent.New(demo.New(), agent.WithTools(demo.Tools()...))
	if err != nil {
		t.Fatal(err)
	}
	var conv []cmf.Message
	turn := func(text string, firstID string, resume ...agent.Resolution) *agent.RunFinished {
		if text != "" {
			u := cmf.Message{Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: text}}}
			u.SetID("u-" + text)
			conv = append(conv, u)
		}
		rec := agent.NewRecorder()
		var fin *agent.RunFinished
		for ev, err := range loop.Run(context.Background(), &agent.Input{Messages: conv, Resume: resume, MessageID: firstID}) {
			if err != nil {
				t.Fatal(err)
			}
			rec.Add(ev)
			if f, ok := ev.(*agent.RunFinished); ok {
				fin = f
			}
		}
		conv = append(conv, rec.Messages()...)
		return fin
	}
	turn("think: weather in Oslo", "a1")
	fin := turn("delete /tmp/a", "a2")
	turn("", "", agent.Resolution{ToolCallID: fin.Pending[0].ToolCallID, Kind: agent.Deny, Reason: "keep it"})
	fin = turn("delete /tmp/b", "a3")
	turn("", "", agent.Resolution{ToolCallID: fin.Pending[0].ToolCallID, Kind: agent.Approve})
	turn("where am i", "a4") // left waiting for the client

	got := summary(Dump(conv))
	want := []string{
		"u-think: weather in Oslo user: text=think: weather in Oslo",
		"a1 assistant: step-start | reasoning=Thinking about: think: weather in Oslo | tool-get_weather/output-available | step-start | text=The weather in Oslo is sunny, 21°C.",
		"u-delete /tmp/a user: text=delete /tmp/a",
		"a2 assistant: step-start | tool-delete_file/output-denied/approval:* | step-start | text=Okay, I did not delete /tmp/a (reason: keep it).",
		"u-delete /tmp/b user: text=delete /tmp/b",
		"a3 assistant: step-start | tool-delete_file/output-available/approval:* | step-start | text=Deleted /tmp/b.",
		"u-where am i user: text=where am i",
		"a4 assistant: step-start | tool-get_location/input-available",
	}
	for i := range got {
		got[i] = approvalIDs.ReplaceAllString(got[i], "approval:*")
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("dump:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Dumped messages encode as the SDK expects: denied parts carry
	// approved:false with the reason, approved ones approved:true.
	b, _ := json.Marshal(Dump(conv))
	for _, s := range []string{`"state":"output-denied"`, `"approved":false,"reason":"keep it"`, `"approved":true`, `"output":{"deleted":"/tmp/b"}`} {
		if !strings.Contains(string(b), s) {
			t.Errorf("dump JSON lacks %s", s)
		}
	}
}

var approvalIDs = regexp.MustCompile(`approval:[0-9a-f-]+`)

// Files (by URL and inline), sources, documents and data parts survive
// decode → Dump unchanged, in place.
func TestDumpRoundTripsEveryPartType(t *testing.T) {
	messages := `[
{"id":"u1","role":"user","parts":[{"type":"text","text":"see","state":"done"},{"type":"file","mediaType":"image/png","url":"https://example.com/a.png"},{"type":"file","mediaType":"application/pdf","filename":"r.pdf","url":"data:application/pdf;base64,JVBERg=="}]},
{"id":"a1","role":"assistant","parts":[{"type":"step-start"},{"type":"reasoning","text":"hm","state":"done"},{"type":"source-url","sourceId":"s1","url":"https://example.com","title":"Ex"},{"type":"source-document","sourceId":"s2","mediaType":"application/pdf","title":"Doc","filename":"d.pdf"},{"type":"data-weather","id":"d1","data":{"t":1}},{"type":"text","text":"ok","state":"done"}]},
{"id":"u2","role":"user","parts":[{"type":"text","text":"next","state":"done"}]}]`
	turn, err := New().Decode(httptest.NewRequest("POST", "/", nil), []byte(`{"id":"c","messages":`+messages+`}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(Dump(turn.Messages))
	var a, b any
	_ = json.Unmarshal(got, &a)
	_ = json.Unmarshal([]byte(messages), &b)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("dump:\n%s\nwant:\n%s", got, messages)
	}
}
