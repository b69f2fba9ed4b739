package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/mcptools"
	"github.com/agentui/agentui/protocols/agui"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

// fixture serves useChat and AG-UI with history, over the demo model and
// the tools of two MCP servers: "web" over streamable HTTP and "local"
// over stdio, and "auth", an HTTP server that needs each user's token.
type fixture struct {
	t       *testing.T
	url     string
	store   history.Store
	effects atomic.Int64  // web_delete's runs
	steps   chan struct{} // web_count's next step
	tools   *mcptools.Toolset
}

const hangTimeout = 300 * time.Millisecond

func newFixture(t *testing.T, extra ...uiadapter.Option) *fixture {
	t.Helper()
	f := &fixture{t: t, store: history.NewMemory(), steps: make(chan struct{}, 10)}
	web := httpServer(t, &f.effects, f.steps)
	auth := httpServer(t, nil, nil)
	cmd, env := stdioCommand(t)
	tools, err := mcptools.Connect(context.Background(), slog.New(slog.DiscardHandler),
		mcptools.Server{Name: "web", URL: web.URL},
		mcptools.Server{Name: "local", Command: cmd, Env: env, CallTimeout: hangTimeout, Tools: []string{"echo", "die", "hang"}},
		mcptools.Server{Name: "auth", URL: auth.URL, Tools: []string{"whoami"}, Credentials: func(_ context.Context, scope string) (http.Header, error) {
			return http.Header{"Authorization": {"Bearer token-of-" + scope}}, nil
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tools.Close() })
	f.tools = tools
	loop := testutil.Must(agent.New(demo.New(), agent.WithTools(tools.Tools()...)))
	opts := []uiadapter.Option{
		uiadapter.WithStore(f.store), uiadapter.WithSecret([]byte("mcptools-test-secret-0123456789abcdef")),
		uiadapter.WithScope(func(r *http.Request) (string, error) { return r.Header.Get("X-Scope"), nil }),
		uiadapter.WithLogger(slog.New(slog.DiscardHandler)),
	}
	opts = append(opts, extra...)
	chat := testutil.Must(vercelai.Handler(loop, opts...))
	ag := testutil.Must(agui.Handler(loop, opts...))
	mux := http.NewServeMux()
	mux.Handle("POST /api/chat", chat)
	mux.Handle("POST /api/agui", ag)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { testutil.ShutdownNow(chat, ag) })
	f.url = srv.URL
	return f
}

// chat sends text as a new useChat message of chat.
func (f *fixture) chat(scope, chat, text string) testutil.Chunks {
	f.t.Helper()
	return testutil.PostStream(f.t, f.url+"/api/chat", userMessage(chat, text), "X-Scope", scope)
}

func userMessage(chat, text string) string {
	b, _ := json.Marshal(map[string]any{"id": chat, "trigger": "submit-message", "messages": []any{
		map[string]any{"id": "u-" + chat, "role": "user", "parts": []any{map[string]any{"type": "text", "text": text}}}}})
	return string(b)
}

// answer answers the approval the chunks asked for, as useChat sends it.
func (f *fixture) answer(scope, chat string, asked testutil.Chunks, approved bool) testutil.Chunks {
	f.t.Helper()
	req, avail := asked.Find("tool-approval-request"), asked.Find("tool-input-available")
	if req == nil {
		f.t.Fatalf("no approval asked: %v", asked)
	}
	b, _ := json.Marshal(map[string]any{"id": chat, "trigger": "submit-message", "messages": []any{
		map[string]any{"id": asked.Find("start")["messageId"], "role": "assistant", "parts": []any{
			map[string]any{"type": "step-start"},
			map[string]any{"type": "tool-" + avail["toolName"].(string), "toolCallId": avail["toolCallId"], "state": "approval-responded", "input": avail["input"],
				"approval": map[string]any{"id": req["approvalId"], "approved": approved}},
		}},
	}})
	return testutil.PostStream(f.t, f.url+"/api/chat", string(b), "X-Scope", scope)
}

