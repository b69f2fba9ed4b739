package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/agent/openai"
	"github.com/agentui/agentui/cmf"
)

// fakeServer is an in-process OpenAI-compatible endpoint. Each request
// gets the next scripted response: SSE data lines in the real chunk
// format, or an error status with an error body.
type fakeServer struct {
	t         *testing.T
	mu        sync.Mutex
	responses []response
	bodies    []map[string]any
	raw       [][]byte
	auth      []string
}

type response struct {
	status int
	chunks []string // JSON chunk objects; "[DONE]" is appended unless cut
	cut    bool     // end the stream without [DONE] or a finish reason
	// stall holds the stream open after the chunks, without [DONE],
	// until the client goes away.
	stall bool
	// err is the error object of a refusal (status), in OpenAI's shape;
	// nil is a refused key's. header adds response headers.
	err    *apiError
	header http.Header
}

// apiError is the error object of an OpenAI-compatible refusal.
type apiError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// script queues responses to the next requests.
func (f *fakeServer) script(rs ...response) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.responses = append(f.responses, rs...)
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		f.t.Errorf("request body is not JSON: %s", raw)
	}
	f.mu.Lock()
	n := len(f.bodies)
	f.bodies = append(f.bodies, body)
	f.raw = append(f.raw, raw)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	var resp response
	scripted := n < len(f.responses)
	if scripted {
		resp = f.responses[n]
	}
	f.mu.Unlock()
	if !scripted {
		http.Error(w, "no more responses", http.StatusInternalServerError)
		return
	}
	if resp.status != 0 && resp.status != http.StatusOK {
		for k, v := range resp.header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(resp.status)
		if resp.err != nil {
			b, _ := json.Marshal(map[string]any{"error": resp.err})
			w.Write(b)
			return
		}
		fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided: sk-test-********1234. You can find your API key at https://platform.openai.com.","type":"invalid_request_error","param":null,"code":"`+codeFor(resp.status)+`"}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, c := range resp.chunks {
		fmt.Fprintf(w, "data: %s\n\n", c)
		w.(http.Flusher).Flush()
	}
	if resp.stall {
		<-r.Context().Done()
		return
	}
	if !resp.cut {
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

func codeFor(status int) string {
	switch status {
	case 401:
		return "invalid_api_key"
	case 429:
		return "rate_limit_exceeded"
	}
	return "server_error"
}

func chunk(delta string, finish string) string {
	fr := "null"
	if finish != "" {
		fr = `"` + finish + `"`
	}
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + fr + `}]}`
}

func usageChunk(in, out int) string {
	return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-test-0601","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"completion_tokens_details":{"reasoning_tokens":2},"prompt_tokens_details":{"cached_tokens":1}}}`, in, out, in+out)
}

func start(t *testing.T, responses ...response) (*fakeServer, *openai.Model) {
	f := &fakeServer{t: t, responses: responses}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	m, err := openai.New("gpt-test", openai.WithBaseURL(srv.URL+"/v1"), openai.WithAPIKey("sk-test-secret-1234"), openai.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return f, m
}

func stream(t *testing.T, m agent.Model, req *agent.Request) ([]agent.Chunk, error) {
	var out []agent.Chunk
	for c, err := range m.Stream(context.Background(), req) {
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

func userReq(text string) *agent.Request {
	return &agent.Request{Messages: []cmf.Message{{Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: text}}}}}
}

func TestText(t *testing.T) {
	f, m := start(t, response{chunks: []string{
		chunk(`{"role":"assistant","content":""}`, ""),
		chunk(`{"reasoning_content":"Let me see."}`, ""),
		chunk(`{"content":"Hello"}`, ""),
		chunk(`{"content":", world"}`, ""),
		chunk(`{}`, "stop"),
		usageChunk(12, 5),
	}})
	chunks, err := stream(t, m, userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	var text, thinking strings.Builder
	var fin agent.Chunk
	for _, c := range chunks {
		switch c.Kind {
		case agent.ChunkText:
			text.WriteString(c.Delta)
		case agent.ChunkThinking:
			thinking.WriteString(c.Delta)
		case agent.ChunkFinish:
			fin = c
		}
	}
	if text.String() != "Hello, world" || thinking.String() != "Let me see." {
		t.Fatalf("text %q thinking %q", text.String(), thinking.String())
	}
	want := agent.Usage{InputTokens: 12, OutputTokens: 5, TotalTokens: 17, ReasoningTokens: 2, CachedInputTokens: 1}
	// The model is the one that answered, as the provider names it.
	if fin.StopReason != cmf.StopEnd || fin.Usage != want || fin.Model != "gpt-test-0601" || fin.Provider != "openai" {
		t.Fatalf("finish = %+v", fin)
	}
	body := f.bodies[0]
	if body["model"] != "gpt-test" || body["stream"] != true {
		t.Fatalf("request = %v", body)
	}
	if so, _ := body["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Fatalf("usage not requested: %v", body["stream_options"])
	}
	for _, k := range []string{"temperature", "top_p", "max_completion_tokens", "seed"} {
		if _, ok := body[k]; ok {
			t.Fatalf("%s sent without settings: %v", k, body)
		}
	}
	if f.auth[0] != "Bearer sk-test-secret-1234" {
		t.Fatalf("auth = %q", f.auth[0])
	}
}

// A run's model settings go into the request.
func TestSettings(t *testing.T) {
	f, m := start(t, response{chunks: []string{chunk(`{"content":"ok"}`, "stop")}})
	temp, topP, maxOut, seed := 0.3, 0.9, int64(256), int64(7)
	req := userReq("hi")
	req.Settings = &agent.ModelSettings{Temperature: &temp, TopP: &topP, MaxOutputTokens: &maxOut, Seed: &seed}
	if _, err := stream(t, m, req); err != nil {
		t.Fatal(err)
	}
	body := f.bodies[0]
	if body["temperature"] != 0.3 || body["top_p"] != 0.9 || body["max_completion_tokens"] != 256.0 || body["seed"] != 7.0 {
		t.Fatalf("request = %v", body)
	}
}

func toolChunk(index int, id, name, args string) string {
	tc := map[string]any{"index": index, "function": map[string]any{"arguments": args}}
	if id != "" {
		tc["id"] = id
		tc["type"] = "function"
		tc["function"].(map[string]any)["name"] = name
	}
	b, _ := json.Marshal(map[string]any{"tool_calls": []any{tc}})
	return chunk(string(b), "")
}

func TestToolCallSplitOverChunks(t *testing.T) {
	_, m := start(t, response{chunks: []string{
		chunk(`{"role":"assistant"}`, ""),
		toolChunk(0, "call_abc", "get_weather", ""),
		toolChunk(0, "", "", `{"ci`),
		toolChunk(0, "", "", `ty":"Par`),
		toolChunk(0, "", "", `is"}`),
		chunk(`{}`, "tool_calls"),
	}})
	chunks, err := stream(t, m, userReq("weather"))
	if err != nil {
		t.Fatal(err)
	}
	var args strings.Builder
	for _, c := range chunks {
		if c.Kind == agent.ChunkToolCall {
			if c.ToolCallID != "call_abc" {
				t.Fatalf("tool call id %q", c.ToolCallID)
			}
			args.WriteString(c.Delta)
		}
	}
	if chunks[0].ToolName != "get_weather" || chunks[1].ToolName != "" || args.String() != `{"city":"Paris"}` {
		t.Fatalf("chunks = %+v", chunks)
	}
	if last := chunks[len(chunks)-1]; last.Kind != agent.ChunkFinish || last.StopReason != cmf.StopCall {
		t.Fatalf("finish = %+v", last)
	}
}

