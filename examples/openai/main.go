// Command openai serves agentui with a real model: any OpenAI-compatible
// Chat Completions endpoint, configured by OPENAI_API_KEY and
// OPENAI_BASE_URL (OpenAI itself, vLLM, Ollama, LM Studio, gateways).
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/agentui/agentui"
	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/agent/openai"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/uiadapter"
	"github.com/agentui/agentui/webui"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8084", "address to listen on")
	model := flag.String("model", "gpt-4o-mini", "model name")
	flag.Parse()

	// The key and the endpoint come from OPENAI_API_KEY and OPENAI_BASE_URL.
	// Without a key every reply would fail: say so now, in one line.
	if strings.TrimSpace(os.Getenv("OPENAI_API_KEY")) == "" {
		fmt.Fprintln(os.Stderr, "openai: set OPENAI_API_KEY (any value for a server that takes none, such as Ollama or LM Studio, with OPENAI_BASE_URL)")
		os.Exit(1)
	}
	m, err := openai.New(*model)
	if err != nil {
		log.Fatal(err)
	}
	loop, err := agent.New(m, agent.WithTools(demo.Tools()...))
	if err != nil {
		log.Fatal(err)
	}
	api, err := agentui.New(loop,
		uiadapter.WithInstructions("You are a helpful assistant. Use the tools when they help."),
		uiadapter.WithStore(history.NewMemory()),
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
	fmt.Printf("openai example listening on http://%s (model %s)\n", ln.Addr(), *model)
	log.Fatal(http.Serve(ln, mux))
}