// agui runs an AG-UI request and returns its events.
func (f *fixture) agui(scope string, in map[string]any) testutil.Chunks {
	f.t.Helper()
	b, _ := json.Marshal(in)
	return testutil.PostStream(f.t, f.url+"/api/agui", string(b), "X-Scope", scope)
}

// stored is the chat's stored thread as role:text, tool results as
// tool:<result>.
func (f *fixture) stored(scope, chat string) string {
	f.t.Helper()
	conv, err := f.store.Load(context.Background(), history.Key{Scope: scope, Chat: chat})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, m := range conv.Messages {
		if m.Role == cmf.RoleTool {
			for _, p := range m.Content {
				if r, ok := p.(cmf.ToolResult); ok {
					out = append(out, fmt.Sprintf("tool:%s", r.Content))
				}
			}
			continue
		}
		out = append(out, string(m.Role)+":"+m.Text())
	}
	return strings.Join(out, " | ")
}

func TestToolsAndTheirApprovals(t *testing.T) {
	f := newFixture(t)
	approval, idempotent := map[string]bool{}, map[string]bool{}
	for _, tool := range f.tools.Tools() {
		approval[tool.Name] = tool.NeedsApproval != nil
		idempotent[tool.Name] = tool.Idempotent
	}
	if len(approval) != 14 || approval["web_echo"] || !approval["web_delete"] || approval["local_echo"] || approval["auth_whoami"] || !approval["web_key"] {
		t.Fatalf("the tools and whether they need approval: %v", approval)
	}
	// Read-only and idempotent-hinted tools may run twice; the rest at most once.
	if !idempotent["web_echo"] || !idempotent["web_key"] || idempotent["web_delete"] {
		t.Fatalf("the tools and whether they are idempotent: %v", idempotent)
	}
}

// A read-only tool runs at once; one that is not asks first, through
// useChat and AG-UI alike; a denied call never reaches the server.
func TestCallsThroughBothProtocols(t *testing.T) {
	f := newFixture(t)
	if got := f.chat("alice", "c1", `call web_echo {"text":"hi"}`).Text(); got != `web_echo returned: "echo: hi"` {
		t.Fatalf("echo over useChat: %q", got)
	}
	asked := f.chat("alice", "c2", `call web_delete {"path":"/tmp/a"}`)
	if f.effects.Load() != 0 {
		t.Fatal("the tool ran before its approval")
	}
	if got := f.answer("alice", "c2", asked, true).Text(); got != `web_delete returned: "deleted /tmp/a"` || f.effects.Load() != 1 {
		t.Fatalf("approved over useChat: %q, %d runs", got, f.effects.Load())
	}
	asked = f.chat("alice", "c3", `call web_delete {"path":"/tmp/b"}`)
	if got := f.answer("alice", "c3", asked, false).Text(); !strings.Contains(got, "denied") || f.effects.Load() != 1 {
		t.Fatalf("denied over useChat: %q, %d runs", got, f.effects.Load())
	}
	if got := f.stored("alice", "c3"); !strings.Contains(got, "tool:\"The user denied") {
		t.Fatalf("the denied call's history: %s", got)
	}

	user := map[string]any{"id": "u1", "role": "user", "content": `call web_delete {"path":"/tmp/c"}`}
	events := f.agui("alice", map[string]any{"threadId": "t1", "runId": "r1", "protocolVersion": "1.0", "messages": []any{user}})
	outcome, _ := events.Find("RUN_FINISHED")["outcome"].(map[string]any)
	if outcome == nil || f.effects.Load() != 1 {
		t.Fatalf("AG-UI: no interrupt: %v", events)
	}
	interrupt := outcome["interrupts"].([]any)[0].(map[string]any)["id"]
	events = f.agui("alice", map[string]any{"threadId": "t1", "runId": "r2", "protocolVersion": "1.0", "messages": []any{user},
		"resume": []any{map[string]any{"interruptId": interrupt, "status": "resolved", "payload": map[string]any{"approved": true}}}})
	if got := events.Text(); got != `web_delete returned: "deleted /tmp/c"` || f.effects.Load() != 2 {
		t.Fatalf("AG-UI approved: %q, %d runs", got, f.effects.Load())
	}
}

