// Package server assembles the agentui binary's HTTP server from its
// configuration. It is a package (not main) so tests can run the same
// server the binary runs.
package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentui/agentui"
	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/edge"
	"github.com/agentui/agentui/files"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/history/redisstore"
	"github.com/agentui/agentui/internal/turn"
	"github.com/agentui/agentui/limit"
	"github.com/agentui/agentui/mcptools"
	"github.com/agentui/agentui/protocols/agui"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/runlog"
	"github.com/agentui/agentui/telemetry"
	"github.com/agentui/agentui/uiadapter"
	goredis "github.com/redis/go-redis/v9"
)

// Instructions is the system prompt the binary gives every model.
const Instructions = "You are the agentui demo assistant. Answer briefly. Use the tools when they help: " +
	"get_weather for the weather in a city, delete_file to delete a file (the user must approve it), " +
	"get_location to learn where the user is (the user's browser answers), research to look into a topic."

// Config is the server's configuration; see docs/configuration.md.
type Config struct {
	// Model is the one model the server runs: "demo", or a provider and
	// its model id ("openai:<id>", "openai-responses:<id>",
	// "anthropic:<id>", "gemini:<id>"); see docs/models.md.
	Model string
	// Models, instead of Model, are the models a request may pick (by
	// these specs), the first its default.
	Models []string
	// AnthropicThinking is how Claude models think: "adaptive" (or ""),
	// "none", or a budget of tokens (docs/models.md).
	AnthropicThinking string
	History           string        // "memory" (default), "none", or a Redis URL
	HistoryTTL        time.Duration // conversations expire this long after their last write; 0 never
	// HistoryPrefix starts Redis keys (default "agentui:"), to share a Redis.
	HistoryPrefix string
	Secret        string        // signs approval requests and scope cookies; random when empty
	DemoDelay     time.Duration // pause between words of the demo model's prose
	// Files is where files that messages carry are kept (with history):
	// "" a temporary directory removed at Close (as the in-memory
	// history, they last as long as the process), a path a directory
	// kept there, "none" no files (a file part is then kept inline).
	Files string
	// MCP are MCP servers whose tools the agent offers besides the demo's
	// (connected, and their tools listed, at New; docs/mcp.md).
	MCP []mcptools.Server
	// AISDK7 sends AI SDK 7's additional chunks on /api/chat
	// (vercelai.WithAISDK7); AI SDK 6 clients, the chat page among them,
	// fail on them. The conformance tests use it; the binary does not.
	AISDK7 bool
	Logger *slog.Logger
	// Timeouts; zero values take the defaults below. BodyTimeout bounds
	// how long a request body may take (408 after it), WriteTimeout how
	// long one write of a stream may block (a client that stops reading
	// is cut off), IdleTimeout how long a kept-alive connection may wait
	// for its next request, ReadHeaderTimeout how long its headers may
	// take.
	BodyTimeout, WriteTimeout, IdleTimeout, ReadHeaderTimeout time.Duration
	// LockTTL is how long a chat stays locked by a run whose process died
	// (0: uiadapter.DefaultLockTTL).
	LockTTL time.Duration
	// RunRetention is how long a finished run's log is kept for readers
	// that resume it (uiadapter.WithRunRetention; 0: its default).
	RunRetention time.Duration
	// MaxResumes bounds the resumed streams a scope may have open at
	// once per protocol (uiadapter.WithMaxResumes; 0:
	// uiadapter.DefaultMaxResumes, negative: no bound).
	MaxResumes int
	// CORSOrigins are the other origins whose pages may use the API
	// (edge.CORS); none: same-origin only.
	CORSOrigins []string
	// Page is the chat page (webui.Handler), served at GET /. Nil serves
	// none.
	Page http.Handler
	// Telemetry traces and measures the server (package telemetry) with
	// otel's global providers: telemetry.FromEnv sets them up.
	Telemetry bool
	// RunLimits bound the replies going at once, and each one's time and
	// output (uiadapter.WithRunLimits), for both protocols together; nil:
	// the defaults.
	RunLimits *uiadapter.RunLimits
	// Limits bound runs and tokens per scope (uiadapter.WithLimiter),
	// counted in Redis when the history is there, else in memory; zero
	// Rates: no limit.
	Limits limit.Limits
	// AddressLimits bound runs and tokens per client address
	// (uiadapter.WithAddressLimiter), counted like Limits; zero Rates: no
	// limit.
	AddressLimits limit.Limits
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client address (limit.ForwardedFor); none: the connection's
	// address is the client's.
	TrustedProxies []netip.Prefix
	// BearerTTL is how long a bearer token from POST /api/token is valid
	// (0: DefaultBearerTTL).
	BearerTTL time.Duration
	// Guard decides each turn's input, tool calls, results and output
	// (uiadapter.WithGuard; a policy.Engine). Nil: none.
	Guard agent.Guard
	// ScopeLimit bounds the anonymous scopes issued to one client address
	// (cookies and tokens), counted like Limits; zero: no bound.
	ScopeLimit limit.Rate
	// AllowedHosts are the Host values the server answers to
	// (edge.AllowHosts; "*" any); nil: no check. The probes
	// (/healthz, /readyz) answer any Host.
	AllowedHosts []string
}

