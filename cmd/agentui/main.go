// Command agentui serves AI chat frontends: the Vercel AI SDK UI message
// stream at POST /api/chat (and GET /api/chat/{id} for reloads) and AG-UI at
// POST /api/agui. Every flag has an AGENTUI_… environment twin;
// see docs/configuration.md.
package main

import (
	"context"
	"embed"
	"errors"
	"expvar"
	"flag"
	"fmt"
	iofs "io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/agentui/agentui/internal/server"
)

// webdist is the built chat page (make web builds it from web/).
//
//go:embed all:webdist
var webdist embed.FS

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "agentui:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("agentui", flag.ContinueOnError)
	addr := fs.String("addr", env("AGENTUI_ADDR", "127.0.0.1:8080"), "address to listen on (env AGENTUI_ADDR)")
	model := fs.String("model", env("AGENTUI_MODEL", "demo"), "model: demo, or openai:<model> with OPENAI_API_KEY and OPENAI_BASE_URL (env AGENTUI_MODEL)")
	history := fs.String("history", env("AGENTUI_HISTORY", "memory"), "where conversations are kept: memory, none, redis://host:port/db, rediss://…, redis+cluster://host:port,host:port (env AGENTUI_HISTORY)")
	ttlDefault, err := time.ParseDuration(env("AGENTUI_HISTORY_TTL", "24h"))
	if err != nil {
		return fmt.Errorf("AGENTUI_HISTORY_TTL: %w", err)
	}
	historyTTL := fs.Duration("history-ttl", ttlDefault, "conversations expire this long after their last write; 0 keeps them (env AGENTUI_HISTORY_TTL)")
	historyPrefix := fs.String("history-prefix", env("AGENTUI_HISTORY_PREFIX", "agentui:"), "prefix of the Redis keys (env AGENTUI_HISTORY_PREFIX)")
	secret := fs.String("secret", env("AGENTUI_SECRET", ""), "key that signs approval requests and scope cookies; random per process when empty (env AGENTUI_SECRET)")
	logLevel := fs.String("log-level", env("AGENTUI_LOG_LEVEL", "info"), "debug, info, warn or error (env AGENTUI_LOG_LEVEL)")
	delayDefault, err := time.ParseDuration(env("AGENTUI_DEMO_DELAY", "25ms"))
	if err != nil {
		return fmt.Errorf("AGENTUI_DEMO_DELAY: %w", err)
	}
	demoDelay := fs.Duration("demo-delay", delayDefault, "pause between words of the demo model's replies (env AGENTUI_DEMO_DELAY)")
	debugAddr := fs.String("debug-addr", env("AGENTUI_DEBUG_ADDR", ""), "serve /debug/pprof and /debug/vars on this address; off when empty (env AGENTUI_DEBUG_ADDR)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	page, err := iofs.Sub(webdist, "webdist")
	if err != nil {
		return err
	}
	srv, err := server.New(server.Config{Web: page, Model: *model, History: *history, HistoryTTL: *historyTTL, HistoryPrefix: *historyPrefix, Secret: *secret, DemoDelay: *demoDelay, Logger: logger})
	if err != nil {
		return err
	}
	defer srv.Close()
	if srv.RandomSecret {
		logger.Warn("no -secret: a random key signs approval requests and scope cookies, so pending approvals and browsers' chats do not survive a restart")
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Printf("agentui listening on http://%s (%s)\n", ln.Addr(), srv.Description)

	if *debugAddr != "" {
		dl, err := net.Listen("tcp", *debugAddr)
		if err != nil {
			return err
		}
		logger.Info("debug endpoints", "addr", "http://"+dl.Addr().String()+"/debug/pprof/")
		go func() { _ = http.Serve(dl, debugMux()) }()
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// debugMux serves the profiler and expvar, never on the public listener.
func debugMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("/debug/vars", expvar.Handler())
	return mux
}

func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && strings.TrimSpace(v) != "" {
		return v
	}
	return def
}
