package anthropicfake_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	fake "github.com/agentui/agentui/internal/testkit/fakes/anthropic"
)

// post sends a raw request body as the SDK would and returns the status
// and the body.
func post(t *testing.T, srv *fake.Server, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer k")
	req.Header.Set("Anthropic-Version", "2026-10-21")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

type event struct {
	name string
	data map[string]any
}

func events(t *testing.T, body string) []event {
	t.Helper()
	var out []event
	sc := bufio.NewScanner(strings.NewReader(body))
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("bad data line %q", line)
			}
			if d["type"] != name {
				t.Fatalf("event %s carries type %v", name, d["type"])
			}
			out = append(out, event{name, d})
		}
	}
	return out
}

// The stream has the API's event sequence and shapes.
func TestStreamShape(t *testing.T) {
	srv := fake.New(t, fake.WithChunkSize(4))
	srv.Reply(fake.Reply{Content: []fake.Block{fake.Thinking("abcdefgh"), fake.Text("Hello!"), fake.ToolUse("toolu_1", "f", `{"a":1}`)}})
	status, body := post(t, srv, `{"model":"m","max_tokens":100,"thinking":{"type":"adaptive"},"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":{"type":"object"}}]}`)
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	var names []string
	for _, e := range events(t, body) {
		n := e.name
		if d, ok := e.data["delta"].(map[string]any); ok && e.name == "content_block_delta" {
			n += ":" + d["type"].(string)
		}
		names = append(names, n)
	}
	want := "message_start content_block_start content_block_delta:thinking_delta content_block_delta:thinking_delta content_block_delta:signature_delta content_block_stop ping " +
		"content_block_start content_block_delta:text_delta content_block_delta:text_delta content_block_stop " +
		"content_block_start content_block_delta:input_json_delta content_block_delta:input_json_delta content_block_stop message_delta message_stop"
	if strings.Join(names, " ") != want {
		t.Fatalf("events:\n%s\nwant\n%s", strings.Join(names, " "), want)
	}
	evs := events(t, body)
	if md := evs[len(evs)-2].data; md["delta"].(map[string]any)["stop_reason"] != "tool_use" {
		t.Fatalf("message_delta = %v", md)
	}
}

// What the fake refuses, with the API's error shape.
func TestRefusals(t *testing.T) {
	srv := fake.New(t)
	srv.Reply(fake.Reply{Content: []fake.Block{fake.Thinking("plan"), fake.Thinking("more"), fake.ToolUse("toolu_1", "f", `{}`)}})
	_, body := post(t, srv, `{"model":"m","max_tokens":100,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"hi"}]}`)
	var sigs []string
	for _, e := range events(t, body) {
		if d, _ := e.data["delta"].(map[string]any); d != nil && d["type"] == "signature_delta" {
			sigs = append(sigs, d["signature"].(string))
		}
	}
	if len(sigs) != 2 {
		t.Fatal("no signatures streamed")
	}
	turn := func(blocks string) string {
		return `{"model":"m","max_tokens":100,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"hi"},` +
			`{"role":"assistant","content":[` + blocks + `]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}]}`
	}
	first := `{"type":"thinking","thinking":"plan","signature":"` + sigs[0] + `"}`
	second := `{"type":"thinking","thinking":"more","signature":"` + sigs[1] + `"}`
	thinking := first + "," + second
	use := `{"type":"tool_use","id":"toolu_1","name":"f","input":{}}`
	srv.Reply(fake.Reply{Content: []fake.Block{fake.Text("done")}})
	if status, b := post(t, srv, turn(thinking+","+use)); status != 200 {
		t.Fatalf("the valid continuation was refused: %s", b)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"altered text", turn(strings.Replace(thinking, `"plan"`, `"plan!"`, 1) + "," + use), "Invalid `signature` in `thinking` block"},
		{"missing signature", turn(`{"type":"thinking","thinking":"plan","signature":""},` + use), "thinking.signature: Field required"},
		{"other model", strings.Replace(turn(thinking+","+use), `"model":"m"`, `"model":"m2"`, 1), "Invalid `signature` in `thinking` block"},
		{"reordered", turn(second + "," + first + "," + use), "Invalid `signature` in `thinking` block"},
		{"one left out", turn(second + "," + use), "Invalid `signature` in `thinking` block"},
		{"forged redacted", turn(`{"type":"redacted_thinking","data":"eA=="},` + thinking + "," + use), "Invalid `data` in `redacted_thinking` block"},
		{"thinking dropped", turn(use), "a final `assistant` message must start with a thinking block"},
		{"text first", turn(`{"type":"text","text":"x"},` + thinking + "," + use), "the first block must be thinking or redacted_thinking"},
		{"result without its call", `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"ok"},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"x"}]}]}`,
			"unexpected `tool_use_id` found in `tool_result` blocks: toolu_9"},
		{"call without its result", `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[` + use + `]},{"role":"user","content":"next"}]}`,
			"`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1"},
		{"temperature", `{"model":"m","max_tokens":100,"temperature":0.5,"messages":[{"role":"user","content":"hi"}]}`, "temperature"},
		{"empty text", `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`, "text content blocks must be non-empty"},
		{"no max_tokens", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "max_tokens: Field required"},
	} {
		status, b := post(t, srv, tc.body)
		var e struct {
			Type  string `json:"type"`
			Error struct{ Type, Message string }
		}
		json.Unmarshal([]byte(b), &e)
		if status != 400 || e.Type != "error" || e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, tc.want) {
			t.Errorf("%s: %d %s", tc.name, status, b)
		}
	}
	if srv.Pending() != 0 {
		t.Fatalf("a refused request used a reply")
	}
}

