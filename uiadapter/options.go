package uiadapter

import (
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/files"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/turn"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/limit"
	"github.com/agentui/agentui/runlog"
)

// Option configures a [Handler]. Every option states its default.
type Option func(*config)

type config struct {
	maxBodyBytes    int64
	bodyTimeout     time.Duration
	writeTimeout    time.Duration
	instructions    string
	logger          *slog.Logger
	signer          *turn.Signer
	randomKey       bool
	policy          turn.Policy
	keepAlive       time.Duration
	store           history.Store
	locker          history.Locker
	queue           history.Queue // the store's, when it keeps one
	files           *files.Handler
	scope           func(*http.Request) (string, error)
	lockTTL         time.Duration
	storeTimeout    time.Duration
	maxChatMessages int
	maxChatBytes    int64
	approvalTTL     time.Duration
	replay          ReplayGuard
	runLog          runlog.Log
	runRetention    time.Duration
	redrives        int
	metadata        func(*http.Request, *agent.RunFinished) map[string]any
	limiter         limit.Limiter
	addrLimiter     limit.Limiter
	clientAddr      limit.ClientAddr
	runLimits       *RunLimits
	guard           agent.Guard
	subject         func(*http.Request) (*cmf.SubjectExtension, error)
	environment     string
	headers         []string // recorded on user messages; nil: ingest.DefaultHeaders
	resumes         *scopeSlots
}

// defaultApprovalTTL is how long an approval request stays answerable
// when the server keeps no history.
const defaultApprovalTTL = 24 * time.Hour

// DefaultBodyTimeout bounds how long a request body may take to arrive.
const DefaultBodyTimeout = 30 * time.Second

// DefaultWriteTimeout bounds how long one write to a stream may block: a
// client that stops reading for longer is treated as gone.
const DefaultWriteTimeout = 30 * time.Second

// DefaultStoreTimeout bounds each call to the history store.
const DefaultStoreTimeout = 3 * time.Second

// Default bounds of one stored chat: past either, a new turn is refused
// (409) until the user starts a new chat.
const (
	defaultMaxChatMessages = 10000
	defaultMaxChatBytes    = 32 << 20
)

// DefaultLockTTL bounds how long a conversation stays locked by a run
// whose process died, and so how soon another replica declares that run
// dead. A live run keeps extending its lock.
const DefaultLockTTL = 20 * time.Second

// DefaultMaxBodyBytes caps request bodies (8 MiB).
const DefaultMaxBodyBytes = 8 << 20

// defaultKeepAlive is how long a stream may stay silent before the
// handler writes an SSE comment to keep proxies from closing it.
const defaultKeepAlive = 15 * time.Second

// DefaultMaxResumes is how many resumed streams one scope may have open
// at once on a handler (WithMaxResumes): a person with a few tabs on
// chats whose replies are running, with room to spare.
const DefaultMaxResumes = 8

// SchemeProviderFile is the URL scheme agentui gives provider file handles
// (AG-UI "file" sources: an id the model provider resolves with the
// server's credentials). They are dropped unless this scheme is allowed
// with [WithAllowedURLSchemes].
const SchemeProviderFile = wire.SchemeProviderFile

func defaults() config {
	return config{
		maxBodyBytes: DefaultMaxBodyBytes,
		logger:       slog.Default(),
		policy:       turn.Policy{AllowedSchemes: []string{"http", "https"}, PublicHostsOnly: true},
		keepAlive:    defaultKeepAlive,
		lockTTL:      DefaultLockTTL,
		bodyTimeout:  DefaultBodyTimeout,
		writeTimeout: DefaultWriteTimeout,
		storeTimeout: DefaultStoreTimeout,
		approvalTTL:  defaultApprovalTTL,
		runRetention: runlog.DefaultRetention,
		redrives:     DefaultRedrives,
		resumes:      newScopeSlots(DefaultMaxResumes),
		clientAddr:   limit.PeerAddr,

		maxChatMessages: defaultMaxChatMessages,
		maxChatBytes:    defaultMaxChatBytes,
	}
}