func TestParallelToolCalls(t *testing.T) {
	_, m := start(t, response{chunks: []string{
		toolChunk(0, "call_1", "get_weather", `{"city":`),
		toolChunk(1, "call_2", "get_weather", `{"city":`),
		toolChunk(0, "", "", `"Paris"}`),
		toolChunk(1, "", "", `"Rome"}`),
		chunk(`{}`, "tool_calls"),
	}})
	chunks, err := stream(t, m, userReq("weather twice"))
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]string{}
	for _, c := range chunks {
		if c.Kind == agent.ChunkToolCall {
			args[c.ToolCallID] += c.Delta
		}
	}
	if args["call_1"] != `{"city":"Paris"}` || args["call_2"] != `{"city":"Rome"}` {
		t.Fatalf("args = %v", args)
	}
}

// An endpoint that sends no tool call ids gets ids unique across replies
// (a fixed "call_0" in every reply would make two calls in a chat share an
// id).
func TestToolCallsWithoutIDs(t *testing.T) {
	noID := chunk(`{"tool_calls":[{"index":0,"type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}`, "")
	_, m := start(t, response{chunks: []string{noID, chunk(`{}`, "tool_calls")}}, response{chunks: []string{noID, chunk(`{}`, "tool_calls")}})
	seen := map[string]bool{}
	for range 2 {
		chunks, err := stream(t, m, userReq("weather"))
		if err != nil {
			t.Fatal(err)
		}
		var id string
		for _, c := range chunks {
			if c.Kind == agent.ChunkToolCall {
				if id != "" && c.ToolCallID != id {
					t.Fatalf("one call, two ids: %q %q", id, c.ToolCallID)
				}
				id = c.ToolCallID
			}
		}
		if !strings.HasPrefix(id, "call_") || seen[id] {
			t.Fatalf("id %q (seen %v)", id, seen)
		}
		seen[id] = true
	}
}

