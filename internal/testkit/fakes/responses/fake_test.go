package responses_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	fake "github.com/agentui/agentui/internal/testkit/fakes/responses"
)

func post(t *testing.T, f *fake.Server, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.URL+"/responses", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer sk-test")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
	return resp, []byte(b.String())
}

type event struct {
	name string
	data map[string]any
}

// events reads an SSE body: every frame has an event line naming the
// data's type.
func events(t *testing.T, body []byte) []event {
	t.Helper()
	var out []event
	for _, frame := range strings.Split(strings.TrimSpace(string(body)), "\n\n") {
		name, rest, ok := strings.Cut(frame, "\n")
		name, ok2 := strings.CutPrefix(name, "event: ")
		data, ok3 := strings.CutPrefix(rest, "data: ")
		if !ok || !ok2 || !ok3 {
			t.Fatalf("frame %q", frame)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("data %q: %v", data, err)
		}
		if m["type"] != name {
			t.Fatalf("event %q carries type %v", name, m["type"])
		}
		if int(m["sequence_number"].(float64)) != len(out) {
			t.Fatalf("event %d has sequence_number %v", len(out), m["sequence_number"])
		}
		out = append(out, event{name, m})
	}
	return out
}

func names(evs []event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.name)
	}
	return out
}

// The events of a reply come in the order of OpenAI's recorded streams:
// a reasoning item's summary parts, a message's content part, a call's
// argument fragments, each between its output_item.added and .done.
func TestStreamOrder(t *testing.T) {
	f := fake.New(t)
	f.Enqueue(fake.Reply{Output: []fake.Item{fake.Reasoning("A b", "C"), fake.Text("Hi there", fake.Citation{URL: "https://e.com", Title: "E", Start: 0, End: 2}), fake.Call("f", `{"a":1}`), fake.WebSearch("q")}})
	resp, body := post(t, f, `{"model":"gpt-5","stream":true,"store":false,"include":["reasoning.encrypted_content"],"input":"hi"}`)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	evs := events(t, body)
	want := []string{
		"response.created", "response.in_progress",
		"response.output_item.added",
		"response.reasoning_summary_part.added", "response.reasoning_summary_text.delta", "response.reasoning_summary_text.delta", "response.reasoning_summary_text.done", "response.reasoning_summary_part.done",
		"response.reasoning_summary_part.added", "response.reasoning_summary_text.delta", "response.reasoning_summary_text.done", "response.reasoning_summary_part.done",
		"response.output_item.done",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta", "response.output_text.annotation.added", "response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done",
		"response.output_item.added", "response.web_search_call.in_progress", "response.web_search_call.searching", "response.web_search_call.completed", "response.output_item.done",
		"response.completed",
	}
	if got := names(evs); !reflect.DeepEqual(got, want) {
		t.Fatalf("events\n %v\nwant\n %v", got, want)
	}
	added := evs[2].data["item"].(map[string]any)["encrypted_content"].(string)
	done := evs[12].data["item"].(map[string]any)
	full := done["encrypted_content"].(string)
	if !strings.HasPrefix(full, added) || len(added) >= len(full) {
		t.Fatal("output_item.added should carry an incomplete encrypted_content")
	}
	if s := done["summary"].([]any); len(s) != 2 || s[1].(map[string]any)["text"] != "C" {
		t.Fatalf("summary = %v", s)
	}
	final := evs[len(evs)-1].data["response"].(map[string]any)
	if final["status"] != "completed" || final["model"] != "gpt-5-2025-08-07" || len(final["output"].([]any)) != 4 {
		t.Fatalf("response = %v", final)
	}
	u := final["usage"].(map[string]any)
	if u["input_tokens"].(float64) == 0 || u["output_tokens_details"].(map[string]any)["reasoning_tokens"].(float64) == 0 {
		t.Fatalf("usage = %v", u)
	}
	if got := f.Requests()[0].Output; len(got) != 4 {
		t.Fatalf("recorded %d output items", len(got))
	}
}