// The binary's timeouts (see Config).
const (
	DefaultBodyTimeout       = uiadapter.DefaultBodyTimeout
	DefaultWriteTimeout      = uiadapter.DefaultWriteTimeout
	DefaultIdleTimeout       = 60 * time.Second
	DefaultReadHeaderTimeout = 10 * time.Second
)

// Server is the assembled server.
type Server struct {
	cfg     Config
	handler http.Handler
	closers []func() error
	api     *agentui.API                // the chat handlers, for Shutdown
	runLog  runlog.Log                  // shared by the chat handlers
	ping    func(context.Context) error // the store's reachability; nil: always
	rdb     goredis.UniversalClient     // the history's Redis; nil when it is elsewhere
	down    atomic.Bool                 // the last /readyz found the store down
	// Description says what the server runs ("model demo, history memory").
	Description string
	// RandomSecret is true when no secret was configured.
	RandomSecret bool
}

// mcpStartTimeout bounds connecting to the MCP servers and listing their
// tools at start-up: a stdio server started by `go run` or `npx` may build
// or download itself first.
const mcpStartTimeout = 60 * time.Second

// New builds the server.
func New(cfg Config) (_ *Server, err error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	for _, d := range []struct {
		p   *time.Duration
		def time.Duration
	}{{&cfg.BodyTimeout, DefaultBodyTimeout}, {&cfg.WriteTimeout, DefaultWriteTimeout}, {&cfg.IdleTimeout, DefaultIdleTimeout}, {&cfg.ReadHeaderTimeout, DefaultReadHeaderTimeout}} {
		if *d.p == 0 {
			*d.p = d.def
		}
	}
	specs, err := modelSpecs(cfg)
	if err != nil {
		return nil, err
	}
	model, err := newModels(cfg, specs)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg}
	defer func() {
		if err != nil {
			s.Close() // what New opened: MCP servers, Redis clients, a temporary directory
		}
	}()
	tools := demo.Tools()
	var mcpTools int
	if len(cfg.MCP) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), mcpStartTimeout)
		ts, err := mcptools.Connect(ctx, cfg.Logger, cfg.MCP...)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("-mcp: %w", err)
		}
		s.closers = append(s.closers, ts.Close)
		mcpTools = len(ts.Tools())
		tools = append(tools, ts.Tools()...)
	}
	loopOpts := []agent.Option{agent.WithTools(tools...)}
	if cfg.Telemetry {
		ic, err := telemetry.Interceptor(telemetryModel(specs)...)
		if err != nil {
			return nil, err
		}
		loopOpts = append(loopOpts, agent.WithInterceptors(ic))
	}
	loop, err := agent.New(model, loopOpts...)
	if err != nil {
		return nil, err
	}
	store, desc, err := s.newStore(cfg)
	if err != nil {
		return nil, err
	}
	s.Description = fmt.Sprintf("%s, history %s", describeModels(specs), desc)
	if len(cfg.MCP) > 0 {
		s.Description += fmt.Sprintf(", %d MCP tools from %d servers", mcpTools, len(cfg.MCP))
	}
	key := []byte(cfg.Secret)
	if cfg.Secret == "" {
		key, s.RandomSecret = turn.RandomKey(), true
	}
	clientAddr := limit.PeerAddr
	if len(cfg.TrustedProxies) > 0 {
		clientAddr = limit.ForwardedFor(cfg.TrustedProxies...)
	}
	if cfg.BearerTTL == 0 {
		cfg.BearerTTL = DefaultBearerTTL
	}
	scope := &cookieScope{key: key, log: cfg.Logger, addr: clientAddr, bearerTTL: cfg.BearerTTL, revoked: newMemoryRevocations(time.Now)}
	if s.rdb != nil {
		scope.revoked = &redisRevocations{rdb: s.rdb, prefix: orPrefix(cfg.HistoryPrefix)}
	}
	if cfg.ScopeLimit.N > 0 {
		if scope.mint, err = s.limiter(cfg, limit.Limits{Runs: cfg.ScopeLimit}); err != nil {
			return nil, fmt.Errorf("-scope-limit: %w", err)
		}
	}
	// A request without a credential is answered from its own signed
	// approval: the guard that refuses a second answer is shared by the
	// replicas when they share a Redis.
	var replay uiadapter.ReplayGuard = uiadapter.NewMemoryReplayGuard(0)
	if s.rdb != nil {
		replay = redisstore.NewReplayGuard(s.rdb, cfg.HistoryPrefix)
	}
	opts := []uiadapter.Option{
		uiadapter.WithInstructions(Instructions),
		uiadapter.WithLogger(cfg.Logger),
		uiadapter.WithSecret(key),
		// Without history the scope binds approvals to the browser.
		uiadapter.WithScope(scope.scope),
		uiadapter.WithReplayGuard(replay),
		uiadapter.WithBodyTimeout(cfg.BodyTimeout),
		uiadapter.WithRunLimits(runLimits(cfg.RunLimits)),
		uiadapter.WithWriteTimeout(cfg.WriteTimeout),
		uiadapter.WithClientAddr(clientAddr),
	}
	if store != nil {
		opts = append(opts, uiadapter.WithStore(store), uiadapter.WithRunLog(s.runLog))
		fh, err := s.newFiles(cfg, key, scope.scope)
		if err != nil {
			return nil, err
		}
		if fh != nil {
			opts = append(opts, uiadapter.WithFiles(fh))
		}
	}
	if cfg.LockTTL > 0 {
		opts = append(opts, uiadapter.WithLockTTL(cfg.LockTTL))
	}
	if cfg.MaxResumes != 0 {
		opts = append(opts, uiadapter.WithMaxResumes(cfg.MaxResumes))
	}
	if cfg.RunRetention > 0 {
		opts = append(opts, uiadapter.WithRunRetention(cfg.RunRetention))
	}
	if cfg.Limits.Runs.N > 0 || cfg.Limits.Tokens.N > 0 {
		l, err := s.limiter(cfg, cfg.Limits)
		if err != nil {
			return nil, fmt.Errorf("-rate-limit, -token-limit: %w", err)
		}
		opts = append(opts, uiadapter.WithLimiter(l))
	}
	if cfg.AddressLimits.Runs.N > 0 || cfg.AddressLimits.Tokens.N > 0 {
		l, err := s.limiter(cfg, cfg.AddressLimits)
		if err != nil {
			return nil, fmt.Errorf("-address-rate-limit, -address-token-limit: %w", err)
		}
		opts = append(opts, uiadapter.WithAddressLimiter(l))
	}
	if cfg.Guard != nil {
		opts = append(opts, uiadapter.WithGuard(cfg.Guard))
	}
	var vercelOpts []vercelai.Option
	if cfg.AISDK7 {
		vercelOpts = append(vercelOpts, vercelai.WithAISDK7())
	}
	chat, err := uiadapter.New(vercelai.New(vercelOpts...), loop, opts...)
	if err != nil {
		return nil, err
	}
	aguiHandler, err := agui.Handler(loop, opts...)
	if err != nil {
		return nil, err
	}
	s.api = agentui.FromHandlers(chat, aguiHandler)
	mux := http.NewServeMux()
	s.api.Mount(mux, "/api")
	mux.Handle("POST /api/token", edge.RefuseCrossSite(http.HandlerFunc(scope.tokenHandler)))
	mux.Handle("DELETE /api/token", edge.RefuseCrossSite(http.HandlerFunc(scope.revokeHandler)))
	if cfg.Page != nil {
		mux.Handle("GET /", cfg.Page)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", s.readyz)
	s.handler = scope.middleware(mux)
	if cfg.Telemetry {
		s.handler = telemetry.Handler(s.handler)
	}
	if len(cfg.CORSOrigins) > 0 {
		if s.handler, err = edge.CORS(s.handler, cfg.CORSOrigins...); err != nil {
			return nil, fmt.Errorf("-cors-origins: %w", err)
		}
	}
	e := &front{probes: s.handler, checked: s.handler, bodyTimeout: cfg.BodyTimeout}
	if len(cfg.AllowedHosts) > 0 {
		if e.checked, err = edge.AllowHosts(s.handler, cfg.AllowedHosts...); err != nil {
			return nil, fmt.Errorf("-allowed-hosts: %w", err)
		}
	}
	s.handler = e
	return s, nil
}

