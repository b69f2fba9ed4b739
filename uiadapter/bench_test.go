package uiadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/internal/turn"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

// conversation is n messages of a typical chat: user text, assistant text
// with a tool call, the tool's result. When n cuts the last exchange
// short, its reply has no tool call: every call has its result.
func conversation(n int) []cmf.Message {
	msgs := make([]cmf.Message, 0, n)
	for i := 0; len(msgs) < n; i++ {
		u := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{
			cmf.Text{Text: "What is the weather in Paris today? Please be brief."},
			cmf.Image{MediaSource: cmf.MediaSource{Type: cmf.SourceURL, Data: "https://example.com/cat.png", MediaType: "image/png"}},
		}}
		u.SetID(fmt.Sprintf("u%d", i))
		call := fmt.Sprintf("call_%d", i)
		a := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant, Content: []cmf.Part{
			cmf.Text{Text: "Let me check the weather for you."},
			cmf.ToolCall{ToolCallID: call, Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
		}}
		a.SetID(fmt.Sprintf("a%d", i))
		r := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleTool, Content: []cmf.Part{
			cmf.ToolResult{ToolCallID: call, ToolName: "get_weather", Content: json.RawMessage(`{"city":"Paris","forecast":"sunny","temperature_c":21}`)},
		}}
		r.SetID(fmt.Sprintf("r%d", i))
		msgs = append(msgs, u, a, r)
	}
	msgs = msgs[:n]
	if last := &msgs[n-1]; last.Role == cmf.RoleAssistant {
		last.Content = last.Content[:1]
	}
	return msgs
}

// BenchmarkSanitize200: the trust rules over a 200-message client history.
func BenchmarkSanitize200(b *testing.B) {
	msgs := conversation(200)
	policy := turn.Policy{AllowedSchemes: []string{"http", "https"}}
	b.ReportAllocs()
	for b.Loop() {
		out, _ := turn.Sanitize(msgs, nil, policy)
		if len(out) == 0 {
			b.Fatal("nothing kept")
		}
	}
}

// quiet is an agent that answers at once with one short text.
type quiet struct{}

func (quiet) Run(context.Context, *agent.Input) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		for _, ev := range []agent.Event{
			&agent.RunStarted{MessageID: "m"}, &agent.StepStarted{Step: 1, MessageID: "m"},
			&agent.PartStarted{Kind: agent.PartText, ID: "t"},
			&agent.PartEnded{Kind: agent.PartText, ID: "t", Part: cmf.Text{Text: "ok"}},
			&agent.StepFinished{Step: 1}, &agent.RunFinished{StopReason: cmf.StopEnd},
		} {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// BenchmarkTurnWithHistory200: one whole request on a conversation that
// holds 200 messages, in the memory store: lock, load, merge, append the
// user message, run (a trivial agent), save the reply, unlock. The
// conversation is cut back to 200 messages every op.
func BenchmarkTurnWithHistory200(b *testing.B) {
	store := history.NewMemory()
	key := history.Key{Scope: "single", Chat: "c"} // uiadapter.SingleScope's scope
	v, _ := store.Write(context.Background(), key, 0, history.KeepAll, conversation(200)...)
	h := testutil.Must(vercelai.Handler(quiet{}, uiadapter.WithStore(store), uiadapter.WithScope(uiadapter.SingleScope)))
	body := `{"id":"c","messages":[{"id":"new","role":"user","parts":[{"type":"text","text":"and tomorrow?"}]}]}`
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/api/chat", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := &testutil.DiscardWriter{}
		h.ServeHTTP(w, req)
		b.StopTimer()
		if w.Status != http.StatusOK {
			b.Fatalf("status %d", w.Status)
		}
		conv, _ := store.Load(context.Background(), key)
		if len(conv.Messages) != 202 {
			b.Fatalf("the conversation holds %d messages", len(conv.Messages))
		}
		v, _ = store.Write(context.Background(), key, conv.Version, 200)
		b.StartTimer()
	}
	_ = v
}
