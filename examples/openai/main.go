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

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/agent/openai"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/protocols/agui"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8084", "address to listen on")
	model := flag.String("model", "gpt-4o-mini", "model name")
	flag.Parse()

	// The key and the endpoint come from OPENAI_API_KEY and OPENAI_BASE_URL.
	m, err := openai.New(*model)
	if err != nil {
		log.Fatal(err)
	}
	loop, err := agent.New(m, agent.WithTools(demo.Tools()...))
	if err != nil {
		log.Fatal(err)
	}
	opts := []uiadapter.Option{
		uiadapter.WithInstructions("You are a helpful assistant. Use the tools when they help."),
		uiadapter.WithStore(history.NewMemory()),
		uiadapter.WithScope(uiadapter.SingleScope),
	}
	chat, err := vercelai.Handler(loop, opts...)
	if err != nil {
		log.Fatal(err)
	}
	aguiChat, err := agui.Handler(loop, opts...)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /api/chat", chat)
	mux.Handle("GET /api/chat/{id}", vercelai.ConversationHandler(chat, nil))
	mux.Handle("POST /api/agui", aguiChat)

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("openai example listening on http://%s (model %s)\n", ln.Addr(), *model)
	log.Fatal(http.Serve(ln, mux))
}