// Without include, reasoning items carry no encrypted content.
func TestNoEncryptedContentUnlessIncluded(t *testing.T) {
	f := fake.New(t)
	f.Enqueue(fake.Reply{Output: []fake.Item{fake.Reasoning("x"), fake.Text("y")}})
	_, body := post(t, f, `{"model":"gpt-5","stream":true,"input":"hi"}`)
	for _, e := range events(t, body) {
		if item, ok := e.data["item"].(map[string]any); ok {
			if _, has := item["encrypted_content"]; has {
				t.Fatalf("%s has encrypted_content", e.name)
			}
		}
	}
}

// issue runs one turn and returns the reasoning and call items the fake
// produced, as the next request would replay them.
func issue(t *testing.T, f *fake.Server, model string, output ...fake.Item) []map[string]any {
	t.Helper()
	f.Enqueue(fake.Reply{Output: output})
	resp, _ := post(t, f, `{"model":"`+model+`","stream":true,"store":false,"include":["reasoning.encrypted_content"],"input":"hi"}`)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	reqs := f.Requests()
	var items []map[string]any
	for _, raw := range reqs[len(reqs)-1].Output {
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		delete(m, "status")
		items = append(items, m)
	}
	return items
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// What the fake refuses, with the real API's status, message, param and
// code.
func TestRefusals(t *testing.T) {
	f := fake.New(t)
	items := issue(t, f, "gpt-5", fake.Reasoning("Weather."), fake.Call("get_weather", `{"city":"Oslo"}`))
	rs, call := items[0], items[1]
	out := map[string]any{"type": "function_call_output", "call_id": call["call_id"], "output": "sunny"}
	bare := map[string]any{"type": "function_call", "call_id": call["call_id"], "name": "get_weather", "arguments": call["arguments"]}
	without := func(m map[string]any, key string) map[string]any {
		c := map[string]any{}
		for k, v := range m {
			if k != key {
				c[k] = v
			}
		}
		return c
	}
	with := func(m map[string]any, key string, v any) map[string]any {
		c := without(m, key)
		c[key] = v
		return c
	}
	userMsg := map[string]any{"role": "user", "content": "hi"}
	request := func(model string, input ...any) string {
		return `{"model":"` + model + `","stream":true,"store":false,"input":` + js(input) + `}`
	}
	for name, tc := range map[string]struct {
		body    string
		status  int
		message string
		param   any
		code    any
	}{
		"replayed as issued":                          {request("gpt-5", userMsg, rs, call, out), 200, "", nil, nil},
		"call without its item id, without reasoning": {request("gpt-5", userMsg, bare, out), 200, "", nil, nil},
		"reasoning without encrypted content": {request("gpt-5", userMsg, without(rs, "encrypted_content"), call, out), 404,
			"Item with id '" + rs["id"].(string) + "' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.", "input", nil},
		"altered encrypted content": {request("gpt-5", userMsg, with(rs, "encrypted_content", rs["encrypted_content"].(string)[1:]), call, out), 400,
			"The encrypted content for item " + rs["id"].(string) + " could not be verified. Reason: Encrypted content could not be decrypted or parsed.", nil, "invalid_encrypted_content"},
		"altered summary": {request("gpt-5", userMsg, with(rs, "summary", []any{map[string]any{"type": "summary_text", "text": "Other."}}), call, out), 400,
			"The encrypted content for item " + rs["id"].(string) + " could not be verified. Reason: Encrypted content could not be decrypted or parsed.", nil, "invalid_encrypted_content"},
		"another model": {request("o4-mini", userMsg, rs, call, out), 400,
			"The encrypted content for item " + rs["id"].(string) + " could not be verified. Reason: Encrypted content could not be decrypted or parsed.", nil, "invalid_encrypted_content"},
		"reasoning without its following item": {request("gpt-5", userMsg, rs, out, userMsg), 400,
			"Item '" + rs["id"].(string) + "' of type 'reasoning' was provided without its required following item.", "input", nil},
		"reasoning moved after its call": {request("gpt-5", userMsg, call, rs, out), 400,
			"Item '" + call["id"].(string) + "' of type 'function_call' was provided without its required 'reasoning' item: '" + rs["id"].(string) + "'.", "input", nil},
		"call with its item id, without reasoning": {request("gpt-5", userMsg, call, out), 400,
			"Item '" + call["id"].(string) + "' of type 'function_call' was provided without its required 'reasoning' item: '" + rs["id"].(string) + "'.", "input", nil},
		"output without its call": {request("gpt-5", userMsg, out), 400,
			"No tool call found for function call output with call_id " + call["call_id"].(string) + ".", "input", nil},
		"call without its output": {request("gpt-5", userMsg, bare, userMsg), 400,
			"No tool output found for function call " + call["call_id"].(string) + ".", "input", nil},
		"duplicate item": {request("gpt-5", userMsg, rs, call, out, rs, map[string]any{"role": "assistant", "content": "x"}), 400,
			"Duplicate item found with id " + rs["id"].(string) + ". Remove duplicate items from your input and try again.", "input", nil},
		"reasoning without summary": {request("gpt-5", userMsg, without(rs, "summary"), call, out), 400,
			"Missing required parameter: 'input[1].summary'.", "input[1].summary", "missing_required_parameter"},
		"input_text in an assistant message": {request("gpt-5", userMsg, map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "input_text", "text": "x"}}}), 400,
			"Invalid value: 'input_text'. Supported values are: 'output_text' and 'refusal'.", "input[1].content[0]", "invalid_value"},
		"image that is not a URL": {request("gpt-5", map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_image", "detail": "auto", "image_url": "data:text/plain;base64,aGk="}}}), 400,
			"Invalid 'input[0].content[0].image_url'. Expected a valid URL, but got a value with an invalid format.", "input[0].content[0].image_url", "invalid_value"},
		"temperature on a reasoning model": {`{"model":"gpt-5","temperature":0.2,"input":"hi"}`, 400,
			"Unsupported parameter: 'temperature' is not supported with this model.", "temperature", nil},
		"reasoning settings on a chat model": {`{"model":"gpt-4.1","reasoning":{"summary":"auto"},"input":"hi"}`, 400,
			"Unsupported parameter: 'reasoning.summary' is not supported with this model.", "reasoning.summary", nil},
		"strict tool with an open schema": {`{"model":"gpt-4.1","input":"hi","tools":[{"type":"function","name":"f","strict":true,"parameters":{"type":"object","properties":{"a":{"type":"string"}}}}]}`, 400,
			"Invalid schema for function 'f': In context=(), 'additionalProperties' is required to be supplied and to be false.", "tools[0].parameters", "invalid_function_parameters"},
		"previous response": {`{"model":"gpt-5","previous_response_id":"resp_1","input":"hi"}`, 404,
			"Previous response with id 'resp_1' not found.", "previous_response_id", nil},
		"no model": {`{"input":"hi"}`, 400, "Missing required parameter: 'model'.", "model", "missing_required_parameter"},
	} {
		t.Run(name, func(t *testing.T) {
			if tc.status == 200 {
				f.Enqueue(fake.Reply{Output: []fake.Item{fake.Text("ok")}})
			}
			resp, body := post(t, f, tc.body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.status == 200 {
				return
			}
			var e struct {
				Error map[string]any `json:"error"`
			}
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"message": tc.message, "type": "invalid_request_error", "param": tc.param, "code": tc.code}
			if !reflect.DeepEqual(e.Error, want) {
				t.Fatalf("error\n %v\nwant\n %v", e.Error, want)
			}
		})
	}
}

