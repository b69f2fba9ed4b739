package modeltest_test

// An example of a provider written from docs/models.md ("Writing your own
// model") and the test that holds it to the contract: a model of the made
// up "acme" API, a fake of that API, and the harness between the two. A
// provider in its own module writes the same three things. TestSuiteFails
// (suite_test.go) breaks this model in one way at a time, to see the suite
// catch each.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/modeltest"
	"github.com/agentui/agentui/cmf"
)

// TestExampleProvider is the test a provider's package has: the suite,
// over its fake.
func TestExampleProvider(t *testing.T) {
	modeltest.Run(t, modeltest.Harness{
		Provider:   "acme",
		Model:      "acme-large",
		OtherModel: "acme-small",
		Start: func(t *testing.T) modeltest.Backend {
			f := newAcmeFake()
			srv := httptest.NewServer(f)
			t.Cleanup(srv.Close)
			return &acmeBackend{fake: f, url: srv.URL}
		},
		Absent: map[modeltest.Capability]string{
			modeltest.CacheWrites: "the acme API does not report cache writes",
		},
	})
}

// acmeBackend is the harness: it builds models over the fake and writes
// the suite's answers in the fake's terms.
type acmeBackend struct {
	fake *acmeFake
	url  string
}

func (b *acmeBackend) Model(cfg modeltest.Config) (agent.Model, error) {
	url := cfg.BaseURL
	if url == "" {
		url = b.url
	}
	return newAcmeModel(cfg.Model, cfg.APIKey, url, cfg.MaxRetries), nil
}

func (b *acmeBackend) Script(answers ...modeltest.Answer) {
	for _, a := range answers {
		r := acmeReply{stall: a.Stall, message: a.Message}
		switch a.Fault {
		case modeltest.RateLimited:
			r.status, r.code = 429, "rate_limited"
		case modeltest.ServerError:
			r.status, r.code = 500, "server_error"
		case modeltest.Overloaded:
			r.status, r.code = 503, "overloaded"
		case modeltest.InvalidRequest:
			r.status, r.code = 400, "invalid_request"
		case modeltest.BadKey:
			r.status, r.code = 401, "invalid_key"
		case modeltest.ContextOverflow:
			r.status, r.code = 400, "context_too_long"
		}
		if a.Reasoning != "" {
			r.events = append(r.events, acmeEvent{Reasoning: a.Reasoning})
		}
		if a.Text != "" {
			r.events = append(r.events, acmeEvent{Text: a.Text})
		}
		stop := map[modeltest.Stop]string{modeltest.EndTurn: "end", modeltest.MaxTokens: "length", modeltest.ContentFilter: "filter"}[a.Stop]
		if a.Call != nil {
			r.events = append(r.events, acmeEvent{Call: &acmeCall{Name: a.Call.Name, Args: json.RawMessage(a.Call.Args)}})
			stop = "call"
		}
		u := acmeUsage{Input: 25, Output: 10}
		if a.Usage != nil {
			u = acmeUsage{Input: a.Usage.Input, Cached: a.Usage.CachedInput, Output: a.Usage.Output, Reasoning: a.Usage.Reasoning}
		}
		r.events = append(r.events, acmeEvent{Stop: stop, Usage: &u})
		b.fake.script(r)
	}
}

func (b *acmeBackend) Requests() [][]byte { return b.fake.requests() }

// The acme API: POST /chat with the conversation; the reply streams as
// JSON lines, each an acmeEvent. Reasoning comes with a signature that
// must go back with it, to the same model only.

type acmeRequest struct {
	Model    string        `json:"model"`
	Messages []acmeMessage `json:"messages"`
	Tools    []string      `json:"tools,omitempty"`
}

type acmeMessage struct {
	Role      string    `json:"role"` // user, assistant, tool
	Text      string    `json:"text,omitempty"`
	Reasoning string    `json:"reasoning,omitempty"`
	Signature string    `json:"signature,omitempty"`
	Call      *acmeCall `json:"call,omitempty"`
	CallID    string    `json:"call_id,omitempty"` // a tool message's
}

type acmeCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type acmeEvent struct {
	Reasoning string     `json:"reasoning,omitempty"`
	Signature string     `json:"signature,omitempty"`
	Text      string     `json:"text,omitempty"`
	Call      *acmeCall  `json:"call,omitempty"`
	Stop      string     `json:"stop,omitempty"` // end, length, filter, call
	Usage     *acmeUsage `json:"usage,omitempty"`
}

