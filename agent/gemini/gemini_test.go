package gemini_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/gemini"
	"github.com/agentui/agentui/cmf"
	fake "github.com/agentui/agentui/internal/testkit/fakes/gemini"
)

const (
	testModel = "gemini-3-flash-preview"
	testKey   = "AIza-test-secret-1234"
)

// start runs a fake Gemini API and a model that talks to it through the
// real SDK.
func start(t *testing.T, opts ...gemini.Option) (*fake.Server, *gemini.Model) {
	t.Helper()
	f := fake.New(t, fake.WithAPIKey(testKey))
	return f, newModel(t, f, testModel, opts...)
}

func newModel(t *testing.T, f *fake.Server, model string, opts ...gemini.Option) *gemini.Model {
	t.Helper()
	m, err := gemini.New(model, append([]gemini.Option{gemini.WithBaseURL(f.URL), gemini.WithAPIKey(testKey), gemini.WithMaxRetries(0)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func stream(m agent.Model, req *agent.Request) ([]agent.Chunk, error) {
	var out []agent.Chunk
	for c, err := range m.Stream(context.Background(), req) {
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

func user(text string) cmf.Message {
	return cmf.Message{Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: text}}}
}

func userReq(text string) *agent.Request { return &agent.Request{Messages: []cmf.Message{user(text)}} }

// sig is the signature the fake issued for a part, as stored.
func sig(t *testing.T, f *fake.Server, model string, p fake.Part) string {
	t.Helper()
	return f.Sign(model, p)
}

func text(s string) *string { return &s }

func TestTextThoughtsAndUsage(t *testing.T) {
	f, m := start(t)
	f.Script(fake.Reply{Parts: []fake.ReplyPart{fake.Thought("Counting the r's."), fake.Text("There are "), fake.Text("3.")}})
	chunks, err := stream(m, userReq("How many r's in strawberry?"))
	if err != nil {
		t.Fatal(err)
	}
	var answer, thinking strings.Builder
	var signed *cmf.Opaque
	for _, c := range chunks[:len(chunks)-1] {
		switch c.Kind {
		case agent.ChunkText:
			answer.WriteString(c.Delta)
			if c.Opaque != nil {
				signed = c.Opaque
			}
		case agent.ChunkThinking:
			thinking.WriteString(c.Delta)
		default:
			t.Fatalf("unexpected chunk %+v", c)
		}
	}
	if answer.String() != "There are 3." || thinking.String() != "Counting the r's." {
		t.Fatalf("answer %q thinking %q", answer.String(), thinking.String())
	}
	// Gemini 3 signs a reply without calls on an empty text part at its
	// end: the Opaque says so (an empty span at the end of the text).
	want := &cmf.Opaque{Provider: "gemini", Model: testModel, ID: "12:12", Data: sig(t, f, testModel, fake.Part{Text: text("")})}
	if signed == nil || *signed != *want {
		t.Fatalf("signature %+v, want %+v", signed, want)
	}
	fin := chunks[len(chunks)-1]
	if fin.Kind != agent.ChunkFinish || fin.StopReason != cmf.StopEnd || fin.Provider != "gcp.gemini" || fin.Model != testModel {
		t.Fatalf("finish %+v", fin)
	}
	u := fin.Usage
	if u.InputTokens == 0 || u.ReasoningTokens == 0 || u.OutputTokens <= u.ReasoningTokens || u.TotalTokens != u.InputTokens+u.OutputTokens {
		t.Fatalf("usage %+v", u)
	}
	req := f.Last()
	if req.Model != testModel || req.Header.Get("x-goog-api-key") != testKey {
		t.Fatalf("request to %q with key %q", req.Model, req.Header.Get("x-goog-api-key"))
	}
	if tc := req.Parsed.GenerationConfig.ThinkingConfig; tc == nil || !tc.IncludeThoughts {
		t.Fatalf("thought summaries not asked for: %s", req.Body)
	}
}

func TestSettingsAndThinkingConfig(t *testing.T) {
	f, m := start(t, gemini.WithThinkingLevel("low"))
	f.Script(fake.Say("ok"))
	temp, topP, maxOut, seed := 0.5, 0.9, int64(300), int64(7)
	req := userReq("hi")
	req.Settings = &agent.ModelSettings{Temperature: &temp, TopP: &topP, MaxOutputTokens: &maxOut, Seed: &seed}
	if _, err := stream(m, req); err != nil {
		t.Fatal(err)
	}
	gc := f.Last().Parsed.GenerationConfig
	if *gc.Temperature != 0.5 || *gc.TopP != 0.9 || *gc.MaxOutputTokens != 300 || *gc.Seed != 7 {
		t.Fatalf("generation config %s", f.Last().Body)
	}
	if gc.ThinkingConfig.ThinkingLevel != "LOW" || gc.ThinkingConfig.ThinkingBudget != nil {
		t.Fatalf("thinking config %+v", gc.ThinkingConfig)
	}

	f2, m2 := start(t, gemini.WithThinkingBudget(0), gemini.WithIncludeThoughts(false))
	f2.Script(fake.Say("ok"))
	if _, err := stream(m2, userReq("hi")); err != nil {
		t.Fatal(err)
	}
	if tc := f2.Last().Parsed.GenerationConfig.ThinkingConfig; tc.IncludeThoughts || tc.ThinkingBudget == nil || *tc.ThinkingBudget != 0 {
		t.Fatalf("thinking config %+v", tc)
	}
}

func TestNew(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GOOGLE_API_KEY", "")
	if _, err := gemini.New("gemini-2.5-pro"); err == nil || !strings.Contains(err.Error(), "GEMINI_API_KEY") {
		t.Fatalf("no key: err = %v", err)
	}
	if _, err := gemini.New("", gemini.WithAPIKey("k")); err == nil {
		t.Fatal("empty model name accepted")
	}
	if _, err := gemini.New("m", gemini.WithAPIKey("k"), gemini.WithThinkingLevel("extreme")); err == nil {
		t.Fatal("unknown thinking level accepted")
	}
	// The key comes from the environment, GOOGLE_API_KEY first (as the
	// SDK reads it).
	f := fake.New(t, fake.WithAPIKey("from-google-env"))
	t.Setenv("GEMINI_API_KEY", "from-gemini-env")
	t.Setenv("GOOGLE_API_KEY", "from-google-env")
	t.Setenv("GOOGLE_GEMINI_BASE_URL", f.URL)
	m, err := gemini.New(testModel)
	if err != nil {
		t.Fatal(err)
	}
	f.Script(fake.Say("hi"))
	if _, err := stream(m, userReq("hi")); err != nil {
		t.Fatal(err)
	}
	if got := f.Last().Header.Get("x-goog-api-key"); got != "from-google-env" {
		t.Fatalf("key %q", got)
	}
}

// The API's error text never reaches the error: it can echo what was
// sent. The status and a problem named in this package's words do.
func TestErrorsKeepNoProviderText(t *testing.T) {
	f, _ := start(t)
	m := newModel(t, f, testModel, gemini.WithAPIKey("wrong-key-5678"))
	_, err := stream(m, userReq("hi"))
	var apiErr *gemini.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Reason != "API_KEY_INVALID" || apiErr.Problem != "authentication failed" {
		t.Fatalf("err = %#v", err)
	}
	for _, leak := range []string{"5678", "API key not valid", "wrong-key"} {
		if strings.Contains(err.Error(), leak) {
			t.Fatalf("error text leaks %q: %s", leak, err)
		}
	}
}

func TestStopReasons(t *testing.T) {
	for finish, want := range map[string]cmf.StopReason{
		"STOP":               cmf.StopEnd,
		"MAX_TOKENS":         cmf.StopMaxTokens,
		"SAFETY":             cmf.StopRefusal,
		"RECITATION":         cmf.StopRefusal,
		"PROHIBITED_CONTENT": cmf.StopRefusal,
		"BLOCKLIST":          cmf.StopRefusal,
		"SPII":               cmf.StopRefusal,
	} {
		f, m := start(t)
		f.Script(fake.Reply{Parts: []fake.ReplyPart{fake.Text("Partial")}, Finish: finish})
		chunks, err := stream(m, userReq("hi"))
		if err != nil {
			t.Fatalf("%s: %v", finish, err)
		}
		if last := chunks[len(chunks)-1]; last.StopReason != want {
			t.Errorf("%s: stop %q, want %q", finish, last.StopReason, want)
		}
	}
	// A reply that went wrong is an error, never a finished answer.
	for _, finish := range []string{"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "OTHER"} {
		f, m := start(t)
		f.Script(fake.Reply{Finish: finish})
		_, err := stream(m, userReq("hi"))
		var fe *gemini.FinishError
		if !errors.As(err, &fe) || fe.Reason != finish {
			t.Errorf("%s: err = %v", finish, err)
		}
	}
	// A prompt the API blocks has no candidates: a refusal.
	f, m := start(t)
	f.Script(fake.Reply{Blocked: "PROHIBITED_CONTENT"})
	chunks, err := stream(m, userReq("something bad"))
	if err != nil || len(chunks) != 1 || chunks[0].StopReason != cmf.StopRefusal {
		t.Fatalf("blocked prompt: %+v %v", chunks, err)
	}
}

func TestSources(t *testing.T) {
	f, m := start(t, gemini.WithGoogleSearch())
	f.Script(fake.Reply{Parts: []fake.ReplyPart{fake.Text("Spain won Euro 2024.")}, Sources: []fake.Source{
		{URI: "https://vertexaisearch.cloud.google.com/grounding-api-redirect/a", Title: "uefa.com"},
		{URI: "https://vertexaisearch.cloud.google.com/grounding-api-redirect/b", Title: "wikipedia.org"},
		{URI: "https://vertexaisearch.cloud.google.com/grounding-api-redirect/a", Title: "uefa.com"},
	}})
	chunks, err := stream(m, userReq("Who won Euro 2024?"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range chunks {
		if c.Kind == agent.ChunkSource {
			got = append(got, c.Name+" "+c.URL)
		}
	}
	if len(got) != 2 || got[0] != "uefa.com https://vertexaisearch.cloud.google.com/grounding-api-redirect/a" || !strings.HasPrefix(got[1], "wikipedia.org ") {
		t.Fatalf("sources %v", got)
	}
	tools := f.Last().Parsed.Tools
	if len(tools) != 1 || tools[0].GoogleSearch == nil {
		t.Fatalf("google_search not declared: %s", f.Last().Body)
	}
	// The prompt search adds is billed as input.
	if fin := chunks[len(chunks)-1]; fin.Usage.TotalTokens != fin.Usage.InputTokens+fin.Usage.OutputTokens {
		t.Fatalf("usage %+v", fin.Usage)
	}
}

func TestImages(t *testing.T) {
	f, m := start(t)
	f.Script(fake.Say("A cat."))
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n0000"))
	req := &agent.Request{Messages: []cmf.Message{{Role: cmf.RoleUser, Content: []cmf.Part{
		cmf.Text{Text: "What is in these?"},
		cmf.Image{MediaSource: cmf.MediaSource{Type: cmf.SourceBase64, Data: png}},
		cmf.Image{MediaSource: cmf.MediaSource{Type: cmf.SourceURL, Data: "https://example.com/cat.jpg"}},
		cmf.Image{MediaSource: cmf.MediaSource{Type: cmf.SourceURL, Data: "data:image/webp;base64," + png}},
	}}}}
	if _, err := stream(m, req); err != nil {
		t.Fatal(err)
	}
	parts := f.Last().Parsed.Contents[0].Parts
	if len(parts) != 4 {
		t.Fatalf("parts %s", f.Last().Body)
	}
	if b := parts[1].InlineData; b == nil || b.MIMEType != "image/png" || b.Data != png {
		t.Fatalf("base64 image sent as %+v", parts[1])
	}
	if fd := parts[2].FileData; fd == nil || fd.FileURI != "https://example.com/cat.jpg" || fd.MIMEType != "image/jpeg" {
		t.Fatalf("URL image sent as %+v", parts[2])
	}
	if b := parts[3].InlineData; b == nil || b.MIMEType != "image/webp" || b.Data != png {
		t.Fatalf("data URL image sent as %+v", parts[3])
	}
	_, err := stream(m, &agent.Request{Messages: []cmf.Message{{Role: cmf.RoleUser, Content: []cmf.Part{
		cmf.Image{MediaSource: cmf.MediaSource{Type: cmf.SourceBase64, Data: "not base64!"}}}}}})
	if !errors.Is(err, gemini.ErrBadMedia) {
		t.Fatalf("bad base64: err = %v", err)
	}
}

func TestToolDeclarations(t *testing.T) {
	f, m := start(t)
	f.Script(fake.Say("ok"))
	schema := json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`)
	req := userReq("hi")
	req.Tools = []agent.ToolSpec{{Name: "get_weather", Description: "Weather.", Parameters: schema}, {Name: "now"}}
	if _, err := stream(m, req); err != nil {
		t.Fatal(err)
	}
	decls := f.Last().Parsed.Tools[0].FunctionDeclarations
	if len(decls) != 2 || decls[0].Parameters != nil || string(decls[1].ParametersJSONSchema) != `{"type":"object"}` {
		t.Fatalf("declarations %s", f.Last().Body)
	}
	var got, want any
	json.Unmarshal(decls[0].ParametersJSONSchema, &got)
	json.Unmarshal(schema, &want)
	if b1, _ := json.Marshal(got); string(b1) != string(mustJSON(want)) {
		t.Fatalf("schema %s", decls[0].ParametersJSONSchema)
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// A response no API sends ends the call with ErrMalformed, never a crash
// and never the response's text in the error; a panic of the consumer's
// own is left to the consumer.
func TestMalformedResponse(t *testing.T) {
	for _, body := range []string{
		`data: {"candidates":[null]}`,
		`data: {"candidates":[{"content":{"parts":[null]}}]}`,
		`data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":["secret"]}}]}}]}`,
		`data: {"candidates":[{"content":{"parts":[{"text":"secret"}]}}`,
		`event: {"candidates":[]}`,
	} {
		m, _ := fuzzModel(t, body+"\r\n\r\n")
		_, err := stream(m, userReq("hi"))
		if !errors.Is(err, gemini.ErrMalformed) || strings.Contains(err.Error(), "secret") {
			t.Fatalf("%s: err = %v", body, err)
		}
	}
	m, _ := fuzzModel(t, "data: "+finishChunk+"\r\n\r\n")
	defer func() {
		if r := recover(); r != "consumer" {
			t.Fatalf("recovered %v", r)
		}
	}()
	for range m.Stream(context.Background(), userReq("hi")) {
		panic("consumer")
	}
	t.Fatal("no chunk")
}

// Parts agentui has no place for (an image the model made, code it ran)
// are left out; the text around them streams, and a null one is nothing.
func TestPartsWithoutAPlaceAreLeftOut(t *testing.T) {
	m, _ := fuzzModel(t, `data: {"candidates":[{"content":{"parts":[{"text":"Here"},{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="},"thoughtSignature":"c2ln"},{"executableCode":{"language":"PYTHON","code":"print(1)"}},{"text":" it is"},{"inlineData":null,"text":"."}]},"finishReason":"STOP"}]}`+"\r\n\r\n")
	chunks, err := stream(m, userReq("draw"))
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, c := range chunks {
		if c.Kind != agent.ChunkFinish {
			if c.Kind != agent.ChunkText {
				t.Fatalf("a chunk of kind %v", c.Kind)
			}
			text = append(text, c.Delta)
		}
	}
	if strings.Join(text, "|") != "Here| it is|." {
		t.Fatalf("text %q", text)
	}
}
