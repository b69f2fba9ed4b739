package vercelai_test

import (
	"log"
	"net/http"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

// Mount a useChat endpoint on a ServeMux: the demo model with its tools,
// a system prompt, and a fixed secret for approval signatures.
func ExampleHandler() {
	loop, err := agent.New(demo.New(), agent.WithTools(demo.Tools()...))
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /api/chat", vercelai.Handler(loop,
		uiadapter.WithInstructions("You are a helpful assistant."),
		uiadapter.WithSecret([]byte("same-secret-on-every-replica")),
	))
	_ = http.ListenAndServe // e.g. http.ListenAndServe("127.0.0.1:8080", mux)
}
