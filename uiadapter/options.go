package uiadapter

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/agentui/agentui/history"
)

// Option configures a [Handler]. Every option states its default.
type Option func(*config)

type config struct {
	maxBodyBytes int64
	instructions string
	logger       *slog.Logger
	signer       *Signer
	randomKey    bool
	policy       SanitizePolicy
	keepAlive    time.Duration
	store        history.Store
	scope        func(*http.Request) (string, error)
	lockTTL      time.Duration
}

// DefaultLockTTL bounds how long a conversation stays locked by a run
// whose process died. A live run keeps extending its lock.
const DefaultLockTTL = 2 * time.Minute

// DefaultMaxBodyBytes caps request bodies (8 MiB).
const DefaultMaxBodyBytes = 8 << 20

// DefaultKeepAlive is how long a stream may stay silent before the
// handler writes an SSE comment to keep proxies from closing it.
const DefaultKeepAlive = 15 * time.Second

// SchemeProviderFile is the URL scheme agentui gives provider file handles
// (AG-UI "file" sources: an id the model provider resolves with the
// server's credentials). They are dropped unless this scheme is allowed
// with [WithAllowedURLSchemes].
const SchemeProviderFile = "provider-file"

func defaults() config {
	return config{
		maxBodyBytes: DefaultMaxBodyBytes,
		logger:       slog.Default(),
		policy:       SanitizePolicy{AllowedSchemes: []string{"http", "https"}},
		keepAlive:    DefaultKeepAlive,
		lockTTL:      DefaultLockTTL,
	}
}

// WithMaxBodyBytes caps the request body; larger bodies get 413. The
// default is [DefaultMaxBodyBytes].
func WithMaxBodyBytes(n int64) Option { return func(c *config) { c.maxBodyBytes = n } }

// WithInstructions sets the server's system prompt, given to the agent on
// every run. The default is none.
func WithInstructions(s string) Option { return func(c *config) { c.instructions = s } }

// WithLogger sets the logger. The default is slog.Default().
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithSecret sets the key that signs approval requests (see [Signer]).
// Give every replica the same key. The default is a random key per
// handler, which works for one process and is lost on restart.
func WithSecret(key []byte) Option {
	return func(c *config) { c.signer, c.randomKey = NewSigner(key), false }
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

// WithTrustedSystemMessages keeps system and developer messages clients
// send. By default they are dropped and only the server's instructions
// reach the agent.
func WithTrustedSystemMessages() Option {
	return func(c *config) { c.policy.TrustSystemMessages = true }
}

// WithKeepAlive sets how long a stream may be silent before a keep-alive
// comment is sent; 0 disables them. The default is [DefaultKeepAlive].
func WithKeepAlive(d time.Duration) Option { return func(c *config) { c.keepAlive = d } }

// WithStore makes the server keep the conversation: its copy is the truth,
// and each request contributes only its new turn (a user message, or
// answers to the tool calls the stored conversation waits for). It needs
// WithScope. By default no history is kept and the client's copy is
// sanitized instead.
func WithStore(s history.Store) Option { return func(c *config) { c.store = s } }

// WithScope decides whose conversations a request may touch, from its
// authentication (never from a client-chosen field). An error refuses the
// request: 401, or the status of an *Error. A chat id in another scope is
// another conversation. Required with WithStore.
func WithScope(scope func(*http.Request) (string, error)) Option {
	return func(c *config) { c.scope = scope }
}

// SingleScope is a scope for applications with one user (or none to tell
// apart): every request sees every conversation.
func SingleScope(*http.Request) (string, error) { return "single", nil }

// WithLockTTL sets how long a run's lock on its conversation lasts without
// being extended (default [DefaultLockTTL]).
func WithLockTTL(d time.Duration) Option { return func(c *config) { c.lockTTL = d } }