func TestHTTPErrors(t *testing.T) {
	for _, status := range []int{401, 429, 500} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			_, m := start(t, response{status: status})
			_, err := stream(t, m, userReq("hi"))
			var apiErr *openai.APIError
			if !errors.As(err, &apiErr) || apiErr.StatusCode != status || apiErr.Code != codeFor(status) {
				t.Fatalf("err = %#v", err)
			}
			for _, secret := range []string{"sk-", "1234", "Incorrect API key"} {
				if strings.Contains(err.Error(), secret) {
					t.Fatalf("error text leaks %q: %s", secret, err)
				}
			}
		})
	}
}

func TestStreamCutMidway(t *testing.T) {
	_, m := start(t, response{cut: true, chunks: []string{
		chunk(`{"content":"Hel"}`, ""),
		toolChunk(0, "call_1", "get_weather", `{"ci`),
	}})
	chunks, err := stream(t, m, userReq("hi"))
	if !errors.Is(err, openai.ErrIncomplete) {
		t.Fatalf("err = %v", err)
	}
	if len(chunks) != 2 {
		t.Fatalf("chunks before the cut = %+v", chunks)
	}
}

// Through the real loop: the model calls a tool, the loop runs it, and the
// second request carries the call and its result in the API's format.
func TestWithLoop(t *testing.T) {
	f, m := start(t,
		response{chunks: []string{toolChunk(0, "call_w", "get_weather", `{"city":"Oslo"}`), chunk(`{}`, "tool_calls")}},
		response{chunks: []string{chunk(`{"content":"Sunny in Oslo."}`, ""), chunk(`{}`, "stop")}},
	)
	l, err := agent.New(m, agent.WithTools(demo.Tools()...))
	if err != nil {
		t.Fatal(err)
	}
	in := &agent.Input{
		Instructions: "Be brief.",
		Messages: []cmf.Message{{Role: cmf.RoleUser, Content: []cmf.Part{
			cmf.Text{Text: "weather?"},
			cmf.Image{MediaSource: cmf.MediaSource{Type: cmf.SourceBase64, Data: "iVBORw0KGgo=", MediaType: "image/png"}},
		}}},
	}
	var text string
	for ev, err := range l.Run(context.Background(), in) {
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := ev.(*agent.PartEnded); ok && e.Kind == agent.PartText {
			text = e.Part.(cmf.Text).Text
		}
	}
	if text != "Sunny in Oslo." {
		t.Fatalf("text = %q", text)
	}
	first := f.bodies[0]
	msgs := first["messages"].([]any)
	if msgs[0].(map[string]any)["role"] != "system" || msgs[0].(map[string]any)["content"] != "Be brief." {
		t.Fatalf("system message = %v", msgs[0])
	}
	parts := msgs[1].(map[string]any)["content"].([]any)
	if img := parts[1].(map[string]any)["image_url"].(map[string]any)["url"]; img != "data:image/png;base64,iVBORw0KGgo=" {
		t.Fatalf("image part = %v", parts[1])
	}
	if tools := first["tools"].([]any); len(tools) != len(demo.Tools()) {
		t.Fatalf("tools = %v", tools)
	}
	second := f.bodies[1]["messages"].([]any)
	asst := second[2].(map[string]any)
	call := asst["tool_calls"].([]any)[0].(map[string]any)
	if call["id"] != "call_w" || call["function"].(map[string]any)["arguments"] != `{"city":"Oslo"}` {
		t.Fatalf("assistant message = %v", asst)
	}
	tool := second[3].(map[string]any)
	if tool["role"] != "tool" || tool["tool_call_id"] != "call_w" || !strings.Contains(tool["content"].(string), `"forecast":"sunny"`) {
		t.Fatalf("tool message = %v", tool)
	}
}