// WithMaxBodyBytes caps the request body; larger bodies get 413. The
// default is [DefaultMaxBodyBytes].
func WithMaxBodyBytes(n int64) Option { return func(c *config) { c.maxBodyBytes = n } }

// WithInstructions sets the server's system prompt, given to the agent on
// every run. The default is none.
func WithInstructions(s string) Option { return func(c *config) { c.instructions = s } }

// WithMetadata adds the application's own fields to each reply's metadata
// (a cost, a plan, a request id): fn runs when a run finishes, with the
// request that started it (whose context may be done: a run outlives its
// request) and the run's outcome. What it returns goes to the client with
// the reply (useChat: message.metadata, next to agentui's own usage,
// model, createdAt and finishReason, which keep their keys; AG-UI: a
// CUSTOM event named [agui.MetadataEvent]) and is stored with the reply,
// so the conversation read back later (Vercel) carries it too. A value
// that does not marshal to JSON is left out and logged.
//
// [agui.MetadataEvent]: https://pkg.go.dev/github.com/agentui/agentui/protocols/agui#MetadataEvent
func WithMetadata(fn func(r *http.Request, fin *agent.RunFinished) map[string]any) Option {
	return func(c *config) { c.metadata = fn }
}

// WithLogger sets the logger. The default is slog.Default().
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithApprovalTTL sets how long an approval request can be answered when
// the server keeps no history (default defaultApprovalTTL); a later
// answer is refused (409). With history, a request waits as long as the
// conversation is kept.
func WithApprovalTTL(d time.Duration) Option { return func(c *config) { c.approvalTTL = d } }

// WithReplayGuard sets where a server that keeps no history remembers
// which approval requests were answered, to refuse a second answer. The
// default is a memoryReplayGuard per handler, which protects one
// process; give every replica one shared guard (history/redisstore
// NewReplayGuard) to protect them all.
func WithReplayGuard(g ReplayGuard) Option { return func(c *config) { c.replay = g } }

// WithSecret sets the key that signs approval requests (see [Signer]).
// Give every replica the same key. The default is a random key per
// handler, which works for one process and is lost on restart.
func WithSecret(key []byte) Option {
	return func(c *config) { c.signer, c.randomKey = turn.NewSigner(key), false }
}

// WithAllowedURLSchemes replaces the URL schemes client media may use. The
// default is "http" and "https". Schemes such as s3 or gs make the model
// provider fetch with the server's credentials: allow them only for
// trusted clients.
func WithAllowedURLSchemes(schemes ...string) Option {
	return func(c *config) {
		c.policy.AllowedSchemes = c.policy.AllowedSchemes[:0:0]
		for _, s := range schemes {
			c.policy.AllowedSchemes = append(c.policy.AllowedSchemes, strings.ToLower(s))
		}
	}
}

// WithPrivateURLs lets client URLs to the server's own network through
// the allowlist: hosts that are loopback, private, link-local or
// unspecified addresses, or local names (see
// [turn.Policy.PublicHostsOnly]). By default they are dropped, since a
// model provider that fetches media URLs from inside the network (a
// self-hosted model, a gateway) would fetch them for a client: the
// cloud metadata address, an internal service. Set it only when the
// model must read media from your own network on purpose. Names are not
// resolved either way, so a public name pointing at a private address
// passes: guard the fetcher for that.
func WithPrivateURLs() Option { return func(c *config) { c.policy.PublicHostsOnly = false } }

// WithTrustedSystemMessages keeps system and developer messages clients
// send. By default they are dropped and only the server's instructions
// reach the agent.
func WithTrustedSystemMessages() Option {
	return func(c *config) { c.policy.TrustSystemMessages = true }
}

// WithKeepAlive sets how long a stream may be silent before a keep-alive
// comment is sent; 0 disables them. The default is defaultKeepAlive.
func WithKeepAlive(d time.Duration) Option { return func(c *config) { c.keepAlive = d } }

// WithStore makes the server keep the conversation: its copy is the truth,
// and each request contributes only its new turn (a user message, or
// answers to the tool calls the stored conversation waits for). It needs
// WithScope. By default no history is kept and the client's copy is
// sanitized instead.
func WithStore(s history.Store) Option { return func(c *config) { c.store = s } }

