// Command agentui serves AI chat frontends: the Vercel AI SDK UI message
// stream at POST /api/chat (and GET /api/chat/{id} for reloads) and AG-UI at
// POST /api/agui. Every flag has an AGENTUI_… environment twin;
// see docs/configuration.md.
package main

import (
	"context"
	"errors"
	"expvar"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentui/agentui/edge"
	"github.com/agentui/agentui/internal/gctune"
	"github.com/agentui/agentui/internal/server"
	"github.com/agentui/agentui/limit"
	"github.com/agentui/agentui/mcptools"
	"github.com/agentui/agentui/runlog"
	"github.com/agentui/agentui/telemetry"
	"github.com/agentui/agentui/uiadapter"
	"github.com/agentui/agentui/webui"
	goredis "github.com/redis/go-redis/v9"
)

func main() {
	err := run(os.Args[1:])
	switch {
	case errors.Is(err, errUsage):
		os.Exit(2) // the flag package has said what was wrong, once
	case err != nil:
		fmt.Fprintln(os.Stderr, "agentui:", err)
		os.Exit(1)
	}
}

// errUsage: the command line was wrong, and the flag package said so.
var errUsage = errors.New("usage")

// options are the binary's settings.
type options struct {
	addr, model, history, historyPrefix, secret, logLevel, debugAddr, corsOrigins string
	models, anthropicThinking                                                     string
	rateLimit, tokenLimit, gcMinHeap, scopeLimit, allowedHosts, maxRunOutput      string
	addressRateLimit, addressTokenLimit, trustedProxies, files, mcp               string
	runsPerUser, runsPerAddress, runsTotal, maxResumes                            int
	maxRunTime, bearerTTL                                                         time.Duration
	historyTTL, demoDelay                                                         time.Duration
	bodyTimeout, writeTimeout, idleTimeout, shutdownGrace, lockTTL, runRetention  time.Duration
	envErrs                                                                       map[string]error // by flag name
}

// parse parses the command line: usage errors once (errUsage), no
// arguments beyond the flags, and the environment twins of the flags not
// given must parse.
func (o *options) parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (agentui takes only flags; see -help)", fs.Arg(0))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for name, err := range o.envErrs {
		if !given[name] {
			return err
		}
	}
	return nil
}