// acmeUsage counts as the API bills: input includes cached, output
// includes reasoning.
type acmeUsage struct {
	Input, Cached, Output, Reasoning int64
}

// acmeModel is the provider's agent.Model.
type acmeModel struct {
	name, key, url string
	retries        int
	bug            string // which way TestSuiteFails breaks it; "" for none
}

func newAcmeModel(name, key, url string, retries int) *acmeModel {
	return &acmeModel{name: name, key: key, url: url, retries: retries, bug: os.Getenv(bugVar)}
}

// acmeError is a refusal: its status and code, never the API's message.
type acmeError struct {
	status int
	code   string
}

func (e *acmeError) Error() string { return fmt.Sprintf("acme: HTTP %d (%s)", e.status, e.code) }

// Unwrap says what the refusal means to the user.
func (e *acmeError) Unwrap() error {
	switch {
	case e.code == "context_too_long":
		return agent.ErrContextOverflow
	case e.status == 401 || e.status == 403:
		return agent.ErrModelAccessDenied
	case e.status == 429 || e.status >= 500:
		return agent.ErrModelBusy
	}
	return agent.ErrModelRejected
}

func (m *acmeModel) Stream(ctx context.Context, req *agent.Request) iter.Seq2[agent.Chunk, error] {
	return func(yield func(agent.Chunk, error) bool) {
		body, _ := json.Marshal(m.request(req))
		resp, err := m.post(ctx, body)
		if err != nil {
			yield(agent.Chunk{}, err)
			return
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			var ev acmeEvent
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				yield(agent.Chunk{}, errors.New("acme: a line of the stream is not JSON"))
				return
			}
			if c, ok := m.chunk(ev); ok && !yield(c, nil) {
				return
			}
			if ev.Stop != "" {
				return
			}
		}
		err = ctx.Err()
		if err == nil || m.bug == "ignores cancellation" {
			err = errors.New("acme: the stream ended before the reply did")
		}
		yield(agent.Chunk{}, err)
	}
}

// request is the conversation as the API takes it. Reasoning goes back
// only to the model that produced it.
func (m *acmeModel) request(req *agent.Request) acmeRequest {
	out := acmeRequest{Model: m.name}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, t.Name)
	}
	for msg := range req.All() {
		switch msg.Role {
		case cmf.RoleUser:
			out.Messages = append(out.Messages, acmeMessage{Role: "user", Text: msg.Text()})
		case cmf.RoleAssistant:
			for _, p := range msg.Content {
				switch p := p.(type) {
				case cmf.Thinking:
					if p.Opaque.From("acme", m.name) || m.bug == "sends foreign values" && p.Opaque != nil {
						out.Messages = append(out.Messages, acmeMessage{Role: "assistant", Reasoning: p.Text, Signature: p.Opaque.Data})
					}
				case cmf.Text:
					out.Messages = append(out.Messages, acmeMessage{Role: "assistant", Text: p.Text})
				case cmf.ToolCall:
					out.Messages = append(out.Messages, acmeMessage{Role: "assistant", Call: &acmeCall{ID: p.ToolCallID, Name: p.Name, Args: p.Arguments}})
				}
			}
		case cmf.RoleTool:
			for _, p := range msg.Content {
				if r, ok := p.(cmf.ToolResult); ok {
					out.Messages = append(out.Messages, acmeMessage{Role: "tool", CallID: r.ToolCallID, Text: string(r.Content)})
				}
			}
		}
	}
	return out
}

// post sends the request, again after a refusal worth retrying, as many
// times as WithMaxRetries says. (A real API asks for a wait; the fake asks
// for none.)
func (m *acmeModel) post(ctx context.Context, body []byte) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, m.url+"/chat", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+m.key)
		resp, err := http.DefaultClient.Do(req)
		switch {
		case ctx.Err() != nil:
			if resp != nil {
				resp.Body.Close()
			}
			return nil, ctx.Err()
		case err != nil:
			return nil, fmt.Errorf("acme: %w: %w", agent.ErrModelUnreachable, err)
		case resp.StatusCode == http.StatusOK:
			return resp, nil
		}
		var e struct {
			Error struct{ Code, Message string }
		}
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		last := attempt >= m.retries
		if m.bug == "retries once more" {
			last = attempt > m.retries
		}
		if !last && (resp.StatusCode == 429 || resp.StatusCode >= 500) {
			continue
		}
		if m.bug == "errors carry the API's words" {
			return nil, fmt.Errorf("%w: %s", &acmeError{resp.StatusCode, e.Error.Code}, e.Error.Message)
		}
		return nil, &acmeError{resp.StatusCode, e.Error.Code}
	}
}