func TestNew(t *testing.T) {
	if _, err := openai.New(""); err == nil {
		t.Fatal("empty model name accepted")
	}
}

// Every finish_reason maps to a CMF stop reason; the content filter's is
// a refusal, as for every other model.
func TestFinishReasons(t *testing.T) {
	for finish, want := range map[string]cmf.StopReason{
		"stop":           cmf.StopEnd,
		"length":         cmf.StopMaxTokens,
		"tool_calls":     cmf.StopCall,
		"function_call":  cmf.StopCall,
		"content_filter": cmf.StopRefusal,
		"something_new":  cmf.StopEnd,
	} {
		_, m := start(t, response{chunks: []string{chunk(`{"content":"Hi"}`, ""), chunk(`{}`, finish)}})
		chunks, err := stream(t, m, userReq("hi"))
		if err != nil {
			t.Fatalf("%s: %v", finish, err)
		}
		if last := chunks[len(chunks)-1]; last.Kind != agent.ChunkFinish || last.StopReason != want {
			t.Errorf("%s: last chunk %+v, want stop reason %s", finish, last, want)
		}
	}
}

// Media the API cannot take inline is named in the text, by its URL or
// its type, never by its bytes: base64 audio in a format the API does not
// read, and video, which it does not read at all.
func TestMediaTheAPICannotTakeIsNamed(t *testing.T) {
	f, m := start(t, response{chunks: []string{chunk(`{"content":"ok"}`, "stop")}})
	audio := strings.Repeat("T2dnUw", 200) // an Ogg file, base64
	video := strings.Repeat("AAAAIGZ0eXA", 200)
	req := &agent.Request{Messages: []cmf.Message{{Role: cmf.RoleUser, Content: []cmf.Part{
		cmf.Text{Text: "What do you hear and see?"},
		cmf.Audio{MediaSource: cmf.MediaSource{Type: cmf.SourceBase64, Data: audio, MediaType: "audio/ogg"}},
		cmf.Video{MediaSource: cmf.MediaSource{Type: cmf.SourceBase64, Data: video, MediaType: "video/mp4"}},
		cmf.Video{MediaSource: cmf.MediaSource{Type: cmf.SourceURL, Data: "https://example.com/clip.mp4"}},
	}}}}
	if _, err := stream(t, m, req); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(f.bodies[0]["messages"])
	var msgs []struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &msgs); err != nil || len(msgs) != 1 {
		t.Fatalf("messages = %s", raw)
	}
	var texts []string
	for _, c := range msgs[0].Content {
		texts = append(texts, c.Text)
	}
	want := []string{"What do you hear and see?", "[audio: audio/ogg]", "[video: video/mp4]", "[video: https://example.com/clip.mp4]"}
	if fmt.Sprint(texts) != fmt.Sprint(want) {
		t.Fatalf("the parts say %q, want %q", texts, want)
	}
	if strings.Contains(string(raw), audio[:40]) || strings.Contains(string(raw), video[:40]) {
		t.Fatal("the request carries the media's bytes as text")
	}
}