// newFlags declares every flag with its AGENTUI_… twin as the default. A
// twin that does not parse is an error only when its flag is not given
// (flag > environment > default): parse reports it.
func newFlags() (*flag.FlagSet, *options, error) {
	fs := flag.NewFlagSet("agentui", flag.ContinueOnError)
	o := &options{envErrs: map[string]error{}}
	str := func(p *string, name, def, usage string) {
		env := "AGENTUI_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		fs.StringVar(p, name, envOr(env, def), usage+" (env "+env+")")
	}
	dur := func(p *time.Duration, name, def, usage string) error {
		env := "AGENTUI_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		d, err := parseDuration(envOr(env, def))
		if err != nil {
			o.envErrs[name] = fmt.Errorf("%s: %w", env, err)
			if d, err = parseDuration(def); err != nil {
				return err
			}
		}
		*p = d
		fs.Var((*durationValue)(p), name, usage+" (env "+env+")")
		return nil
	}
	str(&o.addr, "addr", "127.0.0.1:8080", "address to listen on")
	str(&o.model, "model", "demo", "model: demo, anthropic:<id>, openai-responses:<id>, gemini:<id>, or openai:<id> (any OpenAI-compatible endpoint); keys from ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY (docs/models.md)")
	declareModelFlags(str, o)
	str(&o.history, "history", "memory", "where conversations are kept: memory, none, redis://host:port/db, rediss://…, redis+cluster://host:port,host:port")
	str(&o.historyPrefix, "history-prefix", "agentui:", "prefix of the Redis keys")
	str(&o.files, "files", "", "directory where files that messages carry are kept by reference (with history; replicas share it); empty: a temporary one, removed at exit; none: files stay inline")
	str(&o.mcp, "mcp", "", `a JSON file of MCP servers whose tools the model is offered: {"servers": [{"name": "…", "command": […]} or {"name": "…", "url": "…"}]} (docs/mcp.md)`)
	str(&o.secret, "secret", "", "key that signs approval requests and scope cookies; random per process when empty")
	str(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	str(&o.debugAddr, "debug-addr", "", "serve /debug/pprof and /debug/vars on this address; off when empty")
	str(&o.corsOrigins, "cors-origins", "", "comma-separated origins whose pages may use the API (https://app.example.com,…); same-origin only when empty")
	str(&o.rateLimit, "rate-limit", "", "runs each user (scope; without one, client address) may start, as N/unit (20/m, 500/h); over it a request gets 429; unlimited when empty")
	str(&o.addressRateLimit, "address-rate-limit", "", "runs each client address may start, all its users together, as N/unit; default: the same as -rate-limit; off: no bound")
	str(&o.addressTokenLimit, "address-token-limit", "", "tokens each client address's runs may use, all its users together, as N/unit; default: the same as -token-limit; off: no bound")
	str(&o.trustedProxies, "trusted-proxies", "", "comma-separated addresses and CIDR prefixes of reverse proxies whose X-Forwarded-For names the client address (10.0.0.0/8,127.0.0.1); none when empty: the connection's address is the client's")
	str(&o.gcMinHeap, "gc-min-heap", "64MiB", "the garbage collector lets the heap grow to at least this (KiB, MiB, GiB) before it runs, however small the live heap; above it GOGC applies as usual; 0: Go's own floor (4 MB)")
	str(&o.tokenLimit, "token-limit", "", "tokens each user's runs may use, as N/unit (100000/h); a run that uses up the rest stops after its step; unlimited when empty")
	str(&o.scopeLimit, "scope-limit", "60/h", "anonymous scopes (browser cookies, tokens) one client address may be issued, as N/unit; over it 429; off: no bound")
	str(&o.allowedHosts, "allowed-hosts", "", "comma-separated Host names the server answers to besides localhost, 127.0.0.1 and ::1 (chat.example.com, *.example.com, host:port; * for any); on a loopback -addr only those three when empty, else any")
	num := func(p *int, name string, def int, usage string) {
		env := "AGENTUI_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		n, err := strconv.Atoi(envOr(env, strconv.Itoa(def)))
		if err != nil {
			o.envErrs[name] = fmt.Errorf("%s: %w", env, err)
			n = def
		}
		fs.IntVar(p, name, n, usage+" (env "+env+")")
	}
	num(&o.maxResumes, "max-resumes", uiadapter.DefaultMaxResumes, "streams of running replies each user (scope) may have resumed at once, per protocol (a reload, another tab or device); over it a resume gets 429; 0: no bound")
	num(&o.runsPerUser, "runs-per-user", uiadapter.DefaultRunsPerScope, "replies one user (scope; without one, client address) may have going at once with history; over it a new turn gets 429")
	num(&o.runsPerAddress, "runs-per-address", uiadapter.DefaultRunsPerAddress, "replies one client address may have going at once with history, all its users together; over it a new turn gets 429; 0: no bound")
	num(&o.runsTotal, "runs-total", uiadapter.DefaultRunsTotal, "replies this server may have going at once with history, all users together; over it a new turn gets 429")
	str(&o.maxRunOutput, "max-run-output", "4MiB", "text, reasoning and tool arguments one reply may stream (KiB, MiB); past it the reply is cut, what it said kept")
	if err := dur(&o.maxRunTime, "max-run-time", uiadapter.DefaultMaxRunDuration.String(), "how long one reply may run; past it the reply is cut, what it said kept"); err != nil {
		return nil, nil, err
	}
	if err := dur(&o.bearerTTL, "bearer-ttl", server.DefaultBearerTTL.String(), "how long a bearer token from POST /api/token is valid"); err != nil {
		return nil, nil, err
	}
	if err := dur(&o.historyTTL, "history-ttl", "24h", "conversations expire this long after their last write; 0 keeps them"); err != nil {
		return nil, nil, err
	}
	if err := dur(&o.demoDelay, "demo-delay", "25ms", "pause between words of the demo model's replies"); err != nil {
		return nil, nil, err
	}
	for _, d := range []struct {
		p           *time.Duration
		name, usage string
		def         time.Duration
	}{
		{&o.bodyTimeout, "body-timeout", "a request body must arrive within this (408 after it)", server.DefaultBodyTimeout},
		{&o.writeTimeout, "write-timeout", "a client that stops reading a stream for this long is cut off", server.DefaultWriteTimeout},
		{&o.idleTimeout, "idle-timeout", "a kept-alive connection with no request for this long is closed", server.DefaultIdleTimeout},
		{&o.lockTTL, "lock-ttl", "how long a chat stays locked by a reply whose server died; another replica then finishes that reply and the chat takes new turns", uiadapter.DefaultLockTTL},
		{&o.runRetention, "run-retention", "how long a finished reply's stream is kept for clients that resume it (a reload, a dropped connection, another replica)", runlog.DefaultRetention},
		{&o.shutdownGrace, "shutdown-grace", "on SIGTERM or SIGINT, how long replies in progress may take to finish before they are cut (their partial output is kept)", 10 * time.Second},
	} {
		if err := dur(d.p, d.name, d.def.String(), d.usage); err != nil {
			return nil, nil, err
		}
	}
	return fs, o, nil
}

func run(args []string) error {
	fs, o, err := newFlags()
	if err != nil {
		return err
	}
	if err := o.parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	loopback, err := checkAddr(o.addr)
	if err != nil {
		return err
	}
	if o.secret != "" && len(o.secret) < minSecret {
		return fmt.Errorf("-secret is %d bytes: use at least %d random bytes (openssl rand -base64 32)", len(o.secret), minSecret)
	}
	var scopeLimit limit.Rate
	if o.scopeLimit != "off" {
		if scopeLimit, err = limit.ParseRate(o.scopeLimit); err != nil {
			return fmt.Errorf("-scope-limit: %w (or off)", err)
		}
	}
	hosts := splitList(o.allowedHosts)
	if loopback || len(hosts) > 0 {
		hosts = append(hosts, edge.LoopbackHosts...)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	goredis.SetLogger(server.RedisLog{Logger: logger})
	telemetry.SetLogger(logger)

	// Telemetry is off unless OTEL_EXPORTER_OTLP_* says where to send it.
	otelProviders, err := telemetry.FromEnv(context.Background())
	if err != nil {
		return err
	}
	if otelProviders != nil {
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := otelProviders.Shutdown(ctx); err != nil {
				logger.Warn("telemetry: the last spans and metrics could not be sent", "error", err)
			}
		}()
		logger.Info("telemetry on: " + otelProviders.Desc)
	}

	if o.maxResumes < 0 {
		return fmt.Errorf("-max-resumes: %d: want 0 (no bound) or more", o.maxResumes)
	}
	maxResumes := o.maxResumes
	if maxResumes == 0 {
		maxResumes = -1 // server.Config: negative is no bound
	}
	minHeap, err := parseSize(o.gcMinHeap)
	if err != nil {
		return fmt.Errorf("-gc-min-heap: %w", err)
	}
	runLimits, err := o.runLimits()
	if err != nil {
		return err
	}
	defer gctune.MinHeap(minHeap)()

	limits, addrLimits, err := o.limits()
	if err != nil {
		return err
	}
	proxies, err := limit.ParsePrefixes(o.trustedProxies)
	if err != nil {
		return fmt.Errorf("-trusted-proxies: %w", err)
	}
	if o.bearerTTL <= 0 {
		return fmt.Errorf("-bearer-ttl %s: want a positive duration", o.bearerTTL)
	}

	model, models, err := o.modelChoice(fs)
	if err != nil {
		return err
	}
	var mcpServers []mcptools.Server
	if o.mcp != "" {
		data, err := os.ReadFile(o.mcp)
		if err != nil {
			return fmt.Errorf("-mcp: %w", err)
		}
		if mcpServers, err = mcptools.ParseConfig(data); err != nil {
			return fmt.Errorf("-mcp %s: %w", o.mcp, err)
		}
	}
	srv, err := server.New(server.Config{
		Page: webui.Handler(), Model: model, Models: models, AnthropicThinking: o.anthropicThinking,
		History: o.history, HistoryTTL: o.historyTTL, HistoryPrefix: o.historyPrefix, Files: o.files, MCP: mcpServers,
		Secret: o.secret, DemoDelay: o.demoDelay, Logger: logger,
		BodyTimeout: o.bodyTimeout, WriteTimeout: o.writeTimeout, IdleTimeout: o.idleTimeout, LockTTL: o.lockTTL, RunRetention: o.runRetention, MaxResumes: maxResumes,
		CORSOrigins: splitList(o.corsOrigins), Limits: limits, Telemetry: otelProviders != nil,
		ScopeLimit: scopeLimit, AllowedHosts: hosts, RunLimits: runLimits,
		AddressLimits: addrLimits, TrustedProxies: proxies, BearerTTL: o.bearerTTL,
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	if srv.RandomSecret {
		logger.Warn("no -secret: a random key signs approval requests and scope cookies, so pending approvals and browsers' chats do not survive a restart")
	}
	if !loopback {
		warning := "listening beyond this machine with anonymous scopes: the binary has no login, so anyone who reaches " + o.addr +
			" gets chats of their own and runs the model; put it behind your authentication, or mount the library with your own WithScope (docs/deploy.md)"
		if len(splitList(o.allowedHosts)) == 0 {
			warning += "; no -allowed-hosts: any Host header is answered"
		}
		logger.Warn(warning)
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	fmt.Printf("agentui listening on http://%s (%s)\n", ln.Addr(), srv.Description)

	if o.debugAddr != "" {
		dl, err := net.Listen("tcp", o.debugAddr)
		if err != nil {
			return err
		}
		logger.Info("debug endpoints", "addr", "http://"+dl.Addr().String()+"/debug/pprof/")
		go func() { _ = http.Serve(dl, debugMux()) }()
	}
	hs := srv.HTTPServer()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	return shutdown(logger, hs, srv, o.shutdownGrace)
}

// shutdown stops accepting connections, gives the replies in progress
// grace to finish, cuts the rest (their streams end with an error event,
// their output is stored, their locks released), and returns within
// grace + 5 s whatever happens.
func shutdown(logger *slog.Logger, hs *http.Server, srv *server.Server, grace time.Duration) error {
	logger.Info("shutting down", "grace", grace)
	start := time.Now()
	closed := make(chan error, 1)
	go func() { closed <- hs.Shutdown(context.Background()) }()
	graceCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	runs := make(chan error, 1)
	go func() { runs <- srv.Shutdown(graceCtx) }()
	deadline := time.After(grace + 5*time.Second)
	select {
	case err := <-runs:
		if err != nil {
			logger.Warn("shutdown: replies still running after the grace period were cut")
		}
	case <-deadline:
		logger.Error("shutdown: replies still ending 5 s after the grace period; closing their connections")
		return hs.Close()
	}
	select {
	case err := <-closed:
		logger.Info("shut down", "took", time.Since(start).Round(time.Millisecond))
		return err
	case <-deadline:
		logger.Error("shutdown: connections still open 5 s after the grace period; closing them")
		return hs.Close()
	}
}

// minSecret is the shortest -secret taken: the key of an HMAC-SHA256
// should hold as many bytes as the hash.
const minSecret = 32

// checkAddr checks -addr before anything starts, and reports whether it
// is a loopback address (only this machine can connect).
func checkAddr(addr string) (loopback bool, err error) {
	if _, err := strconv.ParseUint(addr, 10, 16); err == nil {
		return false, fmt.Errorf("-addr %s is a port alone: use :%s (every interface) or 127.0.0.1:%s (this machine only)", addr, addr, addr)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("-addr %q: want host:port, like 127.0.0.1:8080 or :8080", addr)
	}
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback(), nil
}

// durationValue is a flag whose error names the units a duration takes.
type durationValue time.Duration

func (d *durationValue) Set(s string) error {
	v, err := parseDuration(s)
	*d = durationValue(v)
	return err
}

func (d *durationValue) String() string { return (*time.Duration)(d).String() }

// parseDuration is time.ParseDuration with an error that says what a
// duration looks like (a flag user writes "1day" or "30").
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: write a number and a unit, h, m, s or ms (24h, 90m, 30s; 0 for none)", s)
	}
	return d, nil
}

// parseSize parses a size such as 64MiB (units B, KiB, MiB, GiB; a bare
// number is bytes).
func parseSize(s string) (uint64, error) {
	num := strings.TrimRight(s, "BKMGib")
	mul := map[string]uint64{"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[s[len(num):]]
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil || mul == 0 || n > math.MaxUint64/mul {
		return 0, fmt.Errorf("size %q: want a number of bytes, KiB, MiB or GiB (64MiB)", s)
	}
	return n * mul, nil
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

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && strings.TrimSpace(v) != "" {
		return v
	}
	return def
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// runLimits reads the bounds of runs from their flags.
func (o *options) runLimits() (*uiadapter.RunLimits, error) {
	l := &uiadapter.RunLimits{MaxDuration: o.maxRunTime}
	for _, f := range []struct {
		name string
		n    int
	}{{"-runs-per-user", o.runsPerUser}, {"-runs-total", o.runsTotal}} {
		if f.n < 1 {
			return nil, fmt.Errorf("%s %d: want 1 or more", f.name, f.n)
		}
	}
	if o.runsPerAddress < 0 {
		return nil, fmt.Errorf("-runs-per-address %d: want 0 (no bound) or more", o.runsPerAddress)
	}
	l.PerScope, l.Total, l.PerAddress = o.runsPerUser, o.runsTotal, o.runsPerAddress
	if o.runsPerAddress == 0 {
		l.PerAddress = -1 // RunLimits: negative is no bound
	}
	if o.maxRunTime <= 0 {
		return nil, fmt.Errorf("-max-run-time %s: want a positive duration", o.maxRunTime)
	}
	n, err := parseSize(o.maxRunOutput)
	if err != nil || n < 1 {
		return nil, fmt.Errorf("-max-run-output %q: want a size, e.g. 4MiB", o.maxRunOutput)
	}
	l.MaxOutput = int64(n)
	return l, nil
}

// limits reads the bounds per window: per user (-rate-limit,
// -token-limit) and per client address (-address-…, the user's when not
// given, "off" for none).
func (o *options) limits() (user, addr limit.Limits, err error) {
	for _, r := range []struct {
		flag, value string
		p           *limit.Rate
	}{{"-rate-limit", o.rateLimit, &user.Runs}, {"-token-limit", o.tokenLimit, &user.Tokens}} {
		if r.value == "" {
			continue
		}
		if *r.p, err = limit.ParseRate(r.value); err != nil {
			return user, addr, fmt.Errorf("%s: %w", r.flag, err)
		}
	}
	addr = user
	for _, r := range []struct {
		flag, value string
		p           *limit.Rate
	}{{"-address-rate-limit", o.addressRateLimit, &addr.Runs}, {"-address-token-limit", o.addressTokenLimit, &addr.Tokens}} {
		switch r.value {
		case "":
		case "off":
			*r.p = limit.Rate{}
		default:
			if *r.p, err = limit.ParseRate(r.value); err != nil {
				return user, addr, fmt.Errorf("%s: %w (or off)", r.flag, err)
			}
		}
	}
	return user, addr, nil
}
