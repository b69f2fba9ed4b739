package wire_test

import (
	"encoding/json"
	"testing"

	"github.com/agentui/agentui/internal/wire"
)

// Reply metadata is agentui's fields, then the application's sorted by
// key; an application value under a key agentui uses, or one that is not
// JSON, is left out, and the result is always JSON.
func TestReplyMetadataJSON(t *testing.T) {
	md := wire.ReplyMetadata{
		CreatedAt: 1700000000000, Model: `m"1`, FinishReason: "stop",
		Usage:  &wire.TokenUsage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15, CacheWriteTokens: 2},
		Labels: []string{"pii", "secret"},
		App: map[string]json.RawMessage{
			"z": json.RawMessage(`{"a": [1, 2]}`), "usage": json.RawMessage(`"forged"`),
			"bad": json.RawMessage(`{`), "quo\"te": json.RawMessage(`true`),
		},
	}
	got, err := json.Marshal(md)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"createdAt":1700000000000,"model":"m\"1","finishReason":"stop",` +
		`"usage":{"inputTokens":10,"outputTokens":5,"totalTokens":15,"cacheWriteInputTokens":2},` +
		`"labels":["pii","secret"],"quo\"te":true,"z":{"a":[1,2]}}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if got, _ := json.Marshal(wire.ReplyMetadata{}); string(got) != `{}` {
		t.Fatalf("empty: %s", got)
	}
	// A protocol renders the usage in its own shape, appending to its frame.
	only := wire.ReplyMetadata{Usage: &wire.TokenUsage{InputTokens: 1}}
	shape := func(b []byte, u *wire.TokenUsage) []byte { return append(b, `"own shape"`...) }
	if got := only.AppendJSON([]byte(`"messageMetadata":`), shape); string(got) != `"messageMetadata":{"usage":"own shape"}` {
		t.Fatalf("own usage shape: %s", got)
	}
}