// newFiles is the file handler cfg.Files asks for (nil: "none"), its
// URLs signed with a key derived from the server's secret.
func (s *Server) newFiles(cfg Config, secret []byte, scope func(*http.Request) (string, error)) (*files.Handler, error) {
	dir := cfg.Files
	switch dir {
	case "none":
		return nil, nil
	case "":
		tmp, err := os.MkdirTemp("", "agentui-files-")
		if err != nil {
			return nil, fmt.Errorf("-files: %w", err)
		}
		s.closers = append(s.closers, func() error { return os.RemoveAll(tmp) })
		dir = tmp
	}
	var opts []files.DirOption
	if cfg.HistoryTTL > 0 {
		opts = append(opts, files.WithExpiry(cfg.HistoryTTL)) // files go as their chats do
	}
	store, err := files.NewDir(dir, opts...)
	if err != nil {
		return nil, fmt.Errorf("-files: %w", err)
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("agentui files"))
	return files.NewHandler(store, mac.Sum(nil), scope, files.WithLogger(cfg.Logger))
}

// Handler serves every route.
func (s *Server) Handler() http.Handler { return s.handler }

// HTTPServer is an http.Server for Handler with the configured timeouts.
// It sets no ReadTimeout or WriteTimeout: the handlers bound reading a
// body and each write of a stream themselves, which a whole-request
// deadline would cut short.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(s.cfg.Logger.Handler(), slog.LevelWarn),
	}
}

