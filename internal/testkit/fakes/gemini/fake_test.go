package gemini

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const model = "gemini-3-pro-preview"

// post sends a raw request body and returns the status, and the error
// message or the stream's data lines.
func post(t *testing.T, s *Server, body string) (int, string, []string) {
	t.Helper()
	req, _ := http.NewRequest("POST", s.URL+"/v1beta/models/"+model+":streamGenerateContent?alt=sse", strings.NewReader(body))
	req.Header.Set("x-goog-api-key", "k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		var e apiError
		raw, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(raw, &e); err != nil || e.Error.Code != resp.StatusCode || e.Error.Status == "" {
			t.Fatalf("error body is not the API's shape: %s", raw)
		}
		return resp.StatusCode, e.Error.Message, nil
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var data []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			data = append(data, d)
		}
	}
	return 200, "", data
}

func sigOf(s *Server, p string) string {
	var part Part
	json.Unmarshal([]byte(p), &part)
	return s.Sign(model, part)
}

const weatherCall = `{"functionCall":{"name":"get_weather","args":{"city":"Oslo"}}}`

// conversation is a user turn, a model step with the given call parts,
// and the function responses to them.
func conversation(calls []string, responses int) string {
	resp := []string{}
	for range responses {
		resp = append(resp, `{"functionResponse":{"name":"get_weather","response":{"output":"sunny"}}}`)
	}
	return `{"contents":[{"role":"user","parts":[{"text":"Weather?"}]},{"role":"model","parts":[` + strings.Join(calls, ",") +
		`]},{"role":"user","parts":[` + strings.Join(resp, ",") + `]}]}`
}

// withResponseIDs gives the function responses of a conversation these
// ids, in order.
func withResponseIDs(body string, ids ...string) string {
	for _, id := range ids {
		body = strings.Replace(body, `{"functionResponse":{"name"`, `{"functionResponse":{"id":"`+id+`","name"`, 1)
	}
	return body
}

func signed(s *Server, call string) string {
	return strings.TrimSuffix(call, "}") + `,"thoughtSignature":"` + sigOf(s, call) + `"}`
}