func (m *acmeModel) chunk(ev acmeEvent) (agent.Chunk, bool) {
	switch {
	case ev.Reasoning != "":
		return agent.Chunk{Kind: agent.ChunkThinking, Delta: ev.Reasoning}, true
	case ev.Signature != "":
		tag := &cmf.Opaque{Provider: "acme", Model: m.name, Data: ev.Signature}
		if m.bug == "tags values with the provider only" {
			tag.Model = ""
		}
		return agent.Chunk{Kind: agent.ChunkThinking, Opaque: tag}, true
	case ev.Text != "":
		return agent.Chunk{Kind: agent.ChunkText, Delta: ev.Text}, true
	case ev.Call != nil:
		return agent.Chunk{Kind: agent.ChunkToolCall, ToolCallID: ev.Call.ID, ToolName: ev.Call.Name, Delta: string(ev.Call.Args)}, true
	case ev.Stop != "":
		u := ev.Usage
		usage := agent.Usage{InputTokens: u.Input, CachedInputTokens: u.Cached, OutputTokens: u.Output, ReasoningTokens: u.Reasoning, TotalTokens: u.Input + u.Output}
		if m.bug == "counts the total as the output" {
			usage.TotalTokens = u.Output
		}
		stop := map[string]cmf.StopReason{"end": cmf.StopEnd, "length": cmf.StopMaxTokens, "filter": cmf.StopRefusal, "call": cmf.StopCall}[ev.Stop]
		if m.bug == "ends a filtered reply as a whole one" && ev.Stop == "filter" {
			stop = cmf.StopEnd
		}
		return agent.Chunk{Kind: agent.ChunkFinish, StopReason: stop, Usage: usage, Model: m.name, Provider: "acme"}, true
	}
	return agent.Chunk{}, false
}

// acmeFake is a fake of the acme API: it streams scripted replies, signs
// reasoning for the model that produced it and refuses a signature that
// does not verify for the request's model, and records every request.
type acmeFake struct {
	mu     sync.Mutex
	queue  []acmeReply
	bodies [][]byte
	secret []byte
}

type acmeReply struct {
	status        int // a refusal, with code and message
	code, message string
	events        []acmeEvent
	stall         bool
}

func newAcmeFake() *acmeFake { return &acmeFake{secret: []byte("acme fake signing key")} }

func (f *acmeFake) script(r acmeReply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queue = append(f.queue, r)
}

func (f *acmeFake) requests() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]byte(nil), f.bodies...)
}

func (f *acmeFake) sign(model, reasoning string) string {
	mac := hmac.New(sha256.New, f.secret)
	io.WriteString(mac, model+"\x00"+reasoning)
	return hex.EncodeToString(mac.Sum(nil))
}

func (f *acmeFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	var reply acmeReply
	ok := len(f.queue) > 0
	if ok {
		reply, f.queue = f.queue[0], f.queue[1:]
	}
	f.mu.Unlock()
	refuse := func(status int, code, message string) {
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": message}})
	}
	var req acmeRequest
	if err := json.Unmarshal(body, &req); err != nil {
		refuse(400, "invalid_request", "the body is not JSON")
		return
	}
	for _, m := range req.Messages {
		if m.Reasoning != "" && !hmac.Equal([]byte(m.Signature), []byte(f.sign(req.Model, m.Reasoning))) {
			refuse(400, "invalid_signature", "a reasoning signature does not verify")
			return
		}
	}
	switch {
	case !ok:
		refuse(500, "server_error", "nothing was scripted")
		return
	case reply.status != 0:
		refuse(reply.status, reply.code, reply.message)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	for _, ev := range reply.events {
		if ev.Stop != "" && reply.stall {
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		if ev.Call != nil {
			ev.Call.ID = f.callID()
		}
		enc.Encode(ev)
		if ev.Reasoning != "" {
			enc.Encode(acmeEvent{Signature: f.sign(req.Model, ev.Reasoning)})
		}
		w.(http.Flusher).Flush()
	}
}

// callID is a call id unique in the chat, as the API makes them.
func (f *acmeFake) callID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "call_" + hex.EncodeToString(b)
}
