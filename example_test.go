package agentui_test

import (
	"errors"
	"fmt"
	"log"
	"net/http"

	"github.com/agentui/agentui"
	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/uiadapter"
	"github.com/agentui/agentui/webui"
)

// Mount both protocols and every route over stored chats on a ServeMux,
// with history. This is README.md's snippet (TestREADMESnippet keeps
// them the same, and scripts/install-check.sh builds it outside the
// repository).
func Example() {
	// userFromSession stands in for your authentication.
	userFromSession := func(r *http.Request) (string, error) {
		if c, err := r.Cookie("session"); err == nil {
			return c.Value, nil
		}
		return "", errors.New("not signed in")
	}

	// README: begin
	loop, err := agent.New(demo.New(), agent.WithTools(demo.Tools()...))
	if err != nil {
		log.Fatal(err)
	}
	api, err := agentui.New(loop,
		uiadapter.WithInstructions("You are a helpful assistant."),
		uiadapter.WithSecret([]byte("at least 32 bytes, the same on every replica")),
		uiadapter.WithStore(history.NewMemory()), // or history/redisstore for many replicas
		uiadapter.WithScope(userFromSession),     // whose chats a request may touch
	)
	if err != nil {
		log.Fatal(err) // a configuration that cannot work says which option to fix
	}
	mux := http.NewServeMux()
	api.Mount(mux, "/api")               // useChat, AG-UI, reload, resume, stop, the chat list
	mux.Handle("GET /", webui.Handler()) // the chat page, if you want it
	// README: end

	for _, r := range api.Routes("/api") {
		fmt.Println(r.Pattern())
	}
	// Output:
	// POST /api/chat
	// GET /api/chat
	// GET /api/chat/{id}
	// GET /api/chat/{id}/stream
	// POST /api/chat/{id}/stop
	// PATCH /api/chat/{id}
	// DELETE /api/chat/{id}
	// GET /api/chat/{id}/tree
	// POST /api/chat/{id}/branch
	// GET /api/chat/{id}/queue
	// DELETE /api/chat/{id}/queue/{message}
	// GET /api/chats
	// GET /api/models
	// POST /api/agui
	// POST /api/agui/connect
	// POST /api/agui/{id}/stop
	// GET /api/agui/{id}/tree
	// POST /api/agui/{id}/branch
}
