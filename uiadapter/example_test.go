package uiadapter_test

import (
	"errors"
	"log"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/protocols/agui"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
	"github.com/agentui/agentui/webui"
)

// Mount both protocols, with history, on a ServeMux, one handler at a
// time (package agentui mounts them all with one call). This is
// docs/extending.md's snippet (TestExtendingSnippet keeps them the same).
func Example_mount() {
	// userFromSession stands in for your authentication.
	userFromSession := func(r *http.Request) (string, error) {
		if c, err := r.Cookie("session"); err == nil {
			return c.Value, nil
		}
		return "", errors.New("not signed in")
	}

	loop, err := agent.New(demo.New(), agent.WithTools(demo.Tools()...))
	if err != nil {
		log.Fatal(err)
	}
	// extending.md: begin
	opts := []uiadapter.Option{
		uiadapter.WithInstructions("You are a helpful assistant."),
		uiadapter.WithSecret([]byte("at least 32 bytes, the same on every replica")),
		uiadapter.WithStore(history.NewMemory()), // or history/redisstore for many replicas
		uiadapter.WithScope(userFromSession),     // whose chats a request may touch
	}
	chat, err := vercelai.Handler(loop, opts...)
	if err != nil {
		log.Fatal(err) // a configuration that cannot work says which option to fix
	}
	aguiChat, err := agui.Handler(loop, opts...)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /api/chat", chat)                                        // useChat
	mux.Handle("GET /api/chat", chat.WebSocketHandler())                      // useChat over a WebSocket (AI SDK 7)
	mux.Handle("GET /api/chat/{id}", vercelai.ConversationHandler(chat, nil)) // reload a chat
	mux.Handle("GET /api/chat/{id}/stream", chat.ResumeHandler(nil))          // useChat({resume: true})
	mux.Handle("POST /api/chat/{id}/stop", chat.StopHandler(nil))             // stop a reply
	mux.Handle("POST /api/agui", aguiChat)                                    // AG-UI HttpAgent, CopilotKit
	mux.Handle("POST /api/agui/connect", aguiChat.ConnectHandler())           // AG-UI reconnect after a reload
	mux.Handle("POST /api/agui/{id}/stop", aguiChat.StopHandler(nil))
	mux.Handle("GET /api/agui/{id}/tree", agui.TreeHandler(aguiChat, nil)) // every branch, as AG-UI messages
	mux.Handle("POST /api/agui/{id}/branch", aguiChat.BranchHandler(nil))  // {"id": "…"}
	mux.Handle("GET /api/chats", chat.ChatsHandler())                      // my chats (both protocols)
	mux.Handle("PATCH /api/chat/{id}", chat.RenameHandler(nil))            // {"title": "…"}
	mux.Handle("DELETE /api/chat/{id}", chat.DeleteHandler(nil))
	mux.Handle("GET /api/chat/{id}/tree", vercelai.TreeHandler(chat, nil))      // every branch (edits, regenerations)
	mux.Handle("POST /api/chat/{id}/branch", chat.BranchHandler(nil))           // {"id": "…"}: make it the active branch
	mux.Handle("GET /api/chat/{id}/queue", chat.QueueHandler(nil))              // messages queued behind a reply
	mux.Handle("DELETE /api/chat/{id}/queue/{message}", chat.QueueHandler(nil)) // remove one
	mux.Handle("GET /", webui.Handler())                                        // the chat page, if you want it
	// extending.md: end

	_ = mux // http.ListenAndServe("127.0.0.1:8080", mux)
	// Output:
}

func TestExtendingSnippet(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(src), "\t// extending.md: begin\n")
	snippet, _, _ := strings.Cut(rest, "\t// extending.md: end\n")
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(snippet, "\n"), "\n") {
		lines = append(lines, strings.TrimPrefix(l, "\t"))
	}
	doc, err := os.ReadFile("../docs/extending.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := "```go\n" + strings.Join(lines, "\n") + "\n```"; !strings.Contains(string(doc), want) {
		t.Fatalf("docs/extending.md does not contain the mounting snippet of Example_mount:\n%s", want)
	}
}