func TestAuthentication(t *testing.T) {
	srv := fake.New(t, fake.WithAPIKey("right"))
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer wrong")
	req.Header.Set("Anthropic-Version", "2026-10-21")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

// The prefix check binds a thinking block to the whole conversation
// before it: with it on, changed instructions invalidate the block.
func TestPrefixCheck(t *testing.T) {
	for _, check := range []bool{false, true} {
		var opts []fake.Option
		if check {
			opts = append(opts, fake.WithPrefixCheck())
		}
		srv := fake.New(t, opts...)
		srv.Reply(fake.Reply{Content: []fake.Block{fake.Thinking("plan"), fake.Text("ok")}})
		_, body := post(t, srv, `{"model":"m","max_tokens":100,"system":"v1","thinking":{"type":"adaptive"},"messages":[{"role":"user","content":"hi"}]}`)
		var sig string
		for _, e := range events(t, body) {
			if d, _ := e.data["delta"].(map[string]any); d != nil && d["type"] == "signature_delta" {
				sig = d["signature"].(string)
			}
		}
		next := func(system string) string {
			return `{"model":"m","max_tokens":100,"system":"` + system + `","thinking":{"type":"adaptive"},"messages":[{"role":"user","content":"hi"},` +
				`{"role":"assistant","content":[{"type":"thinking","thinking":"plan","signature":"` + sig + `"},{"type":"text","text":"ok"}]},{"role":"user","content":"more"}]}`
		}
		srv.Reply(fake.Reply{Content: []fake.Block{fake.Text("fine")}})
		if status, b := post(t, srv, next("v1")); status != 200 {
			t.Fatalf("check %v: unchanged prefix refused: %s", check, b)
		}
		srv.Reply(fake.Reply{Content: []fake.Block{fake.Text("fine")}})
		status, b := post(t, srv, next("v2"))
		if check && (status != 400 || !strings.Contains(b, "bound to a different conversation")) {
			t.Fatalf("changed prefix: %d %s", status, b)
		}
		if !check && status != 200 {
			t.Fatalf("without the check a changed prefix was refused: %s", b)
		}
	}
}

// The cache reads a prefix an earlier request wrote at a breakpoint, and
// bills what is left.
func TestCacheBilling(t *testing.T) {
	srv := fake.New(t, fake.WithMinCacheTokens(10))
	long := strings.Repeat("x", 400)
	req := func(question string) string {
		return `{"model":"m","max_tokens":100,"system":[{"type":"text","text":"` + long + `","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"` + question + `"}]}`
	}
	for range 2 {
		srv.Reply(fake.Reply{Content: []fake.Block{fake.Text("ok")}})
	}
	post(t, srv, req("first"))
	post(t, srv, req("second question"))
	r := srv.Requests()
	if u := r[0].Usage; u.CacheCreationInputTokens == 0 || u.CacheReadInputTokens != 0 {
		t.Fatalf("first = %+v", u)
	}
	if u := r[1].Usage; u.CacheReadInputTokens != r[0].Usage.CacheCreationInputTokens || u.CacheCreationInputTokens != 0 || u.InputTokens == 0 {
		t.Fatalf("second = %+v (first %+v)", u, r[0].Usage)
	}
	if bp := r[1].Breakpoints(); len(bp) != 1 || bp[0] != "system.0" {
		t.Fatalf("breakpoints = %v", bp)
	}
}

// A reply's scripted usage is what its message_start and message_delta
// report, and what the server records as billed.
func TestScriptedUsage(t *testing.T) {
	srv := fake.New(t)
	billed := fake.Usage{InputTokens: 200, CacheCreationInputTokens: 30, CacheReadInputTokens: 1000, OutputTokens: 300, ThinkingTokens: 120}
	srv.Reply(fake.Reply{Content: []fake.Block{fake.Thinking("hmm"), fake.Text("Hello!")}, Usage: &billed})
	status, body := post(t, srv, `{"model":"m","max_tokens":100,"thinking":{"type":"adaptive"},"messages":[{"role":"user","content":"hi"}]}`)
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	evs := events(t, body)
	start := evs[0].data["message"].(map[string]any)["usage"].(map[string]any)
	end := evs[len(evs)-2].data["usage"].(map[string]any)
	for _, u := range []map[string]any{start, end} {
		if u["input_tokens"] != 200.0 || u["cache_creation_input_tokens"] != 30.0 || u["cache_read_input_tokens"] != 1000.0 {
			t.Fatalf("usage %v", u)
		}
	}
	if end["output_tokens"] != 300.0 || end["output_tokens_details"].(map[string]any)["thinking_tokens"] != 120.0 {
		t.Fatalf("message_delta usage %v", end)
	}
	if got := srv.Requests()[0].Usage; got != billed {
		t.Fatalf("recorded %+v, want %+v", got, billed)
	}
}
