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
	chat, err := vercelai.Handler(loop,
		uiadapter.WithInstructions("You are a helpful assistant."),
		uiadapter.WithSecret([]byte("same-secret-on-every-replica")),
	)
	if err != nil {
		log.Fatal(err) // a configuration that cannot work says which option to fix
	}
	mux := http.NewServeMux()
	mux.Handle("POST /api/chat", chat)
	_ = http.ListenAndServe // e.g. http.ListenAndServe("127.0.0.1:8080", mux)
}