// WithLocker sets what holds a chat for one run at a time (with
// WithStore). The default is the store itself when it is a
// [history.Locker] (the memory and Redis stores are), else an in-process
// [history.LocalLocker], which is right for one replica only: give
// several replicas a shared one.
func WithLocker(l history.Locker) Option { return func(c *config) { c.locker = l } }

// WithScope decides whose conversations a request may touch, from its
// authentication (never from a client-chosen field). An error refuses the
// request: 401, or the status of an *Error; [ErrNoScope] serves it
// without history instead. A chat id in another scope is another
// conversation. Required with WithStore.
func WithScope(scope func(*http.Request) (string, error)) Option {
	return func(c *config) { c.scope = scope }
}

// SingleScope is a scope for applications with one user (or none to tell
// apart): every request sees every conversation.
func SingleScope(*http.Request) (string, error) { return "single", nil }

// WithLockTTL sets how long a run's lock on its conversation lasts without
// being extended (default [DefaultLockTTL]). A live run extends it every
// third of the TTL; a run that cannot for a whole TTL is stopped.
func WithLockTTL(d time.Duration) Option { return func(c *config) { c.lockTTL = d } }

// WithBodyTimeout bounds how long the request body may take to arrive;
// a slower body gets 408 (default [DefaultBodyTimeout]; 0: no bound).
func WithBodyTimeout(d time.Duration) Option { return func(c *config) { c.bodyTimeout = d } }

// WithWriteTimeout bounds how long one write of a stream may block
// (default [DefaultWriteTimeout]; 0: no bound). A client that stops
// reading is cut off after it, and its run handled as a disconnect.
func WithWriteTimeout(d time.Duration) Option { return func(c *config) { c.writeTimeout = d } }

// WithStoreTimeout bounds each call to the history store (default
// [DefaultStoreTimeout]), so a store that hangs costs a request a few
// seconds and a truthful error, not minutes.
func WithStoreTimeout(d time.Duration) Option { return func(c *config) { c.storeTimeout = d } }

// WithChatLimits bounds one stored chat by its number of messages and
// their stored size (defaults defaultMaxChatMessages,
// defaultMaxChatBytes). A chat at either bound takes no new user
// message or regeneration (409, "start a new one"); answers to pending
// tool calls are still accepted.
func WithChatLimits(messages int, bytes int64) Option {
	return func(c *config) { c.maxChatMessages, c.maxChatBytes = messages, bytes }
}

// WithRunLog sets where runs log their events (with WithStore), so that
// a reply outlives its connection: a reloaded page resumes it
// (ResumeHandler, ConnectHandler) and StopHandler stops it. The default
// is a [runlog.Memory] per handler, which serves the runs of this
// process; give every replica one shared log (history/redisstore
// NewRunLog) so that any of them can resume or stop any run, and finish
// the log of a run whose process died. Pass one runlog.Memory to several
// handlers of one process to let them share it.
func WithRunLog(l runlog.Log) Option { return func(c *config) { c.runLog = l } }

// WithRunRetention sets how long a finished run's log is kept, for
// streams that resume after the last event they saw (default
// [runlog.DefaultRetention]).
func WithRunRetention(d time.Duration) Option { return func(c *config) { c.runRetention = d } }

// DefaultRedrives is how many times a run is run again, by default,
// when the replica producing it dies or hands it over (WithRedrives).
const DefaultRedrives = 5

// WithRedrives sets how many times one run is run again on another
// replica when the one producing it dies or shuts down mid-reply (with
// a shared run log, WithRunLog): the run goes on from its last complete
// step, with the same run id and log, and its tool calls keep their
// guarantees (docs/runs.md). Past n, or with 0, the run's log is
// finished as cut short and what it produced is stored. Default
// DefaultRedrives.
func WithRedrives(n int) Option { return func(c *config) { c.redrives = n } }