// Shutdown stops the chat handlers taking requests and waits for the runs
// they serve; when ctx ends first, it cuts them (see
// uiadapter.Handler.Shutdown): each stream ends with its protocol's error
// event, what the run produced is stored, its lock released. Call it
// alongside HTTPServer().Shutdown.
func (s *Server) Shutdown(ctx context.Context) error { return s.api.Shutdown(ctx) }

// Close releases what the server holds (the Redis client).
func (s *Server) Close() error {
	var errs []error
	for _, c := range s.closers {
		errs = append(errs, c())
	}
	return errors.Join(errs...)
}

func (s *Server) redisOptions(cfg Config) []redisstore.Option {
	opts := []redisstore.Option{redisstore.WithTTL(cfg.HistoryTTL)}
	if cfg.HistoryPrefix != "" {
		opts = append(opts, redisstore.WithPrefix(cfg.HistoryPrefix))
	}
	return opts
}

// redisRunLog starts the run log every replica shares; Redis must answer
// within a few seconds.
func (s *Server) redisRunLog(cfg Config, rdb goredis.UniversalClient, where string) error {
	var opts []redisstore.RunLogOption
	if cfg.HistoryPrefix != "" {
		opts = append(opts, redisstore.WithRunLogPrefix(cfg.HistoryPrefix))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l, err := redisstore.NewRunLog(ctx, rdb, opts...)
	if err != nil {
		_ = rdb.Close()
		cfg.Logger.Debug("Redis does not answer", "error", err)
		return fmt.Errorf("-history: Redis at %s does not answer (%s)", where, redisFailure(err))
	}
	s.runLog = l
	s.rdb = rdb
	s.ping = func(ctx context.Context) error { return rdb.Ping(ctx).Err() }
	// Before the client's own Close.
	s.closers = append([]func() error{l.Close}, s.closers...)
	return nil
}

// limiter counts limits in the history's Redis, shared by the replicas,
// or in memory.
func (s *Server) limiter(cfg Config, limits limit.Limits) (limit.Limiter, error) {
	if err := limits.Check(); err != nil {
		return nil, err
	}
	if s.rdb != nil {
		return redisstore.NewLimiter(s.rdb, cfg.HistoryPrefix, limits)
	}
	return limit.NewMemoryLimiter(limits), nil
}

// newStore builds the history store -history names: "memory" (the
// default), "none", or a Redis URL: redis://host:port/db, rediss://… for
// TLS, or redis+cluster://host1:port,host2:port (rediss+cluster for TLS)
// for a Cluster.
func (s *Server) newStore(cfg Config) (history.Store, string, error) {
	h := cfg.History
	switch {
	case h == "" || h == "memory":
		s.runLog = runlog.NewMemory()
		return history.NewMemory(history.WithMemoryTTL(cfg.HistoryTTL)), "memory", nil
	case h == "none":
		return nil, "none", nil
	case strings.HasPrefix(h, "redis+cluster://"), strings.HasPrefix(h, "rediss+cluster://"):
		scheme, rest, _ := strings.Cut(h, "+cluster://")
		hosts, query, _ := strings.Cut(rest, "?")
		hosts, _, _ = strings.Cut(hosts, "/")
		userinfo := ""
		if i := strings.LastIndex(hosts, "@"); i >= 0 {
			userinfo, hosts = hosts[:i+1], hosts[i+1:]
		}
		addrs := strings.Split(hosts, ",")
		u := scheme + "://" + userinfo + addrs[0] + "?"
		for _, a := range addrs[1:] {
			u += "addr=" + a + "&"
		}
		opts, err := goredis.ParseClusterURL(u + query)
		if err != nil {
			return nil, "", fmt.Errorf("-history: %w", err)
		}
		opts.ContextTimeoutEnabled, opts.DialerRetries = true, dialOnce
		rdb := goredis.NewClusterClient(opts)
		s.closers = append(s.closers, rdb.Close)
		if err := s.redisRunLog(cfg, rdb, hosts); err != nil {
			return nil, "", err
		}
		return redisstore.New(rdb, s.redisOptions(cfg)...), "redis cluster " + hosts, nil
	case strings.HasPrefix(h, "redis://"), strings.HasPrefix(h, "rediss://"):
		opts, err := goredis.ParseURL(h)
		if err != nil {
			return nil, "", fmt.Errorf("-history: %w", err)
		}
		opts.ContextTimeoutEnabled, opts.DialerRetries = true, dialOnce
		rdb := goredis.NewClient(opts)
		s.closers = append(s.closers, rdb.Close)
		if err := s.redisRunLog(cfg, rdb, opts.Addr); err != nil {
			return nil, "", err
		}
		return redisstore.New(rdb, s.redisOptions(cfg)...), "redis " + opts.Addr, nil
	}
	return nil, "", fmt.Errorf("unknown -history %q (want memory, none, or a redis:// URL)", h)
}

// redisFailure says in a few words why Redis did not answer at start-up,
// for the one line the binary prints (the error chain is logged at debug).
func redisFailure(err error) string {
	var dns *net.DNSError
	switch msg := err.Error(); {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dns):
		return "unknown host"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "no answer within 5 s"
	case strings.Contains(msg, "NOAUTH"), strings.Contains(msg, "WRONGPASS"), strings.Contains(msg, "invalid password"):
		return "authentication failed: check the URL's user and password"
	case strings.Contains(msg, "tls:"), strings.Contains(msg, "x509:"):
		return "TLS failed: check rediss:// against the server's certificate"
	}
	return "it failed; -log-level debug says how"
}

