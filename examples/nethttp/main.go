// Command nethttp is the smallest complete agentui server: every route of
// both protocols (agentui.New, Mount) on a net/http ServeMux, the chat
// page, the demo model with its tools, and in-memory history.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"

	"github.com/agentui/agentui"
	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/uiadapter"
	"github.com/agentui/agentui/webui"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "address to listen on")
	flag.Parse()

	loop, err := agent.New(demo.New(), agent.WithTools(demo.Tools()...))
	if err != nil {
		log.Fatal(err)
	}
	api, err := agentui.New(loop,
		uiadapter.WithInstructions("You are a helpful assistant."),
		uiadapter.WithStore(history.NewMemory()),
		// One user: every request sees every chat. A real app derives the
		// scope from its authentication.
		uiadapter.WithScope(uiadapter.SingleScope),
	)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	api.Mount(mux, "/api")               // useChat, AG-UI, reload, resume, stop, the chat list
	mux.Handle("GET /", webui.Handler()) // the chat page

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("nethttp example listening on http://%s\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}