func TestRefusals(t *testing.T) {
	s := New(t)
	foreign := strings.TrimSuffix(weatherCall, "}") + `,"thoughtSignature":"` + s.Sign("gemini-2.5-flash", mustPart(weatherCall)) + `"}`
	altered := strings.TrimSuffix(weatherCall, "}") + `,"thoughtSignature":"` + flipLast(sigOf(s, weatherCall)) + `"}`
	moved := `{"functionCall":{"name":"get_weather","args":{"city":"Rome"}},"thoughtSignature":"` + sigOf(s, weatherCall) + `"}`
	for _, tc := range []struct{ name, body, want string }{
		{"missing signature on the current turn's step", conversation([]string{weatherCall}, 1),
			"Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:get_weather` , position 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details."},
		{"only the second of parallel calls signed", conversation([]string{weatherCall, signed(s, weatherCall)}, 2), "Function call is missing"},
		{"altered signature", conversation([]string{altered}, 1), "Corrupted thought signature."},
		{"signature of another model", conversation([]string{foreign}, 1), "Corrupted thought signature."},
		{"signature moved to another call", conversation([]string{moved}, 1), "Corrupted thought signature."},
		{"too few responses", conversation([]string{signed(s, weatherCall), weatherCall}, 1), "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn."},
		{"response without its call", `{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"text":"Hello"}]},{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}}]}]}`,
			"Please ensure that function response turn comes immediately after a function call turn."},
		{"response with an id no call has", withResponseIDs(conversation([]string{signed(s, weatherCall)}, 1), "call_1"), "functionResponse.id does not match functionCall.id."},
		{"call's id not answered", conversation([]string{signed(s, `{"functionCall":{"id":"a","name":"get_weather","args":{"city":"Oslo"}}}`)}, 1), "functionResponse.id does not match functionCall.id."},
		{"response with another call's id", withResponseIDs(conversation([]string{signed(s, `{"functionCall":{"id":"a","name":"get_weather","args":{"city":"Oslo"}}}`)}, 1), "b"), "functionResponse.id does not match functionCall.id."},
		{"call turn first", `{"contents":[{"role":"model","parts":[` + signed(s, weatherCall) + `]}]}`, "Please ensure that function call turn comes immediately after a user turn or after a function response turn."},
		{"unknown field", `{"contents":[{"role":"user","parts":[{"text":"hi","signature":"x"}]}]}`, `Invalid JSON payload received. Unknown name "signature": Cannot find field.`},
		{"two kinds of data in a part", `{"contents":[{"role":"user","parts":[{"text":"hi","inlineData":{"mimeType":"image/png","data":"AA=="}}]}]}`, "Oneof field 'data' is already set"},
		{"a part with no data", `{"contents":[{"role":"model","parts":[{"thoughtSignature":"AA=="}]}]}`, "required oneof field 'data'"},
		{"no contents", `{"contents":[]}`, "contents is not specified"},
		{"bad role", `{"contents":[{"role":"assistant","parts":[{"text":"hi"}]}]}`, "Please use a valid role: user, model."},
		{"duplicate function", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"f"},{"name":"f"}]}]}`, "Duplicate function declaration found: f"},
		{"both schemas", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT"},"parametersJsonSchema":{"type":"object"}}]}]}`, "mutually exclusive"},
		{"schema not an object", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"f","parametersJsonSchema":{"type":"string"}}]}]}`, "must describe an object"},
		{"budget and level", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"thinkingConfig":{"thinkingBudget":100,"thinkingLevel":"HIGH"}}}`, "only one of thinking budget and thinking level"},
		{"file uri", `{"contents":[{"role":"user","parts":[{"fileData":{"fileUri":"ftp://x/y.png"}}]}]}`, "Invalid or unsupported file uri"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.Script(Say("never"))
			status, msg, _ := post(t, s, tc.body)
			if status != 400 || !strings.Contains(msg, tc.want) {
				t.Fatalf("%d %q, want 400 %q", status, msg, tc.want)
			}
			if s.Pending() != 1 {
				t.Fatal("a refused request took a scripted reply")
			}
			s.script = nil
		})
	}
}

func TestAccepted(t *testing.T) {
	s := New(t)
	// A signed current step; an earlier turn's step needs no signature.
	earlier := `{"role":"user","parts":[{"text":"Weather?"}]},{"role":"model","parts":[` + weatherCall + `]},{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"output":"sunny"}}}]},{"role":"model","parts":[{"text":"Sunny."}]},`
	for name, body := range map[string]string{
		"signed step":                   conversation([]string{signed(s, weatherCall), weatherCall}, 2),
		"earlier turns unsigned":        `{"contents":[` + earlier + `{"role":"user","parts":[{"text":"Thanks"}]}]}`,
		"sentinel as bytes":             conversation([]string{strings.TrimSuffix(weatherCall, "}") + `,"thoughtSignature":"` + base64.StdEncoding.EncodeToString([]byte("skip_thought_signature_validator")) + `"}`}, 1),
		"sentinel as text":              conversation([]string{strings.TrimSuffix(weatherCall, "}") + `,"thoughtSignature":"context_engineering_is_the_way_to_go"}`}, 1),
		"args in another key order":     conversation([]string{`{"functionCall":{"name":"f","args":{"b":1,"a":2}},"thoughtSignature":"` + sigOf(s, `{"functionCall":{"name":"f","args":{"a":2,"b":1}}}`) + `"}`}, 1),
		"signed empty text part":        `{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"text":"Hello"},{"text":"","thoughtSignature":"` + sigOf(s, `{"text":""}`) + `"}]},{"role":"user","parts":[{"text":"bye"}]}]}`,
		"a call the client assigned id": withResponseIDs(conversation([]string{`{"functionCall":{"id":"call_1","name":"get_weather","args":{"city":"Oslo"}},"thoughtSignature":"` + sigOf(s, weatherCall) + `"}`}, 1), "call_1"),
		"responses answering by id":     withResponseIDs(conversation([]string{signed(s, `{"functionCall":{"id":"a","name":"get_weather","args":{"city":"Oslo"}}}`), `{"functionCall":{"id":"b","name":"get_weather","args":{"city":"Oslo"}}}`}, 2), "b", "a"),
	} {
		t.Run(name, func(t *testing.T) {
			s.Script(Say("ok"))
			if status, msg, _ := post(t, s, body); status != 200 {
				t.Fatalf("%d %s", status, msg)
			}
		})
	}
}