// A refused request takes no scripted reply; the next one gets it.
func TestRefusalKeepsTheReply(t *testing.T) {
	f := fake.New(t)
	f.Enqueue(fake.Reply{Output: []fake.Item{fake.Text("ok")}})
	if resp, _ := post(t, f, `{"input":"hi"}`); resp.StatusCode != 400 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if f.Pending() != 1 {
		t.Fatal("a refused request took the reply")
	}
	if resp, _ := post(t, f, `{"model":"gpt-4.1","input":"hi"}`); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

func TestAuthentication(t *testing.T) {
	f := fake.New(t, fake.WithAPIKey("sk-right-key-5678"))
	for _, h := range []string{"", "Bearer sk-wrong-key-1234"} {
		req, _ := http.NewRequest(http.MethodPost, f.URL+"/responses", strings.NewReader(`{"model":"gpt-5","input":"hi"}`))
		if h != "" {
			req.Header.Set("Authorization", h)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Fatalf("%q: status %d", h, resp.StatusCode)
		}
	}
}

// A second request that repeats the first's prompt reads it from the
// cache: in steps of 128 tokens from 1,024, as OpenAI bills it.
func TestPromptCache(t *testing.T) {
	f := fake.New(t)
	long := strings.Repeat("word ", 1200) // 6,000 bytes: 1,500 tokens
	usage := func(input string) map[string]any {
		f.Enqueue(fake.Reply{Output: []fake.Item{fake.Text("ok")}})
		_, body := post(t, f, `{"model":"gpt-4.1","input":`+input+`}`)
		var r map[string]any
		_ = json.Unmarshal(body, &r)
		return r["usage"].(map[string]any)
	}
	first := usage(js([]any{map[string]any{"role": "system", "content": long}, map[string]any{"role": "user", "content": "one"}}))
	second := usage(js([]any{map[string]any{"role": "system", "content": long}, map[string]any{"role": "user", "content": "two"}}))
	cached := func(u map[string]any) float64 {
		return u["input_tokens_details"].(map[string]any)["cached_tokens"].(float64)
	}
	if cached(first) != 0 || cached(second) != 1408 || second["input_tokens"].(float64) < 1500 {
		t.Fatalf("first %v, second %v", first, second)
	}
}

// A mid-stream failure sends an error event and response.failed; a
// streamed overflow does the same right after response.in_progress.
func TestStreamFailures(t *testing.T) {
	f := fake.New(t, fake.WithContextWindow(10))
	f.Enqueue(fake.FailMidStream(1, fake.Text("one two three")))
	_, body := post(t, f, `{"model":"gpt-4.1","stream":true,"input":"hi"}`)
	evs := events(t, body)
	if got := names(evs[len(evs)-2:]); !reflect.DeepEqual(got, []string{"error", "response.failed"}) {
		t.Fatalf("events %v", names(evs))
	}
	if e := evs[len(evs)-2].data["error"].(map[string]any); e["code"] != "server_error" {
		t.Fatalf("error event %v", e)
	}
	_, body = post(t, f, `{"model":"gpt-4.1","stream":true,"input":"`+strings.Repeat("x", 100)+`"}`)
	evs = events(t, body)
	if got := names(evs); !reflect.DeepEqual(got, []string{"response.created", "response.in_progress", "error", "response.failed"}) {
		t.Fatalf("events %v", got)
	}
	if e := evs[2].data["error"].(map[string]any); e["code"] != "context_length_exceeded" || e["type"] != "invalid_request_error" {
		t.Fatalf("error event %v", e)
	}
}

// A stalled reply streams its output and then nothing, no terminal event,
// until the client goes away.
func TestStall(t *testing.T) {
	f := fake.New(t)
	f.Enqueue(fake.Reply{Output: []fake.Item{fake.Text("Let me count")}, Stall: true})
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // gone already: ServeHTTP returns once it has written what a stall writes
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/responses", strings.NewReader(`{"model":"gpt-4.1","stream":true,"input":"hi"}`))
	req.Header.Set("Authorization", "Bearer sk-test")
	rec := httptest.NewRecorder()
	f.ServeHTTP(rec, req)
	got := names(events(t, rec.Body.Bytes()))
	if len(got) < 3 || got[len(got)-1] != "response.output_item.done" || slices.ContainsFunc(got, func(n string) bool {
		return n == "response.completed" || n == "response.incomplete" || n == "response.failed"
	}) {
		t.Fatalf("events %v; want the output's and no terminal event", got)
	}
}
