package vercelai_test

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

// cachingModel answers with usage of every kind: 100 input tokens, 60 of
// them read from the prompt cache and 30 written to it; 20 output, 5 of
// them reasoning.
type cachingModel struct{}

func (cachingModel) Stream(context.Context, *agent.Request) iter.Seq2[agent.Chunk, error] {
	return func(yield func(agent.Chunk, error) bool) {
		if yield(agent.Chunk{Kind: agent.ChunkText, Delta: "Hi."}, nil) {
			yield(agent.Chunk{Kind: agent.ChunkFinish, Model: "m-1", Usage: agent.Usage{
				InputTokens: 100, CachedInputTokens: 60, CacheWriteTokens: 30, OutputTokens: 20, ReasoningTokens: 5}}, nil)
		}
	}
}

// A reply's usage reaches useChat's message metadata in the AI SDK's
// shape: AI SDK 6's names by default (cache writes, which AI SDK 6 names
// only in inputTokenDetails, there), AI SDK 7's with WithAISDK7; the
// stored conversation returns the same.
func TestUsageInTheAISDKShape(t *testing.T) {
	for _, c := range []struct {
		name string
		opts []vercelai.Option
		want string
	}{
		{"ai6", nil, `{"inputTokens":100,"outputTokens":20,"totalTokens":120,"reasoningTokens":5,"cachedInputTokens":60,` +
			`"inputTokenDetails":{"noCacheTokens":10,"cacheReadTokens":60,"cacheWriteTokens":30}}`},
		{"ai7", []vercelai.Option{vercelai.WithAISDK7()}, `{"inputTokens":100,"inputTokenDetails":{"noCacheTokens":10,"cacheReadTokens":60,"cacheWriteTokens":30},` +
			`"outputTokens":20,"outputTokenDetails":{"textTokens":15,"reasoningTokens":5},"totalTokens":120}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := testutil.Must(uiadapter.New(vercelai.New(c.opts...), testutil.Must(agent.New(cachingModel{})),
				uiadapter.WithStore(history.NewMemory()), uiadapter.WithScope(uiadapter.SingleScope)))
			t.Cleanup(func() { testutil.ShutdownNow(h) })
			mux := http.NewServeMux()
			mux.Handle("POST /api/chat", h)
			mux.Handle("GET /api/chat/{id}", vercelai.ConversationHandler(h, nil))
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			fin := testutil.PostStream(t, srv.URL+"/api/chat", userBodyIn("u", "u1", "hello")).Find("finish")
			var want any
			_ = json.Unmarshal([]byte(c.want), &want)
			live := fin["messageMetadata"].(map[string]any)["usage"]
			var stored map[string]json.RawMessage
			_ = json.Unmarshal(conversation(t, srv.URL+"/api/chat/u")[1].Metadata, &stored)
			if !reflect.DeepEqual(live, want) || string(stored["usage"]) != c.want {
				t.Fatalf("usage\nlive   %s\nstored %s\nwant   %s", live, stored["usage"], c.want)
			}
		})
	}
}
