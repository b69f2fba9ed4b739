// Package server assembles the agentui binary's HTTP server from its
// configuration. It is a package (not main) so tests can run the same
// server the binary runs.
package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/agent/openai"
	"github.com/agentui/agentui/protocols/agui"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

// Instructions is the system prompt the binary gives every model.
const Instructions = "You are the agentui demo assistant. Answer briefly. Use the tools when they help: " +
	"get_weather for the weather in a city, delete_file to delete a file (the user must approve it), " +
	"get_location to learn where the user is (the user's browser answers)."

// Config is the server's configuration; see docs/configuration.md.
type Config struct {
	Model     string        // "demo" or "openai:<model>"
	History   string        // "none"
	Secret    string        // approval signing key; random when empty
	DemoDelay time.Duration // pause between words of the demo model's prose
	Logger    *slog.Logger
}

// Server is the assembled server.
type Server struct {
	handler http.Handler
	// Description says what the server runs ("model demo, history none").
	Description string
	// RandomSecret is true when no secret was configured.
	RandomSecret bool
}

// New builds the server.
func New(cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	model, err := newModel(cfg)
	if err != nil {
		return nil, err
	}
	loop, err := agent.New(model, agent.WithTools(demo.Tools()...))
	if err != nil {
		return nil, err
	}
	switch cfg.History {
	case "", "none":
	default:
		return nil, fmt.Errorf("unknown -history %q (want none)", cfg.History)
	}
	s := &Server{Description: fmt.Sprintf("model %s, history none", cfg.Model)}
	key := []byte(cfg.Secret)
	if cfg.Secret == "" {
		key, s.RandomSecret = uiadapter.RandomKey(), true
	}
	opts := []uiadapter.Option{
		uiadapter.WithInstructions(Instructions),
		uiadapter.WithLogger(cfg.Logger),
		uiadapter.WithSecret(key),
	}
	mux := http.NewServeMux()
	mux.Handle("POST /api/chat", vercelai.Handler(loop, opts...))
	mux.Handle("POST /api/agui", agui.Handler(loop, opts...))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	s.handler = mux
	return s, nil
}

// Handler serves every route.
func (s *Server) Handler() http.Handler { return s.handler }

func newModel(cfg Config) (agent.Model, error) {
	switch {
	case cfg.Model == "demo":
		return demo.New(demo.WithWordDelay(cfg.DemoDelay)), nil
	case strings.HasPrefix(cfg.Model, "openai:"):
		return openai.New(strings.TrimPrefix(cfg.Model, "openai:"))
	case cfg.Model == "":
		return nil, errors.New("no -model")
	}
	return nil, fmt.Errorf("unknown -model %q (want demo or openai:<model>)", cfg.Model)
}