// The stream is what Gemini 3 streams: a chunk per part, usage in each,
// the first call signed, the finish reason and sources in the last chunk.
func TestStreamShape(t *testing.T) {
	s := New(t)
	s.Script(Reply{Parts: []ReplyPart{Thought("Thinking."), CallPart("f", `{"x":1}`), CallPart("g", "")}, Sources: []Source{{URI: "https://a.example", Title: "a"}}})
	status, _, data := post(t, s, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	if status != 200 || len(data) != 4 {
		t.Fatalf("%d %v", status, data)
	}
	var chunks []response
	for _, d := range data {
		var r response
		if err := json.Unmarshal([]byte(d), &r); err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, r)
	}
	p := func(i int) Part { return chunks[i].Candidates[0].Content.Parts[0] }
	if !p(0).Thought || p(0).ThoughtSignature != "" || p(1).ThoughtSignature == "" || p(2).ThoughtSignature != "" || string(p(2).FunctionCall.Args) != "{}" {
		t.Fatalf("parts %s", data)
	}
	last := chunks[3].Candidates[0]
	if last.FinishReason != "STOP" || *last.Content.Parts[0].Text != "" || last.Content.Parts[0].ThoughtSignature != "" || last.GroundingMetadata.GroundingChunks[0].Web.URI != "https://a.example" {
		t.Fatalf("last chunk %s", data[3])
	}
	for i, c := range chunks {
		if c.UsageMetadata == nil || c.UsageMetadata.PromptTokenCount == 0 || c.ModelVersion != model || c.Candidates[0].FinishReason != "" && i < 3 {
			t.Fatalf("chunk %d: %s", i, data[i])
		}
	}
	if u := chunks[3].UsageMetadata; u.TotalTokenCount != u.PromptTokenCount+u.CandidatesTokenCount+u.ThoughtsTokenCount || u.ThoughtsTokenCount == 0 {
		t.Fatalf("usage %+v", u)
	}
}

func TestAPIKey(t *testing.T) {
	s := New(t, WithAPIKey("right"))
	for key, want := range map[string]int{"right": 200, "wrong": 400, "": 403} {
		s.Script(Say("ok"))
		req, _ := http.NewRequest("POST", s.URL+"/v1beta/models/m:streamGenerateContent?alt=sse", strings.NewReader(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`))
		if key != "" {
			req.Header.Set("x-goog-api-key", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("key %q: %d, want %d", key, resp.StatusCode, want)
		}
	}
}

// Implicit caching: a prompt that repeats an earlier prompt's prefix
// (instructions, tools, the conversation so far) reports that prefix as
// cached, once it is long enough to cache.
func TestImplicitCache(t *testing.T) {
	s := New(t, WithImplicitCache(50))
	long := strings.Repeat("All work and no play. ", 20)
	first := `{"systemInstruction":{"parts":[{"text":"` + long + `"}]},"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	second := `{"systemInstruction":{"parts":[{"text":"` + long + `"}]},"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"text":"Hello"}]},{"role":"user","parts":[{"text":"bye"}]}]}`
	usage := func(body string) usageMetadata {
		s.Script(Say("ok"))
		_, _, data := post(t, s, body)
		var r response
		json.Unmarshal([]byte(data[len(data)-1]), &r)
		return *r.UsageMetadata
	}
	if u := usage(first); u.CachedContentTokenCount != 0 {
		t.Fatalf("first prompt cached: %+v", u)
	}
	u := usage(second)
	if want := tokens(long) + tokens("hi"); u.CachedContentTokenCount != want || u.PromptTokenCount <= want {
		t.Fatalf("second prompt: %+v, want %d cached", u, want)
	}
}

func TestScriptedFailures(t *testing.T) {
	s := New(t)
	s.Script(RateLimited("1.5s"))
	req, _ := http.NewRequest("POST", s.URL+"/v1beta/models/m:streamGenerateContent?alt=sse", strings.NewReader(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 429 || !strings.Contains(string(raw), `"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"`) || !strings.Contains(string(raw), `"status":"RESOURCE_EXHAUSTED"`) {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
	s.Script(Reply{Parts: []ReplyPart{Text("Half")}, Cut: true})
	if _, _, data := post(t, s, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`); len(data) != 1 || strings.Contains(data[0], "finishReason") {
		t.Fatalf("cut stream %v", data)
	}
	s.Script(Reply{Blocked: "PROHIBITED_CONTENT"})
	if _, _, data := post(t, s, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`); len(data) != 1 || !strings.Contains(data[0], `"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"}`) || strings.Contains(data[0], "candidates") {
		t.Fatalf("blocked %v", data)
	}
	if status, msg, _ := post(t, s, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`); status != 500 || !strings.Contains(msg, "no reply scripted") {
		t.Fatalf("unscripted: %d %s", status, msg)
	}
}

