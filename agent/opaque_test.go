package agent

import (
	"context"
	"reflect"
	"testing"

	"github.com/agentui/agentui/cmf"
)

// A provider's values reach the parts they came with, in order, and the
// next model call sees them in the conversation: what a native model
// replays to its provider.
func TestLoopKeepsOpaqueValuesWithTheirParts(t *testing.T) {
	sig := func(d string) *cmf.Opaque { return &cmf.Opaque{Provider: "anthropic", Model: "claude-x", Data: d} }
	m := &scripted{replies: []reply{
		{chunks: []Chunk{
			{Kind: ChunkThinking, Delta: "first"},
			{Kind: ChunkThinking, Delta: " thought", Opaque: sig("s1")}, // ends the part
			{Kind: ChunkThinking, Delta: "second", Opaque: sig("s2")},   // a part of its own
			{Kind: ChunkRedactedThinking, Opaque: sig("enc")},
			{Kind: ChunkRedactedThinking}, // nothing to keep
			{Kind: ChunkToolCall, ToolCallID: "w", ToolName: "get_weather", Opaque: sig("call")},
			{Kind: ChunkToolCall, ToolCallID: "w", Delta: `{"city":"Oslo"}`},
			finish(cmf.StopCall),
		}},
		{chunks: []Chunk{
			{Kind: ChunkText, Delta: "Sunny"},
			{Kind: ChunkText, Delta: ".", Opaque: sig("text")},
			{Kind: ChunkSource, URL: "https://example.com/w", Name: "Weather", DataID: "src1"},
			{Kind: ChunkSource}, // no URL: ignored
			finish(cmf.StopEnd),
		}},
	}}
	events, err := collect(t, newLoop(t, m, nil), context.Background(), &Input{Messages: []cmf.Message{userMsg("weather?")}, MessageID: "a1"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := record(events).Messages()
	want := []cmf.Part{
		cmf.Thinking{Text: "first thought", Opaque: sig("s1")},
		cmf.Thinking{Text: "second", Opaque: sig("s2")},
		cmf.RedactedThinking{Opaque: *sig("enc")},
		cmf.ToolCall{ToolCallID: "w", Name: "get_weather", Arguments: []byte(`{"city":"Oslo"}`), Opaque: sig("call")},
	}
	if !reflect.DeepEqual(msgs[0].Content, want) {
		t.Fatalf("first step stored\n %#v\nwant\n %#v", msgs[0].Content, want)
	}
	if got := m.requests[1].Messages; len(got) < 3 || !reflect.DeepEqual(got[1].Content, want) {
		t.Fatalf("the second call did not see the first step's parts as stored: %+v", got)
	}
	// The source is stored as it arrives, while the text still streams.
	reply := msgs[len(msgs)-1]
	if len(reply.Content) != 2 {
		t.Fatalf("reply = %#v", reply.Content)
	}
	if tx, ok := reply.Content[1].(cmf.Text); !ok || tx.Text != "Sunny." || !reflect.DeepEqual(tx.Opaque, sig("text")) {
		t.Fatalf("reply = %#v", reply.Content)
	}
	srcs := all[*Source](events)
	if len(srcs) != 1 || *srcs[0] != (Source{ID: "src1", URL: "https://example.com/w", Title: "Weather"}) {
		t.Fatalf("sources = %+v", srcs)
	}
	checkBalance(t, events, err)
}

// A step the provider paused (pause_turn) is not the end of the reply:
// the loop calls the model again with what the step produced.
func TestLoopGoesOnAfterPauseTurn(t *testing.T) {
	m := &scripted{replies: []reply{
		{chunks: []Chunk{{Kind: ChunkText, Delta: "Searching…"}, finish(cmf.StopPauseTurn)}},
		{chunks: text("Found it.")},
	}}
	events, err := collect(t, newLoop(t, m, nil), context.Background(), &Input{Messages: []cmf.Message{userMsg("search")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.requests) != 2 {
		t.Fatalf("%d model calls, want 2", len(m.requests))
	}
	prev := m.requests[1].Messages
	if n := len(prev); n != 2 || prev[1].Role != cmf.RoleAssistant || prev[1].Text() != "Searching…" {
		t.Fatalf("the second call saw %+v", prev)
	}
	if fin := last[*RunFinished](t, events); fin.StopReason != cmf.StopEnd {
		t.Fatalf("finished %s", fin.StopReason)
	}
}