// RedisLog routes go-redis's own messages (failed dials, pool warnings),
// which it prints to stderr by default, to a logger at WARN. go-redis has
// one logger per process: set it with goredis.SetLogger(RedisLog{l}).
type RedisLog struct{ Logger *slog.Logger }

// Printf implements go-redis's logging interface.
func (r RedisLog) Printf(ctx context.Context, format string, v ...any) {
	r.Logger.WarnContext(ctx, "redis client", "message", fmt.Sprintf(format, v...))
}

// dialOnce makes go-redis try a connection once per attempt (its default
// is five, 100 ms apart, within each of its command retries): a Redis that
// is down is then reported as down, with history.ErrUnavailable, before
// the store timeout runs out and leaves the outcome of a write unknown.
const dialOnce = 1

// readyz answers whether the server can take turns: 200 when its store
// answers (always without Redis), else 503. A load balancer keeps sending
// to a live (/healthz) but unready replica nothing new. The store's error
// is logged once per outage, not per probe.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	var err error
	if s.ping != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		err = s.ping(ctx)
		cancel()
	}
	if err != nil {
		if !s.down.Swap(true) {
			s.cfg.Logger.Warn("not ready: conversation history is unavailable", "error", err)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":"conversation history is unavailable"}` + "\n"))
		return
	}
	if s.down.Swap(false) {
		s.cfg.Logger.Info("ready again: conversation history answers")
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

// runLimits are the limits both protocols share: one count of the runs
// going on.
func runLimits(l *uiadapter.RunLimits) *uiadapter.RunLimits {
	if l == nil {
		return &uiadapter.RunLimits{}
	}
	return l
}

// orPrefix is the Redis key prefix: p, or the stores' default.
func orPrefix(p string) string {
	if p == "" {
		return redisstore.DefaultPrefix
	}
	return p
}

// front is what every request passes first. It gives a request with a
// body a read deadline of bodyTimeout before any handler runs: the chat
// handlers set their own and clear it once the body is read, but a
// request that no handler reads (a refused Host, an unknown route) would
// otherwise be read to its end by net/http, to keep the connection, for
// as long as its client trickles it. Then it serves /healthz and /readyz
// whatever the Host (a load balancer probes by address) and the rest
// through the Host check. A type rather than closures: one frame on every
// stream's stack.
type front struct {
	probes, checked http.Handler
	bodyTimeout     time.Duration
}

func (e *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 && e.bodyTimeout > 0 {
		boundBody(w, e.bodyTimeout)
	}
	if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
		e.probes.ServeHTTP(w, r)
		return
	}
	e.checked.ServeHTTP(w, r)
}

// boundBody sets the read deadline, out of line: its frame is gone
// before the request is served (see TestStreamFitsStartingStack).
//
//go:noinline
func boundBody(w http.ResponseWriter, timeout time.Duration) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout))
}