// WithGuard gives every run a guard (a policy.Engine): it decides each
// new user message before the model sees it or it is stored (a denial is
// a 403 whose error is the guard's reason), and the agent loop asks it
// about each tool call, result and finished text part (see
// [agent.Guard]). The default is none, which costs nothing.
func WithGuard(g agent.Guard) Option { return func(c *config) { c.guard = g } }

// WithSubject authenticates a request as a subject (id, type, roles,
// permissions, teams, claims): policies see it on every message of the
// request and its run, and the subject's id is the request's scope, as
// [WithScope] would return it (use one of the two). Its errors mean what
// the scope function's do; a nil subject or one without an id is a 401.
func WithSubject(fn func(*http.Request) (*cmf.SubjectExtension, error)) Option {
	return func(c *config) { c.subject = fn }
}

// WithEnvironment names the deployment ("production", "staging") in the
// request extension of every message, for policies that differ by it.
// The default is none.
func WithEnvironment(env string) Option { return func(c *config) { c.environment = env } }

// WithRecordedHeaders replaces the request headers a new user message
// keeps in its http extension (stored with it; policies read them with
// cmf.CapReadHeaders). Credentials are never kept: naming Authorization,
// Cookie, Proxy-Authorization or X-Api-Key is a configuration error.
func WithRecordedHeaders(names ...string) Option {
	return func(c *config) { c.headers = slices.Clone(names) }
}

// WithLimiter bounds runs and tokens per scope (see [limit.Limiter]): a
// run over the runs limit is refused with 429 and Retry-After; a run
// whose scope has used its tokens stops after its step. A request
// without a scope (served without history) is counted by its client's
// address. The default is no limit.
func WithLimiter(l limit.Limiter) Option { return func(c *config) { c.limiter = l } }

// WithAddressLimiter bounds runs and tokens per client address (see
// [WithClientAddr]), beside the scope's own bounds ([WithLimiter]): where
// anyone can get a new scope (the binary's anonymous cookies), each one
// is a fresh budget, and only a bound per address keeps one client from
// multiplying its share. A run is counted against its scope first, then
// its address; over either it gets 429. Choose its limits for everyone
// behind one address together (an office, a NAT). The default is none.
func WithAddressLimiter(l limit.Limiter) Option { return func(c *config) { c.addrLimiter = l } }

// WithClientAddr sets how a request's client address is read, for the
// bounds per address ([RunLimits].PerAddress, [WithAddressLimiter]) and
// the limit key of a request without a scope. The default is
// [limit.PeerAddr], the connection's address; behind reverse proxies use
// [limit.ForwardedFor] with the proxies' addresses, or every client
// counts as the proxy.
func WithClientAddr(fn limit.ClientAddr) Option { return func(c *config) { c.clientAddr = fn } }

// WithRunLimits bounds runs (see [RunLimits]); one RunLimits given to
// several handlers bounds them together. The default is a RunLimits of
// the handler's own with every default.
func WithRunLimits(l *RunLimits) Option { return func(c *config) { c.runLimits = l } }

// WithMaxResumes bounds how many streams of runs one scope may have
// resumed at once on this handler: GET {api}/{id}/stream
// ([Handler.ResumeHandler]) and an AG-UI connect to a running run
// ([Handler.ConnectHandler]). A resume over the bound gets 429 with
// Retry-After before anything is read, and nothing else changes: the run
// goes on, the scope's other streams too, and a retry once one of them
// has ended gets the whole stream. A resume replays the run from its log,
// which costs CPU and, read from another replica's shared log, a page of
// memory while it lasts; the bound keeps one user from spending either
// many times over. n < 1 removes the bound. The default is
// [DefaultMaxResumes].
func WithMaxResumes(n int) Option { return func(c *config) { c.resumes = newScopeSlots(n) } }

var credentialHeaders = []string{"Authorization", "Cookie", "Proxy-Authorization", "X-Api-Key"}

func checkHeaders(names []string) error {
	for _, n := range names {
		if slices.Contains(credentialHeaders, http.CanonicalHeaderKey(n)) {
			return errors.New("uiadapter: WithRecordedHeaders: " + http.CanonicalHeaderKey(n) + " holds credentials and is never recorded")
		}
	}
	return nil
}
