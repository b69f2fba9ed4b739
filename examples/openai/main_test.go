package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentui/agentui/internal/testutil"
)

// The example against an in-process OpenAI-compatible endpoint.
func TestExample(t *testing.T) {
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer test-key" {
			http.Error(w, `{"error":{"message":"no","code":"invalid_api_key"}}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range []string{`{"content":"Hello from "}`, `{"content":"the model."}`} {
			fmt.Fprintf(w, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":null}]}\n\n", c)
		}
		fmt.Fprint(w, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer fake.Close()
	p := testutil.RunProgram(t, ".", []string{"OPENAI_BASE_URL=" + fake.URL + "/v1", "OPENAI_API_KEY=test-key"}, "-addr", "127.0.0.1:0", "-model", "m")
	if got := testutil.PostStream(t, p.URL+"/api/chat", testutil.UserMessage("c1", "m1", "hi")).Text(); got != "Hello from the model." {
		t.Fatalf("reply %q", got)
	}
}
