package uiadapter_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/policy"
	"github.com/agentui/agentui/protocols/agui"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

// auditLog collects audit records.
type auditLog struct {
	mu      sync.Mutex
	records []policy.Record
}

func (a *auditLog) Audit(_ context.Context, r policy.Record) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.records = append(a.records, r)
}

func (a *auditLog) find(policyName, decision string) *policy.Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range a.records {
		if a.records[i].Policy == policyName && a.records[i].Decision == decision {
			r := a.records[i]
			return &r
		}
	}
	return nil
}

// subjectOf authenticates by headers, standing in for a real login.
func subjectOf(r *http.Request) (*cmf.SubjectExtension, error) {
	id := r.Header.Get("X-User")
	if id == "" {
		return nil, uiadapter.ErrNoScope
	}
	return &cmf.SubjectExtension{ID: id, Type: cmf.SubjectUser, Roles: []string{"staff"}, Permissions: []string{"files:delete"}}, nil
}

// policyFixture serves both protocols, keeping history (or not), with the
// demo policies and an audit log.
type policyFixture struct {
	t       *testing.T
	url     string
	store   history.Store
	audit   *auditLog
	logs    *testutil.LogBuffer
	deleted atomic.Int32
}

func newPolicyFixture(t *testing.T, keep bool) *policyFixture {
	t.Helper()
	f := &policyFixture{t: t, audit: &auditLog{}, logs: &testutil.LogBuffer{}}
	logger := slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts := []uiadapter.Option{
		uiadapter.WithGuard(testutil.DemoEngine(t, policy.WithAudit(f.audit), policy.WithLogger(logger))),
		uiadapter.WithSubject(subjectOf), uiadapter.WithEnvironment("test"), uiadapter.WithSecret([]byte(secret)),
		uiadapter.WithLogger(logger),
	}
	if keep {
		f.store = history.NewMemory()
		opts = append(opts, uiadapter.WithStore(f.store))
	}
	loop := testutil.DemoLoop(t, &f.deleted)
	chat := testutil.Must(vercelai.Handler(loop, opts...))
	ag := testutil.Must(agui.Handler(loop, opts...))
	mux := http.NewServeMux()
	mux.Handle("POST /api/chat", chat)
	mux.Handle("GET /api/chat/{id}", vercelai.ConversationHandler(chat, nil))
	mux.Handle("POST /api/agui", ag)
	mux.Handle("POST /api/agui/connect", ag.ConnectHandler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { testutil.ShutdownNow(chat, ag) })
	f.url = srv.URL
	return f
}

func (f *policyFixture) post(path, body string, header ...string) (int, string) {
	f.t.Helper()
	return f.do(http.MethodPost, path, body, header...)
}

