// Package mcptools offers the tools of MCP servers to an agent as agentui
// tools. It connects to each server with the official Go SDK, over stdio
// (a command it starts) or streamable HTTP, lists its tools once, and
// makes each an [agent.Tool]: the loop validates its arguments against the
// server's schema, asks for approval (by default for every tool the server
// does not mark read-only), runs policies, traces and limits it as any Go
// tool, and a call goes to the server with a timeout.
//
// What a call returns becomes the tool's result: the structured content
// when the server sends one, else the text when that is all, else the
// content list in MCP's own form (text, images, audio, resource links and
// resources). A result the server marks as an error, a server that died, one
// that hangs past the timeout or answers something malformed, each ends
// the call as a tool error the model and the person see; a stdio server
// that died is started again for the next call. Progress the server
// reports streams to the page as the tool's preliminary output.
//
// Per-user credentials: a server with Credentials gets a session of its
// own per scope (the chat's user), opened with that scope's headers, so no
// session, connection or token is shared between scopes.
package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/internal/ids"
)

// DefaultCallTimeout bounds a call when Server.CallTimeout is zero.
const DefaultCallTimeout = 60 * time.Second

// Approval says which of a server's tools need the user's approval.
type Approval int

const (
	// ApproveUnlessReadOnly asks for every tool the server does not
	// annotate readOnlyHint (the default: a hint is the server's word, and
	// a tool that says nothing may change anything).
	ApproveUnlessReadOnly Approval = iota
	// ApproveAlways asks for every tool.
	ApproveAlways
	// ApproveNever asks for none.
	ApproveNever
)