func mustPart(s string) Part {
	var p Part
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		panic(err)
	}
	return p
}

func flipLast(sig string) string {
	raw, _ := base64.StdEncoding.DecodeString(sig)
	raw[len(raw)-1] ^= 1
	return base64.StdEncoding.EncodeToString(raw)
}

// A responder answers what the script does not, from the request.
func TestResponder(t *testing.T) {
	s := New(t, WithResponder(func(r *Request) Reply {
		return Say("You said " + *r.Parsed.Contents[len(r.Parsed.Contents)-1].Parts[0].Text)
	}))
	_, _, data := post(t, s, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	if len(data) != 2 || !strings.Contains(data[0], `"text":"You said hi"`) {
		t.Fatalf("%v", data)
	}
}

// Signatures are stateless: a fake started anew (a restart, another
// replica's) accepts what another one issued, unless its secret differs.
func TestSignaturesSurviveARestart(t *testing.T) {
	before := New(t)
	body := conversation([]string{signed(before, weatherCall)}, 1)
	before.Close()
	after := New(t)
	after.Script(Say("ok"))
	if status, msg, _ := post(t, after, body); status != 200 {
		t.Fatalf("%d %s", status, msg)
	}
	other := New(t, WithSecret([]byte("other")))
	if status, msg, _ := post(t, other, body); status != 400 || msg != msgCorrupted {
		t.Fatalf("%d %s", status, msg)
	}
}

// A reply's scripted usage is what every chunk reports, its total added up
// as the API does.
func TestScriptedUsage(t *testing.T) {
	s := New(t)
	s.Script(Reply{Parts: []ReplyPart{Thought("Hmm."), Text("Hello!")}, Usage: &Usage{PromptTokenCount: 1200, CachedContentTokenCount: 1000, CandidatesTokenCount: 180, ThoughtsTokenCount: 120}})
	status, _, data := post(t, s, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	if status != 200 || len(data) != 3 {
		t.Fatalf("%d %v", status, data)
	}
	for _, d := range data {
		var r response
		if err := json.Unmarshal([]byte(d), &r); err != nil {
			t.Fatal(err)
		}
		if u := *r.UsageMetadata; u != (usageMetadata{PromptTokenCount: 1200, CachedContentTokenCount: 1000, CandidatesTokenCount: 180, ThoughtsTokenCount: 120, TotalTokenCount: 1500}) {
			t.Fatalf("usage %+v", u)
		}
	}
}

// A stalled reply streams its parts and then nothing, no finish reason,
// until the client goes away.
func TestStall(t *testing.T) {
	s := New(t)
	s.Script(Reply{Parts: []ReplyPart{Text("Let me count")}, Stall: true})
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // gone already: ServeHTTP returns once it has written what a stall writes
	req := httptest.NewRequestWithContext(ctx, "POST", "/v1beta/models/"+model+":streamGenerateContent?alt=sse", strings.NewReader(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`))
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	body := rec.Body.String()
	if rec.Code != 200 || strings.Count(body, "data: ") != 1 || !strings.Contains(body, `"text":"Let me count"`) || strings.Contains(body, "finishReason") {
		t.Fatalf("%d %s", rec.Code, body)
	}
}