// Progress streams as the tool's preliminary output; the structured
// result is the result; an image comes back in MCP's own form.
func TestProgressStructuredContentAndImages(t *testing.T) {
	f := newFixture(t)
	// The tool counts on once the page has been shown each step.
	chunks := testutil.PostStreamWith(t, stepClient(f.steps), f.url+"/api/chat", userMessage("p", `call web_count {"n":3}`), "X-Scope", "alice")
	var progress []string
	for _, c := range chunks {
		if c["type"] == "tool-output-available" && c["preliminary"] == true {
			b, _ := json.Marshal(c["output"])
			progress = append(progress, string(b))
		}
	}
	if strings.Join(progress, " ") != `{"message":"counted 1","progress":1,"total":3} {"message":"counted 2","progress":2,"total":3} {"message":"counted 3","progress":3,"total":3}` {
		t.Fatalf("progress: %v", progress)
	}
	if got := chunks.Text(); got != `web_count returned: {"counted":3}` {
		t.Fatalf("the structured result: %q", got)
	}
	got := f.chat("alice", "i", "call web_picture").Text()
	var content []map[string]any
	if err := json.Unmarshal([]byte(strings.TrimPrefix(got, "web_picture returned: ")), &content); err != nil || len(content) != 2 ||
		content[0]["type"] != "text" || content[1]["type"] != "image" || content[1]["mimeType"] != "image/png" || content[1]["data"] == "" {
		t.Fatalf("the image result: %s", got)
	}
}

// Each way a server can fail ends the call as a tool error the model
// and the person see, and the chat goes on.
func TestFailuresAreToolErrors(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ text, want string }{
		{"call web_broken", `web_broken failed: the disk is full`},
		{"call web_garbage", `web_garbage failed: MCP server "web" answered something that is not an MCP result`},
		{"call local_hang", `local_hang failed: MCP server "local" did not answer within 300ms`},
		{"call local_die", `local_die failed: MCP server "local" closed the connection`},
		{`call local_echo {"text":"after the restart"}`, `local_echo returned: "echo: after the restart"`},
		{`call web_echo {"text":5}`, `web_echo failed: `},
	} {
		chat := strings.Fields(c.text)[1]
		start := time.Now()
		chunks := f.chat("alice", chat, c.text)
		got := chunks.Text()
		t.Logf("%s: %s", c.text, got)
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: %q, want %q…", c.text, got, c.want)
		}
		if chunks.Find("finish") == nil || chunks.Find("error") != nil {
			t.Errorf("%s: the reply did not finish as a reply: %v", c.text, chunks)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("%s took %s", c.text, d)
		}
		if got := f.stored("alice", chat); !strings.HasPrefix(got, "user:"+c.text+" | assistant: | tool:") {
			t.Errorf("%s: history %s", c.text, got)
		}
	}
}

// A server that needs each user's credentials gets each user's, on a
// session of their own: two users calling at once never see each other's.
func TestCredentialsStayInTheirScope(t *testing.T) {
	f := newFixture(t)
	done := make(chan string, 2)
	for _, who := range []string{"alice", "bob"} {
		go func() {
			chunks := testutil.PostStream(t, f.url+"/api/chat", userMessage("w-"+who, "call auth_whoami"), "X-Scope", who)
			done <- who + "=" + chunks.Text()
		}()
	}
	got := map[string]bool{<-done: true, <-done: true}
	if !got[`alice=auth_whoami returned: "Bearer token-of-alice"`] || !got[`bob=auth_whoami returned: "Bearer token-of-bob"`] {
		t.Fatalf("whose credentials: %v", got)
	}
}

// Bad configuration fails at start-up with one clear line.
func TestBadConfiguration(t *testing.T) {
	for _, c := range []struct {
		servers []mcptools.Server
		want    string
	}{
		{[]mcptools.Server{{Name: "x"}}, "give a command (stdio) or a url"},
		{[]mcptools.Server{{Command: []string{"x"}, URL: "http://x"}}, "not both"},
		{[]mcptools.Server{{Command: []string{"/nonexistent/mcp-server"}}}, "cannot connect"},
	} {
		_, err := mcptools.Connect(context.Background(), nil, c.servers...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want %q", c.servers, err, c.want)
		}
	}
	web := httpServer(t, nil, nil)
	_, err := mcptools.Connect(context.Background(), nil, mcptools.Server{URL: web.URL}, mcptools.Server{URL: web.URL})
	if err == nil || !strings.Contains(err.Error(), "give the servers names") {
		t.Errorf("two servers' tools with one name: %v", err)
	}
}