// Server is an MCP server whose tools an agent offers. Give Command (a
// stdio server) or URL (a streamable HTTP one).
type Server struct {
	// Name prefixes its tools' names ("<name>_<tool>"), so two servers'
	// tools never collide; empty leaves them as the server names them.
	// Characters a model API refuses in a tool name become "_".
	Name string `json:"name"`

	// Command and its arguments start a stdio server; Env is added to
	// this process's environment.
	Command []string `json:"command,omitempty"`
	Env     []string `json:"env,omitempty"`

	// URL is a streamable HTTP server's endpoint; Headers go with every
	// request to it.
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`

	// Credentials, when set, gives the headers of the run's scope (the
	// chat's user: agent.RunInfoFrom(ctx).Scope; "" when tools are listed
	// at start-up): each scope gets a session of its own. An error fails
	// the call (a connection, the listing) with that error.
	Credentials func(ctx context.Context, scope string) (http.Header, error) `json:"-"`

	// Approval says which tools need approval (see Approval).
	Approval Approval `json:"-"`

	// Tools, when set, offers only these of the server's tools (by the
	// server's names).
	Tools []string `json:"tools,omitempty"`

	// CallTimeout bounds a call, from its start to its result
	// (DefaultCallTimeout when zero).
	CallTimeout time.Duration `json:"-"`
}

// Toolset is the tools of connected MCP servers. Close it when done: it
// stops the stdio servers it started.
type Toolset struct {
	servers []*server
	tools   []agent.Tool
}

// Connect connects to every server, lists its tools and makes them agent
// tools. It fails, having closed what it opened, when a server cannot be
// reached or listed, or two tools would have one name.
func Connect(ctx context.Context, log *slog.Logger, servers ...Server) (*Toolset, error) {
	if log == nil {
		log = slog.Default()
	}
	ts := &Toolset{}
	names := map[string]string{}
	for i, cfg := range servers {
		if err := cfg.check(); err != nil {
			ts.Close()
			return nil, fmt.Errorf("mcptools: server %d: %w", i+1, err)
		}
		s := newServer(cfg, log)
		ts.servers = append(ts.servers, s)
		tools, err := s.list(ctx)
		if err != nil {
			ts.Close()
			return nil, fmt.Errorf("mcptools: %s: %w", s.label, err)
		}
		for _, t := range tools {
			if other, ok := names[t.Name]; ok {
				ts.Close()
				return nil, fmt.Errorf("mcptools: tool %q of %s has the name of one of %s: give the servers names", t.Name, s.label, other)
			}
			names[t.Name] = s.label
			ts.tools = append(ts.tools, t)
		}
	}
	return ts, nil
}

// Tools are the servers' tools, for agent.WithTools.
func (ts *Toolset) Tools() []agent.Tool { return slices.Clone(ts.tools) }

// Close ends every session and stops the stdio servers.
func (ts *Toolset) Close() error {
	var errs []error
	for _, s := range ts.servers {
		errs = append(errs, s.close())
	}
	return errors.Join(errs...)
}

func (c *Server) check() error {
	switch {
	case len(c.Command) == 0 && c.URL == "":
		return errors.New("give a command (stdio) or a url (streamable HTTP)")
	case len(c.Command) > 0 && c.URL != "":
		return errors.New("give a command or a url, not both")
	case c.Approval < ApproveUnlessReadOnly || c.Approval > ApproveNever:
		return fmt.Errorf("unknown approval %d", c.Approval)
	case c.CallTimeout < 0:
		return errors.New("a negative call timeout")
	}
	return nil
}

// server is one configured server and its sessions: one, or one per
// scope when it has Credentials.
type server struct {
	cfg     Server
	label   string // for errors: `MCP server "name"`
	timeout time.Duration
	client  *sdk.Client
	log     *slog.Logger

	mu         sync.Mutex
	sessions   map[string]*session      // by scope ("" without Credentials)
	connecting map[string]chan struct{} // scopes whose session is being opened: closed once it is
	progress   sync.Map                 // progress token → *agent.ToolEmitter
}

type session struct {
	cs   *sdk.ClientSession
	dead chan struct{} // closed when the connection ended
	used time.Time
}

// maxIdle is how long a scope's session stays open unused.
const maxIdle = 10 * time.Minute

func newServer(cfg Server, log *slog.Logger) *server {
	label := "MCP server"
	if cfg.Name != "" {
		label += fmt.Sprintf(" %q", cfg.Name)
	}
	s := &server{cfg: cfg, label: label, timeout: cfg.CallTimeout, log: log, sessions: map[string]*session{}, connecting: map[string]chan struct{}{}}
	if s.timeout == 0 {
		s.timeout = DefaultCallTimeout
	}
	s.client = sdk.NewClient(&sdk.Implementation{Name: "agentui", Version: "1"}, &sdk.ClientOptions{
		Logger: log,
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			if e, ok := s.progress.Load(req.Params.ProgressToken); ok {
				p := req.Params
				_ = e.(*agent.ToolEmitter).Progress(Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
			}
		},
	})
	return s
}

// IdempotencyKeyMeta is the _meta key under which a call carries its
// agent.IdempotencyKey, the same for every attempt at the call: a server
// that changes something can apply a call once by it.
const IdempotencyKeyMeta = "io.agentui/idempotency-key"

// Progress is what a tool's preliminary output says while its server
// reports progress.
type Progress struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

// session returns scope's open session, connecting when it has none or
// its connection ended.
func (s *server) session(ctx context.Context, scope string) (*sdk.ClientSession, error) {
	if s.cfg.Credentials == nil {
		scope = ""
	}
	for {
		now := time.Now()
		s.mu.Lock()
		for k, x := range s.sessions {
			if k != scope && now.Sub(x.used) > maxIdle {
				_ = x.cs.Close()
				delete(s.sessions, k)
			}
		}
		if x, ok := s.sessions[scope]; ok {
			select {
			case <-x.dead:
				delete(s.sessions, scope)
			default:
				x.used = now
				s.mu.Unlock()
				return x.cs, nil
			}
		}
		// One connection per scope at a time, made outside the lock: a
		// scope whose server is slow to answer holds up no other scope.
		if wait, ok := s.connecting[scope]; ok {
			s.mu.Unlock()
			select {
			case <-wait:
				continue // connected, or failed: look again
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		done := make(chan struct{})
		s.connecting[scope] = done
		s.mu.Unlock()
		cs, err := s.connect(ctx, scope)
		s.mu.Lock()
		delete(s.connecting, scope)
		if err == nil {
			x := &session{cs: cs, dead: make(chan struct{}), used: now}
			go func() {
				_ = cs.Wait()
				close(x.dead)
			}()
			s.sessions[scope] = x
		}
		close(done)
		s.mu.Unlock()
		return cs, err
	}
}

// connect opens a session for scope.
func (s *server) connect(ctx context.Context, scope string) (*sdk.ClientSession, error) {
	t, err := s.transport(ctx, scope)
	if err != nil {
		return nil, err
	}
	cs, err := s.client.Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("cannot connect: %w", err)
	}
	return cs, nil
}

func (s *server) transport(ctx context.Context, scope string) (sdk.Transport, error) {
	if len(s.cfg.Command) > 0 {
		cmd := exec.Command(s.cfg.Command[0], s.cfg.Command[1:]...)
		if len(s.cfg.Env) > 0 {
			cmd.Env = append(cmd.Environ(), s.cfg.Env...)
		}
		return &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil
	}
	h := http.Header{}
	for k, v := range s.cfg.Headers {
		h.Set(k, v)
	}
	if s.cfg.Credentials != nil {
		own, err := s.cfg.Credentials(ctx, scope)
		if err != nil {
			return nil, err
		}
		for k, vs := range own {
			h[http.CanonicalHeaderKey(k)] = vs
		}
	}
	client := &http.Client{Transport: headerTransport{h: h, base: http.DefaultTransport}}
	return &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: client, MaxRetries: -1}, nil
}

// headerTransport adds a session's headers to each of its requests.
type headerTransport struct {
	h    http.Header
	base http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range t.h {
		r.Header[k] = vs
	}
	return t.base.RoundTrip(r)
}

// drop forgets scope's session when it is cs (a call found it broken).
func (s *server) drop(scope string, cs *sdk.ClientSession) {
	if s.cfg.Credentials == nil {
		scope = ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if x, ok := s.sessions[scope]; ok && x.cs == cs {
		_ = cs.Close()
		delete(s.sessions, scope)
	}
}

func (s *server) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for k, x := range s.sessions {
		errs = append(errs, x.cs.Close())
		delete(s.sessions, k)
	}
	return errors.Join(errs...)
}

// list lists the server's tools (as scope "": Credentials is asked for
// the start-up's headers) and makes them agent tools.
func (s *server) list(ctx context.Context) ([]agent.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	cs, err := s.session(ctx, "")
	if err != nil {
		return nil, err
	}
	var out []agent.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("cannot list its tools: %w", err)
		}
		if len(s.cfg.Tools) > 0 && !slices.Contains(s.cfg.Tools, t.Name) {
			continue
		}
		tool, err := s.tool(t)
		if err != nil {
			return nil, err
		}
		out = append(out, tool)
	}
	return out, nil
}

var badNameChars = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// tool makes one of the server's tools an agent tool.
func (s *server) tool(t *sdk.Tool) (agent.Tool, error) {
	name := t.Name
	if s.cfg.Name != "" {
		name = s.cfg.Name + "_" + name
	}
	name = badNameChars.ReplaceAllString(name, "_")
	if len(name) > 64 {
		return agent.Tool{}, fmt.Errorf("tool %q: its name is over 64 characters", name)
	}
	schema, err := json.Marshal(t.InputSchema)
	if err != nil {
		return agent.Tool{}, fmt.Errorf("tool %q: input schema: %w", t.Name, err)
	}
	if string(schema) == "null" {
		schema = nil
	}
	desc := t.Description
	if desc == "" && t.Annotations != nil {
		desc = t.Annotations.Title
	}
	tool := agent.Tool{Name: name, Description: desc, InputSchema: schema, Execute: s.caller(t.Name)}
	readOnly := t.Annotations != nil && t.Annotations.ReadOnlyHint
	// The server's word that a second call does no more than the first.
	tool.Idempotent = readOnly || t.Annotations != nil && t.Annotations.IdempotentHint
	switch {
	case s.cfg.Approval == ApproveAlways, s.cfg.Approval == ApproveUnlessReadOnly && !readOnly:
		tool.NeedsApproval = agent.Always
	}
	return tool, nil
}

// caller returns the Execute of the server's tool name.
func (s *server) caller(name string) func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	return func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		ri, _ := agent.RunInfoFrom(ctx)
		ctx, cancel := context.WithTimeout(ctx, s.timeout)
		defer cancel()
		cs, err := s.session(ctx, ri.Scope)
		if err != nil {
			s.log.Warn("mcp: cannot connect", "server", s.cfg.Name, "tool", name, "error", err)
			if ctx.Err() != nil {
				return nil, s.failed(ctx, err)
			}
			return nil, fmt.Errorf("%s could not be reached", s.label)
		}
		params := &sdk.CallToolParams{Name: name, Arguments: args}
		if key := agent.IdempotencyKey(ctx); key != "" {
			params.Meta = sdk.Meta{IdempotencyKeyMeta: key}
		}
		if e := agent.Emitter(ctx); e != nil {
			token := ids.New()
			s.progress.Store(token, e)
			defer s.progress.Delete(token)
			params.SetProgressToken(token)
		}
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				s.drop(ri.Scope, cs) // a broken session is opened again for the next call
			}
			return nil, s.failed(ctx, err, "tool", name)
		}
		return result(res)
	}
}

// failed is a call's error as the model and the person are told it: what
// happened, in the server's words where it gave some, never the client's
// internals (those are logged).
func (s *server) failed(ctx context.Context, err error, attrs ...any) error {
	s.log.Warn("mcp: call failed", append([]any{"server", s.cfg.Name, "error", err}, attrs...)...)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%s did not answer within %s", s.label, s.timeout)
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, sdk.ErrConnectionClosed), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%s closed the connection", s.label)
	}
	var se *jsonrpc.Error
	if errors.As(err, &se) {
		return fmt.Errorf("%s refused the call: %s", s.label, se.Message)
	}
	return fmt.Errorf("%s answered something that is not an MCP result", s.label)
}

// result is a call's result as the tool's: structured content when the
// server sends it, the text when that is all, else the content list as
// MCP shapes it. A result marked as an error is the tool's error.
func result(res *sdk.CallToolResult) (json.RawMessage, error) {
	if res.IsError {
		text := texts(res.Content)
		if text == "" {
			text = "the tool failed"
		}
		return nil, errors.New(text)
	}
	if res.StructuredContent != nil {
		return json.Marshal(res.StructuredContent)
	}
	if len(res.Content) == 1 {
		if t, ok := res.Content[0].(*sdk.TextContent); ok {
			return json.Marshal(t.Text)
		}
	}
	if res.Content == nil {
		res.Content = []sdk.Content{}
	}
	return json.Marshal(res.Content)
}

func texts(content []sdk.Content) string {
	var parts []string
	for _, c := range content {
		if t, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}