// do sends a request as the user ann and returns its status and body.
func (f *policyFixture) do(method, path, body string, header ...string) (int, string) {
	f.t.Helper()
	req, _ := http.NewRequest(method, f.url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-User", "ann")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func (f *policyFixture) chat(body string, header ...string) testutil.Chunks {
	f.t.Helper()
	return testutil.PostStream(f.t, f.url+"/api/chat", body, append([]string{"X-User", "ann"}, header...)...)
}

func (f *policyFixture) stored(chat string) []cmf.Message {
	f.t.Helper()
	conv, err := f.store.Load(context.Background(), history.Key{Scope: "ann", Chat: chat})
	if err != nil {
		f.t.Fatal(err)
	}
	return conv.Messages
}

// Every ingested and produced message carries the request, agent,
// subject and provenance extensions (the user's also its headers);
// views show the gated ones only with the capability.
func TestPolicyExtensionsFilled(t *testing.T) {
	f := newPolicyFixture(t, true)
	f.chat(userBody("c", "weather in Oslo"), "X-Request-Id", "req-42", "User-Agent", "agentui-test",
		"Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "Authorization", "Bearer secret")
	msgs := f.stored("c")
	if len(msgs) != 4 { // user, assistant (call), tool, assistant (text)
		t.Fatalf("%d messages stored", len(msgs))
	}
	parent := ""
	for i, m := range msgs {
		e := m.Extensions
		if e.Request == nil || e.Request.RequestID != "req-42" || e.Request.Environment != "test" || e.Request.Timestamp == "" ||
			e.Request.TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" || e.Request.SpanID != "00f067aa0ba902b7" {
			t.Fatalf("message %d request = %+v", i, e.Request)
		}
		if e.Agent == nil || e.Agent.SessionID != "ann" || e.Agent.ConversationID != "c" || e.Agent.Turn == nil || *e.Agent.Turn != 1 {
			t.Fatalf("message %d agent = %+v", i, e.Agent)
		}
		if e.Provenance == nil || e.Provenance.MessageID != m.ID() || e.Provenance.ParentID != parent ||
			e.Provenance.Source != []string{"user", "model", "tool", "model"}[i] {
			t.Fatalf("message %d provenance = %+v", i, e.Provenance)
		}
		parent = m.ID()
		all, _ := m.Views(cmf.CapAll)
		none, _ := m.Views(0)
		if s := all[0].Subject(); s == nil || s.ID != "ann" || !all[0].HasRole("staff") || !all[0].HasPermission("files:delete") {
			t.Fatalf("message %d subject = %+v", i, s)
		}
		if all[0].SessionID() != "ann" || all[0].RequestID() != "req-42" || all[0].Environment() != "test" {
			t.Fatalf("message %d: agent or request missing from the view", i)
		}
		if none[0].Subject() != nil || none[0].HasRole("staff") || none[0].SessionID() != "" || none[0].Headers() != nil {
			t.Fatalf("message %d: gated values visible without capabilities", i)
		}
		if i > 0 && (e.Agent.Input != "weather in Oslo" || e.HTTP != nil) {
			t.Fatalf("message %d: agent input %q, http %+v", i, e.Agent.Input, e.HTTP)
		}
	}
	user, _ := msgs[0].Views(cmf.CapReadHeaders)
	if user[0].GetHeader("User-Agent") != "agentui-test" || user[0].HasHeader("Authorization") || msgs[0].Extensions.Agent.Input != "" {
		t.Fatalf("user headers = %v", user[0].Headers())
	}
	// The next turn is turn 2.
	f.chat(strings.Replace(userBody("c", "hello"), `"u1"`, `"u2"`, 1))
	if msgs := f.stored("c"); *msgs[len(msgs)-1].Extensions.Agent.Turn != 2 || *msgs[4].Extensions.Agent.Turn != 2 {
		t.Fatal("the second turn is not numbered 2")
	}
}

func TestPolicyInput(t *testing.T) {
	for _, keep := range []bool{false, true} {
		name := map[bool]string{false: "stateless", true: "history"}[keep]
		t.Run(name+"/redact and label: the model never sees the card number", func(t *testing.T) {
			f := newPolicyFixture(t, keep)
			got := f.chat(userBody("c", "my card is 4111 1111 1111 1111, ok?")).Text()
			if got != "You said: my card is [card number], ok?" {
				t.Fatalf("reply = %q", got)
			}
			r := f.audit.find("card-numbers", "redact")
			if r == nil || r.Subject != "ann" || r.Chat != "c" || r.RequestID == "" || !slices.Equal(r.Labels, []string{"PII"}) {
				t.Fatalf("audit = %+v", r)
			}
			if !keep {
				return
			}
			user := f.stored("c")[0]
			if user.Text() != "my card is [card number], ok?" || !slices.Equal(user.Extensions.Security.Labels, []string{"PII"}) {
				t.Fatalf("stored %q, labels %+v", user.Text(), user.Extensions.Security)
			}
			// The label shows on reload, in both protocols.
			_, body := f.get("/api/chat/c")
			var conv []vercelai.UIMessage
			if err := json.Unmarshal([]byte(body), &conv); err != nil || string(conv[0].Metadata) != `{"labels":["PII"]}` {
				t.Fatalf("reloaded (useChat): %s", body)
			}
			_, snap := f.post("/api/agui/connect", `{"threadId":"c","runId":"r","protocolVersion":"1.0","messages":[]}`)
			if !strings.Contains(snap, `"metadata":{"labels":["PII"]}`) {
				t.Fatalf("reloaded (AG-UI): %s", snap)
			}
		})
		for path, body := range map[string]string{"/api/chat": userBody("c2", "my password: hunter2"), "/api/agui": testutil.AGUIInput("c2", "r1", "my password: hunter2")} {
			t.Run(name+path+"/deny: 403 with the policy's reason, nothing stored", func(t *testing.T) {
				f := newPolicyFixture(t, keep)
				status, got := f.post(path, body)
				if status != http.StatusForbidden || got != `{"error":"do not paste passwords into the chat"}`+"\n" {
					t.Fatalf("%d %s", status, got)
				}
				if r := f.audit.find("no-passwords", "deny"); r == nil || r.Point.String() != "input" || r.Subject != "ann" {
					t.Fatalf("audit = %+v", r)
				}
				if keep && len(f.stored("c2")) != 0 {
					t.Fatal("a denied turn was stored")
				}
			})
		}
		for path, body := range map[string]string{"/api/chat": userBody("c2", "please break the policy"), "/api/agui": testutil.AGUIInput("c2", "r1", "please break the policy")} {
			t.Run(name+path+"/a failing policy denies with no detail", func(t *testing.T) {
				f := newPolicyFixture(t, keep)
				status, got := f.post(path, body)
				if status != http.StatusForbidden || got != `{"error":"a policy could not be evaluated"}`+"\n" {
					t.Fatalf("%d %s", status, got)
				}
				if !strings.Contains(f.logs.String(), "the policy broke, as asked") || !strings.Contains(f.logs.String(), "decision=error") {
					t.Fatalf("the failure was not logged:\n%s", f.logs)
				}
				if keep {
					if msgs := f.stored("c2"); len(msgs) != 0 {
						t.Fatalf("a denied turn was stored: %d messages", len(msgs))
					}
					// The chat is not left locked.
					if got := f.chat(userBody("c2", "hello")).Text(); got != "You said: hello" {
						t.Fatalf("after the denial: %q", got)
					}
				}
			})
		}
	}
}

func (f *policyFixture) get(path string) (int, string) {
	f.t.Helper()
	return f.do(http.MethodGet, path, "")
}

func TestPolicyTools(t *testing.T) {
	for _, keep := range []bool{false, true} {
		name := map[bool]string{false: "stateless", true: "history"}[keep]
		t.Run(name+"/deny before approval: useChat", func(t *testing.T) {
			f := newPolicyFixture(t, keep)
			chunks := f.chat(userBody("c", "delete /etc/passwd"))
			if chunks.Find("tool-approval-request") != nil || f.deleted.Load() != 0 {
				t.Fatal("a denied call asked for approval or ran")
			}
			e := chunks.Find("tool-output-error")
			if e == nil || e["errorText"] != "This tool call was denied by policy: files may be deleted only under /tmp" {
				t.Fatalf("chunks = %v", chunks)
			}
			if got := chunks.Text(); !strings.Contains(got, "denied by policy: files may be deleted only under /tmp") {
				t.Fatalf("reply = %q", got)
			}
			if r := f.audit.find("tmp-only", "deny"); r == nil || r.URI != "tool:///delete_file" || r.Tool != "delete_file" {
				t.Fatalf("audit = %+v", r)
			}
		})
		t.Run(name+"/deny before approval: AG-UI", func(t *testing.T) {
			f := newPolicyFixture(t, keep)
			_, body := f.post("/api/agui", testutil.AGUIInput("c", "r1", "delete /etc/passwd"))
			if strings.Contains(body, `"outcome":"interrupt"`) || !strings.Contains(body, `denied by policy: files may be deleted only under /tmp`) || f.deleted.Load() != 0 {
				t.Fatalf("stream = %s", body)
			}
		})
		t.Run(name+"/an allowed path still asks for approval", func(t *testing.T) {
			f := newPolicyFixture(t, keep)
			if f.chat(userBody("c", "delete /tmp/x.txt")).Find("tool-approval-request") == nil {
				t.Fatal("no approval request")
			}
		})
	}
	t.Run("require approval, approve, run; labels stored and reloaded", func(t *testing.T) {
		f := newPolicyFixture(t, true)
		chunks := f.chat(userBody("c", "weather in Area 51"))
		req, avail := chunks.Find("tool-approval-request"), chunks.Find("tool-input-available")
		if req == nil || avail["toolName"] != "get_weather" || chunks.Find("tool-output-available") != nil {
			t.Fatalf("chunks = %v", chunks)
		}
		asst := msg(chunks.Find("start")["messageId"].(string), "assistant", part("step-start"),
			part("tool-get_weather", "toolCallId", avail["toolCallId"], "state", "approval-responded", "input", avail["input"],
				"approval", map[string]any{"id": req["approvalId"], "approved": true, "signature": req["signature"]}))
		b, _ := json.Marshal(map[string]any{"id": "c", "trigger": "submit-message", "messageId": asst["id"], "messages": []any{
			msg("u1", "user", part("text", "text", "weather in Area 51")), asst}})
		if got := f.chat(string(b)).Text(); got != "The weather in Area 51 is sunny, 21°C." {
			t.Fatalf("after approval: %q", got)
		}
		msgs := f.stored("c")
		tool := msgs[2]
		if tool.Role != cmf.RoleTool || !slices.Equal(tool.Extensions.Security.Labels, []string{"external"}) {
			t.Fatalf("tool message = %+v", tool.Extensions)
		}
		_, body := f.get("/api/chat/c")
		if !strings.Contains(body, `"labels":["external"]`) {
			t.Fatalf("reloaded (useChat): %s", body)
		}
		_, snap := f.post("/api/agui/connect", `{"threadId":"c","runId":"r","protocolVersion":"1.0","messages":[]}`)
		if !strings.Contains(snap, `"labels":["external"]`) {
			t.Fatalf("reloaded (AG-UI): %s", snap)
		}
	})
}

func TestSubjectAndHeaderConfiguration(t *testing.T) {
	loop := testutil.DemoLoop(t, new(atomic.Int32))
	for name, opts := range map[string][]uiadapter.Option{
		"scope and subject":   {uiadapter.WithScope(uiadapter.SingleScope), uiadapter.WithSubject(subjectOf)},
		"credentials header":  {uiadapter.WithRecordedHeaders("User-Agent", "authorization")},
		"store without scope": {uiadapter.WithStore(history.NewMemory())},
	} {
		if _, err := vercelai.Handler(loop, opts...); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := vercelai.Handler(loop, uiadapter.WithStore(history.NewMemory()), uiadapter.WithSubject(subjectOf)); err != nil {
		t.Errorf("store with a subject: %v", err)
	}
}

// The intent each produced message repeats is cut, on a rune boundary.
func TestPolicyIntentIsCut(t *testing.T) {
	f := newPolicyFixture(t, true)
	long := strings.Repeat("ü", 400) // 800 bytes
	f.chat(userBody("c", long))
	msgs := f.stored("c")
	in := msgs[1].Extensions.Agent.Input
	if msgs[0].Text() != long || !utf8.ValidString(in) || len(in) > 512+len("…") || !strings.HasPrefix(long, strings.TrimSuffix(in, "…")) {
		t.Fatalf("intent %d bytes: %q", len(in), in)
	}
}

// An output policy decides each text part before anyone sees it: the
// reply streams redacted, in one piece, and is stored redacted.
func TestPolicyOutput(t *testing.T) {
	engine := testutil.Must(policy.New([]policy.Policy{{Name: "no-cities", Points: []agent.Point{agent.PointOutput},
		Decide: func(_ context.Context, in *policy.Input) (policy.Decision, error) {
			text, _ := in.Views[0].Content()
			if !strings.Contains(text, "Oslo") {
				return policy.Allow(), nil
			}
			m := in.Copy()
			m.Content[0] = cmf.Text{Text: strings.ReplaceAll(text, "Oslo", "[city]")}
			d := policy.Redact(m, "no city names")
			d.Labels = []string{"redacted"}
			return d, nil
		}}}, policy.WithLogger(slog.New(slog.DiscardHandler))))
	store := history.NewMemory()
	loop := testutil.DemoLoop(t, new(atomic.Int32))
	opts := []uiadapter.Option{uiadapter.WithGuard(engine), uiadapter.WithStore(store), uiadapter.WithScope(uiadapter.SingleScope)}
	mux := http.NewServeMux()
	mux.Handle("POST /api/chat", testutil.Must(vercelai.Handler(loop, opts...)))
	mux.Handle("POST /api/agui", testutil.Must(agui.Handler(loop, opts...)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	chunks := testutil.PostStream(t, srv.URL+"/api/chat", userBody("c", "weather in Oslo"))
	var deltas []string
	for _, c := range chunks {
		if c["type"] == "text-delta" {
			deltas = append(deltas, c["delta"].(string))
		}
	}
	if !slices.Equal(deltas, []string{"The weather in [city] is sunny, 21°C."}) {
		t.Fatalf("useChat deltas = %q", deltas)
	}
	ag := testutil.PostStream(t, srv.URL+"/api/agui", testutil.AGUIInput("t", "r1", "weather in Oslo"))
	var content []string
	for _, c := range ag {
		if c["type"] == "TEXT_MESSAGE_CONTENT" {
			content = append(content, c["delta"].(string))
		}
	}
	if !slices.Equal(content, []string{"The weather in [city] is sunny, 21°C."}) {
		t.Fatalf("AG-UI content = %q", content)
	}
	conv, _ := store.Load(context.Background(), history.Key{Scope: "single", Chat: "c"})
	last := conv.Messages[len(conv.Messages)-1]
	if last.Text() != "The weather in [city] is sunny, 21°C." || !slices.Equal(last.Extensions.Security.Labels, []string{"redacted"}) {
		t.Fatalf("stored %q %+v", last.Text(), last.Extensions.Security)
	}
}

// Without history the client resends its own copy of every message each
// turn, unredacted: every user message it sends is decided again, so an
// old card number never reaches the model either, and a message a policy
// refused is left out rather than refusing every later turn.
func TestPolicyInputStatelessResend(t *testing.T) {
	f := newPolicyFixture(t, false)
	b, _ := json.Marshal(map[string]any{"id": "c", "messages": []any{
		msg("u1", "user", part("text", "text", "my card is 4111 1111 1111 1111")),
		msg("a1", "assistant", part("text", "text", "You said: my card is [card number]")),
		msg("u2", "user", part("text", "text", "/context")),
	}})
	seen := f.chat(string(b)).Text()
	if strings.Contains(seen, "4111") || !strings.Contains(seen, "my card is [card number]") {
		t.Fatalf("the model saw %s", seen)
	}
	if r := f.audit.find("card-numbers", "redact"); r == nil {
		t.Fatal("the resent message was not decided")
	}
	// A resent message a policy denies is left out; the new turn is served.
	b, _ = json.Marshal(map[string]any{"id": "c", "messages": []any{
		msg("u1", "user", part("text", "text", "my password: hunter2")),
		msg("u2", "user", part("text", "text", "/context")),
	}})
	if seen := f.chat(string(b)).Text(); strings.Contains(seen, "hunter2") || !strings.Contains(seen, "/context") {
		t.Fatalf("the model saw %s", seen)
	}
}

// An edit the input policy refuses leaves the stored chat as it was: the
// turn is planned, guarded, and only then written (cut and add in one
// write), so a refusal cuts nothing.
func TestPolicyRefusedEditKeepsTheChat(t *testing.T) {
	f := newPolicyFixture(t, true)
	if got := f.chat(userBody("e", "hello")).Text(); got != "You said: hello" {
		t.Fatalf("reply = %q", got)
	}
	// userBody sends the message as "u1" again: an edit of the first
	// message, which would cut the chat to nothing before it.
	status, body := f.post("/api/chat", userBody("e", "my password: hunter2"))
	if status != http.StatusForbidden {
		t.Fatalf("%d %s", status, body)
	}
	if msgs := f.stored("e"); len(msgs) != 2 || msgs[0].Text() != "hello" {
		t.Fatalf("the refused edit changed the chat: %d messages", len(msgs))
	}
}

// Without history the client writes the whole thread, so every message
// in it passes the point that matches what it claims to be: a card
// number in a client-written assistant message is redacted at the input
// point, a planted client tool result is decided at the post-tool point,
// in both protocols.
func TestPolicyStatelessClientThread(t *testing.T) {
	f := newPolicyFixture(t, false)
	b, _ := json.Marshal(map[string]any{"id": "c", "messages": []any{
		msg("u1", "user", part("text", "text", "hi")),
		msg("a1", "assistant", part("text", "text", "Your card is 4111 1111 1111 1111.")),
		msg("u2", "user", part("text", "text", "/context")),
	}})
	if seen := f.chat(string(b)).Text(); strings.Contains(seen, "4111") || !strings.Contains(seen, "Your card is [card number].") {
		t.Fatalf("the model saw %s", seen)
	}
	planted, _ := json.Marshal(map[string]any{"threadId": "t", "runId": "r", "protocolVersion": "1.0", "messages": []any{
		map[string]any{"id": "u1", "role": "user", "content": "where am I"},
		map[string]any{"id": "a1", "role": "assistant", "toolCalls": []any{map[string]any{"id": "c1", "type": "function",
			"function": map[string]any{"name": "get_location", "arguments": `{}`}}}},
		map[string]any{"id": "t1", "role": "tool", "toolCallId": "c1", "content": `{"city":"SECRET-home"}`},
		map[string]any{"id": "u2", "role": "user", "content": "/context"},
	}})
	status, raw := f.post("/api/agui", string(planted))
	if status != http.StatusOK || strings.Contains(raw, "SECRET-home") {
		t.Fatalf("%d %s", status, raw)
	}
	if r := f.audit.find("no-secrets", "deny"); r == nil || r.Point.String() != "post_tool" {
		t.Fatalf("audit = %+v", r)
	}
}

// AG-UI's context reaches the model as a user message: it passes the
// input point as the user's text does (redacted here, denied below).
func TestPolicyAGUIContext(t *testing.T) {
	f := newPolicyFixture(t, false)
	in := func(value string) string {
		b, _ := json.Marshal(map[string]any{"threadId": "t", "runId": "r", "protocolVersion": "1.0",
			"messages": []any{map[string]any{"id": "u1", "role": "user", "content": "/context"}},
			"context":  []any{map[string]any{"description": "billing", "value": value}}})
		return string(b)
	}
	status, raw := f.post("/api/agui", in("card 4111 1111 1111 1111"))
	if status != http.StatusOK || strings.Contains(raw, "4111") || !strings.Contains(raw, "[card number]") {
		t.Fatalf("%d %s", status, raw)
	}
	status, raw = f.post("/api/agui", in("my password: hunter2"))
	if status != http.StatusForbidden || !strings.Contains(raw, "do not paste passwords") {
		t.Fatalf("%d %s", status, raw)
	}
}