// denyDeletes is a policy that refuses every call of a tool whose name
// ends in _delete.
type denyDeletes struct{}

func (denyDeletes) Guards(p agent.Point) bool { return p == agent.PointPreTool }

func (denyDeletes) Check(_ context.Context, c *agent.Check) (agent.Verdict, error) {
	if strings.HasSuffix(c.Tool, "_delete") {
		return agent.Verdict{Deny: "deleting is not allowed here"}, nil
	}
	return agent.Verdict{}, nil
}

// An MCP tool passes the policies' points as a Go tool does: a call the
// pre-tool point denies never asks for approval and never reaches its
// server.
func TestPoliciesGuardMCPTools(t *testing.T) {
	f := newFixture(t, uiadapter.WithGuard(denyDeletes{}))
	chunks := f.chat("alice", "g", `call web_delete {"path":"/tmp/a"}`)
	if chunks.Find("tool-approval-request") != nil || f.effects.Load() != 0 {
		t.Fatalf("the denied call asked or ran: %v, %d runs", chunks, f.effects.Load())
	}
	if got := chunks.Text(); !strings.Contains(got, "deleting is not allowed here") {
		t.Fatalf("the reply: %q", got)
	}
	if got := f.chat("alice", "g2", `call web_echo {"text":"hi"}`).Text(); got != `web_echo returned: "echo: hi"` {
		t.Fatalf("an allowed call: %q", got)
	}
}

// The server gets each call's idempotency key in the call's _meta: the
// same for every attempt at that call, another for another call.
func TestServersGetTheIdempotencyKey(t *testing.T) {
	f := newFixture(t)
	keys := map[string]bool{}
	for _, chat := range []string{"k1", "k2"} {
		asked := f.chat("alice", chat, "call web_key")
		got := f.answer("alice", chat, asked, true).Text()
		key := strings.TrimSuffix(strings.TrimPrefix(got, `web_key returned: "`), `"`)
		if !strings.HasPrefix(key, "agentui-") {
			t.Fatalf("the key the server got: %q", got)
		}
		keys[key] = true
	}
	if len(keys) != 2 {
		t.Fatalf("two calls, keys %v", keys)
	}
}

// A scope whose server is slow to open its session holds up no other
// scope: sessions are opened one per scope, outside the server's lock.
func TestASlowScopeHoldsUpNoOther(t *testing.T) {
	s := newTestServer(nil, nil)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	arrived, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer token-of-slow" {
			once.Do(func() { close(arrived) })
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	tools, err := mcptools.Connect(context.Background(), slog.New(slog.DiscardHandler), mcptools.Server{Name: "auth", URL: srv.URL, Tools: []string{"whoami"},
		Credentials: func(_ context.Context, scope string) (http.Header, error) {
			return http.Header{"Authorization": {"Bearer token-of-" + scope}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tools.Close() })
	whoami := tools.Tools()[0]
	call := func(scope string) (string, error) {
		ctx := agent.WithRunInfo(context.Background(), agent.RunInfo{Scope: scope, ChatID: "c"})
		out, err := whoami.Execute(ctx, json.RawMessage(`{}`))
		return string(out), err
	}
	slow := make(chan string, 1)
	go func() {
		out, err := call("slow")
		slow <- fmt.Sprint(out, err)
	}()
	<-arrived // the slow scope is connecting
	if out, err := call("bob"); err != nil || out != `"Bearer token-of-bob"` {
		t.Fatalf("bob's call while another scope connects: %s, %v", out, err)
	}
	close(release)
	if got := <-slow; got != `"Bearer token-of-slow"<nil>` {
		t.Fatalf("the slow scope's call: %s", got)
	}
}
