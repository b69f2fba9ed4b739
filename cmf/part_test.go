package cmf

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func ptr[T any](v T) *T { return &v }

// samples holds one part of every content type, with every field set, plus
// a few minimal variants. Their JSON is pinned in testdata/parts/.
var samples = []struct {
	name string
	part Part
}{
	{"text", Text{Text: "Hello, <world> & \"friends\""}},
	{"text_signed", Text{Text: "Done.", Opaque: &Opaque{Provider: "gemini", Model: "gemini-2.5-pro", Data: "c2lnLXRleHQ="}}},
	{"thinking_signed", Thinking{Text: "The user wants admin users.", Opaque: &Opaque{Provider: "anthropic", Model: "claude-sonnet-4-5", Data: "sig-abc=="}}},
	{"thinking_reasoning_item", Thinking{Text: "Summary.", Opaque: &Opaque{Provider: "openai.responses", Model: "gpt-5", ID: "rs_1", Data: "gAAAAB"}}},
	{"thinking_unsigned", Thinking{Text: "hmm"}},
	{"redacted_thinking", RedactedThinking{Opaque: Opaque{Provider: "anthropic", Model: "claude-sonnet-4-5", Data: "EmwKAhgBEgy3va3pzix"}}},
	{"tool_call_signed", ToolCall{ToolCallID: "call_9", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`),
		Opaque: &Opaque{Provider: "gemini", Model: "gemini-2.5-pro", Data: "c2lnLWNhbGw="}}},
	{"tool_call", ToolCall{ToolCallID: "call_1", Name: "execute_sql", Namespace: "db-server",
		Arguments: json.RawMessage(`{"query":"SELECT 1","limit":12345678901234567890.5}`)}},
	{"tool_result", ToolResult{ToolCallID: "call_1", ToolName: "execute_sql", Content: json.RawMessage(`[{"id":1}]`)}},
	{"tool_result_error", ToolResult{ToolCallID: "call_2", ToolName: "send_email", Content: json.RawMessage(`"smtp down"`), IsError: true}},
	{"tool_result_null", ToolResult{ToolCallID: "call_3", ToolName: "noop", Content: json.RawMessage(`null`)}},
	{"resource", Resource{ResourceRequestID: "res_1", URI: "file:///srv/report.csv", Name: "report", Description: "Q3 numbers",
		ResourceType: ResourceFile, Content: ptr("a,b\n1,2\n"), MimeType: "text/csv", SizeBytes: ptr(int64(8)),
		Annotations: map[string]json.RawMessage{"classification": json.RawMessage(`"internal"`)}, Version: "v3"}},
	{"resource_blob", Resource{ResourceRequestID: "res_2", URI: "blob://x", ResourceType: ResourceBlob, Blob: []byte{0, 1, 2, 255}}},
	{"resource_ref", ResourceRef{ResourceRequestID: "res_3", URI: "file:///src/main.go", Name: "main.go", ResourceType: ResourceFile,
		RangeStart: ptr(int64(10)), RangeEnd: ptr(int64(20)), Selector: "$.items"}},
	{"prompt_request", PromptRequest{PromptRequestID: "pr_1", Name: "summarize", ServerID: "prompts",
		Arguments: json.RawMessage(`{"style":"brief"}`)}},
	{"prompt_result", PromptResult{PromptRequestID: "pr_1", PromptName: "summarize",
		Messages: []Message{{SchemaVersion: SchemaVersion, Role: RoleUser, Content: []Part{Text{Text: "Summarize briefly."}}}},
		Content:  ptr("Summarize briefly.")}},
	{"prompt_result_error", PromptResult{PromptRequestID: "pr_2", PromptName: "missing", IsError: true, ErrorMessage: "no such prompt"}},
	{"image_url", Image{MediaSource{Type: SourceURL, Data: "https://example.com/cat.png", MediaType: "image/png"}}},
	{"image_base64", Image{MediaSource{Type: SourceBase64, Data: "iVBORw0KGgo=", MediaType: "image/png"}}},
	{"video", Video{MediaSource: MediaSource{Type: SourceURL, Data: "https://example.com/v.mp4", MediaType: "video/mp4"}, DurationMs: ptr(int64(1500))}},
	{"audio", Audio{MediaSource: MediaSource{Type: SourceBase64, Data: "UklGRg==", MediaType: "audio/wav"}, DurationMs: ptr(int64(20))}},
	{"document", Document{MediaSource: MediaSource{Type: SourceBase64, Data: "JVBERi0xLjQK", MediaType: "application/pdf"}, Title: "Spec"}},
}

func TestPartGoldenRoundTrip(t *testing.T) {
	seen := map[ContentType]bool{}
	for _, s := range samples {
		t.Run(s.name, func(t *testing.T) {
			seen[s.part.ContentType()] = true
			if err := s.part.Validate(); err != nil {
				t.Fatalf("sample is invalid: %v", err)
			}
			got, err := json.MarshalIndent(s.part, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "parts", s.name+".json")
			if *update {
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./cmf -update)", err)
			}
			if !bytes.Equal(append(got, '\n'), want) {
				t.Errorf("JSON differs from %s:\n got: %s\nwant: %s", golden, got, want)
			}
			back, err := UnmarshalPart(want)
			if err != nil {
				t.Fatalf("UnmarshalPart(golden): %v", err)
			}
			if !reflect.DeepEqual(back, s.part) {
				t.Errorf("round trip changed the part:\n got %#v\nwant %#v", back, s.part)
			}
		})
	}
	for _, ct := range []ContentType{ContentText, ContentThinking, ContentRedactedThinking, ContentToolCall, ContentToolResult, ContentResource,
		ContentResourceRef, ContentPromptRequest, ContentPromptResult, ContentImage, ContentVideo, ContentAudio, ContentDocument} {
		if !seen[ct] {
			t.Errorf("no golden sample for content type %s", ct)
		}
	}
}

// A thinking part stored before opaque values were tagged has a bare
// signature: it still decodes, as a value of unknown origin that no model
// replays.
func TestStoredThinkingSignatureDecodes(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "stored-v1", "thinking-signature.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := UnmarshalPart(b)
	if err != nil {
		t.Fatal(err)
	}
	want := Thinking{Text: "The user wants admin users.", Opaque: &Opaque{Data: "sig-abc=="}}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("got %#v, want %#v", p, want)
	}
	if want.Opaque.From("", "") || want.Opaque.From("anthropic", "") {
		t.Error("a value of unknown origin must never be replayed")
	}
}

func TestOpaqueFrom(t *testing.T) {
	o := &Opaque{Provider: "anthropic", Model: "claude-a", Data: "s"}
	for _, c := range []struct {
		provider, model string
		want            bool
	}{{"anthropic", "claude-a", true}, {"anthropic", "claude-b", false}, {"gemini", "claude-a", false}, {"", "", false}} {
		if got := o.From(c.provider, c.model); got != c.want {
			t.Errorf("From(%q, %q) = %v, want %v", c.provider, c.model, got, c.want)
		}
	}
	var none *Opaque
	if none.From("anthropic", "claude-a") {
		t.Error("nil Opaque is from nobody")
	}
}

func TestOpaqueValidation(t *testing.T) {
	for _, p := range []Part{
		RedactedThinking{},
		Thinking{Opaque: &Opaque{Provider: "anthropic", Model: "m"}},
		Thinking{Opaque: &Opaque{Provider: "anthropic", Data: "s"}},
		Text{Opaque: &Opaque{}},
		ToolCall{ToolCallID: "c", Name: "n", Arguments: json.RawMessage(`{}`), Opaque: &Opaque{Provider: "gemini", Data: "s"}},
	} {
		if err := p.Validate(); err == nil {
			t.Errorf("%#v: valid, want an error", p)
		}
	}
	if err := (Thinking{Opaque: &Opaque{Provider: "openai.responses", Model: "gpt-5", ID: "rs_1"}}).Validate(); err != nil {
		t.Errorf("a reasoning item id alone: %v", err)
	}
}

func TestMessageGoldenRoundTrip(t *testing.T) {
	m := Message{
		SchemaVersion: SchemaVersion,
		Role:          RoleAssistant,
		Channel:       ChannelFinal,
		Content: []Part{
			Thinking{Text: "The user wants admin users. I'll query the database..."},
			Text{Text: "Let me look that up for you."},
			ToolCall{ToolCallID: "c1", Name: "execute_sql", Namespace: "db-server", Arguments: json.RawMessage(`{"query":"SELECT * FROM users WHERE role='admin'"}`)},
			ToolCall{ToolCallID: "c2", Name: "send_email", Namespace: "email-server", Arguments: json.RawMessage(`{"to":"boss@company.com","body":"..."}`)},
		},
		Extensions: fullExtensions(),
	}
	got, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "message.json")
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./cmf -update)", err)
	}
	if !bytes.Equal(append(got, '\n'), want) {
		t.Errorf("JSON differs from %s:\n%s", golden, got)
	}
	var back Message
	if err := json.Unmarshal(want, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, m) {
		t.Errorf("round trip changed the message:\n got %+v\nwant %+v", back, m)
	}
	if back.ID() != "msg-1" {
		t.Errorf("ID() = %q, want msg-1", back.ID())
	}
}

func fullExtensions() *Extensions {
	return &Extensions{
		Request: &RequestExtension{Environment: "production", RequestID: "req-1", Timestamp: "2026-11-21T10:00:00Z", TraceID: "t1", SpanID: "s1"},
		Agent: &AgentExtension{Input: "find admins", SessionID: "sess-1", ConversationID: "conv-1", Turn: ptr(3), AgentID: "agent-a", ParentAgentID: "agent-root",
			Conversation: &ConversationContext{Summary: "admins", Topics: []string{"users"}}},
		HTTP: &HTTPExtension{Headers: map[string]string{"Authorization": "Bearer secret", "X-Request-Id": "abc", "Cookie": "s=1", "X-Api-Key": "k"}},
		Security: &SecurityExtension{
			Labels: []string{"PII"}, Classification: "confidential",
			Subject: &SubjectExtension{ID: "alice", Type: SubjectUser, Roles: []string{"admin"}, Permissions: []string{"db.read"},
				Teams: []string{"ops"}, Claims: map[string]json.RawMessage{"iss": json.RawMessage(`"idp"`)}},
			Objects: map[string]ObjectSecurityProfile{"execute_sql": {ManagedBy: "host", Permissions: []string{"db.read"}, TrustDomain: "internal", DataScope: []string{"email"}}},
			Data: map[string]DataPolicy{"execute_sql": {ApplyLabels: []string{"PII"}, DeniedActions: []string{"export"},
				Retention: &RetentionPolicy{MaxAgeSeconds: ptr(int64(3600)), Policy: "session"}}},
		},
		MCP: &MCPExtension{Metadata: MCPMetadata{Tool: &ToolMetadata{Name: "execute_sql", InputSchema: json.RawMessage(`{"type":"object"}`),
			Annotations: map[string]json.RawMessage{"readOnlyHint": json.RawMessage(`true`)}}}},
		Completion: &CompletionExtension{StopReason: StopCall, Tokens: &TokenUsage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15},
			Model: "gpt-4o", RawFormat: "chatml", CreatedAt: "2026-11-21T10:00:01Z", LatencyMs: ptr(int64(420))},
		Provenance: &ProvenanceExtension{Source: "agent:demo", MessageID: "msg-1", ParentID: "msg-0"},
		LLM:        &LLMExtension{ModelID: "gpt-4o", Provider: "openai", Capabilities: []string{"tool_use"}},
		Framework:  &FrameworkExtension{Framework: "agentui", FrameworkVersion: "0.1", NodeID: "n1", GraphID: "g1", Metadata: map[string]json.RawMessage{"k": json.RawMessage(`1`)}},
		Custom:     map[string]json.RawMessage{"app": json.RawMessage(`{"x":1}`)},
	}
}

func TestUnmarshalPartErrors(t *testing.T) {
	cases := []struct {
		name, json string
		want       string
	}{
		{"no discriminator", `{"text":"hi"}`, "no content_type"},
		{"unknown discriminator", `{"content_type":"hologram","text":"hi"}`, "unknown content type"},
		{"not an object", `["text"]`, "content part"},
		{"tool call without id", `{"content_type":"tool_call","name":"x","arguments":{}}`, "tool_call_id: required"},
		{"tool call with string arguments", `{"content_type":"tool_call","tool_call_id":"c","name":"x","arguments":"{}"}`, "arguments: must be a JSON object"},
		{"tool result without content", `{"content_type":"tool_result","tool_call_id":"c","tool_name":"x"}`, "content: must be a JSON value"},
		{"bad source type", `{"content_type":"image","type":"s3","data":"s3://b/k"}`, "unknown source type"},
		{"missing source type", `{"content_type":"image","data":"https://x"}`, "type: must be"},
		{"bad base64", `{"content_type":"audio","type":"base64","data":"!!!"}`, "not valid base64"},
		{"bad resource type", `{"content_type":"resource_ref","resource_request_id":"r","uri":"u","resource_type":"disk"}`, "unknown resource type"},
		{"negative duration", `{"content_type":"video","type":"url","data":"https://x","duration_ms":-1}`, "duration_ms: negative"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := UnmarshalPart([]byte(c.json))
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(c.want)) {
				t.Fatalf("err = %v, want it to mention %q", err, c.want)
			}
		})
	}
}

// A part of a content type this version does not know is an error when
// decoding a part or a message, and a part a view cannot see fails Views:
// nothing is skipped, so no policy passes over content it cannot read.
func TestUnknownContentTypeIsAnError(t *testing.T) {
	_, err := UnmarshalPart([]byte(`{"content_type":"hologram","data":"x"}`))
	if !errors.Is(err, ErrUnknownContentType) {
		t.Fatalf("err = %v, want ErrUnknownContentType", err)
	}
	var m Message
	err = json.Unmarshal([]byte(`{"role":"assistant","content":[{"content_type":"tool_call","tool_call_id":"c","name":"x","arguments":{}},{"content_type":"hologram"}]}`), &m)
	if !errors.Is(err, ErrUnknownContentType) {
		t.Fatalf("a message with an unknown part decoded: err = %v", err)
	}
	// Views never skip: a part they cannot see is an error.
	if _, err := (&Message{Role: RoleUser, Content: []Part{Text{}, nil}}).Views(0); err == nil {
		t.Fatal("Views skipped a nil part")
	}
}

func TestMessageUnmarshalErrors(t *testing.T) {
	cases := []struct{ name, json, want string }{
		{"no role", `{"content":[]}`, "role: required"},
		{"bad role", `{"role":"robot","content":[]}`, "unknown role"},
		{"bad channel", `{"role":"user","channel":"loud","content":[]}`, "unknown channel"},
		{"bad schema version", `{"schema_version":"1.0","role":"user","content":[]}`, "schema_version"},
		{"bad part", `{"role":"user","content":[{"content_type":"text","text":"ok"},{"content_type":"x"}]}`, "content[1]"},
		{"bad stop reason", `{"role":"assistant","content":[],"extensions":{"completion":{"stop_reason":"tired"}}}`, "unknown stop reason"},
		{"bad subject", `{"role":"user","content":[],"extensions":{"security":{"subject":{"id":"a","type":"robot"}}}}`, "unknown subject type"},
		{"subject without id", `{"role":"user","content":[],"extensions":{"security":{"subject":{"type":"user"}}}}`, "security.subject.id: required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var m Message
			err := json.Unmarshal([]byte(c.json), &m)
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(c.want)) {
				t.Fatalf("err = %v, want it to mention %q", err, c.want)
			}
		})
	}
}

func TestValidationErrorNamesTheField(t *testing.T) {
	m := Message{Role: RoleAssistant, Content: []Part{Text{Text: "x"}, ToolCall{ToolCallID: "c", Arguments: json.RawMessage(`{}`)}}}
	err := m.Validate()
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "content[1].name" {
		t.Fatalf("err = %v, want a ValidationError for content[1].name", err)
	}
	m = Message{Role: RoleUser, Content: []Part{nil}}
	if err := m.Validate(); err == nil {
		t.Fatal("a nil part must not validate")
	}
}

func TestMessageDefaults(t *testing.T) {
	m := Message{Role: RoleUser}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"schema_version":"2.0","role":"user","content":[]}` {
		t.Fatalf("zero message JSON = %s", b)
	}
	var back Message
	if err := json.Unmarshal([]byte(`{"role":"user","content":[]}`), &back); err != nil {
		t.Fatal(err)
	}
	if back.SchemaVersion != SchemaVersion || back.Content != nil {
		t.Fatalf("decoded defaults = %+v", back)
	}
}

func TestMessageIDAndText(t *testing.T) {
	var m Message
	if m.ID() != "" {
		t.Fatal("zero message has an id")
	}
	shared := &ProvenanceExtension{Source: "user", MessageID: "old"}
	m.Extensions = &Extensions{Provenance: shared}
	m.SetID("new")
	if m.ID() != "new" || shared.MessageID != "old" || m.Extensions.Provenance.Source != "user" {
		t.Fatalf("SetID changed a shared extension or lost fields: %+v / %+v", m.Extensions.Provenance, shared)
	}
	m.Content = []Part{Text{Text: "a"}, Thinking{Text: "zz"}, Text{Text: "b"}}
	if m.Text() != "ab" {
		t.Fatalf("Text() = %q", m.Text())
	}
	m.Content = []Part{Text{Text: "only"}}
	if m.Text() != "only" {
		t.Fatalf("Text() = %q", m.Text())
	}
}

func TestMessageClone(t *testing.T) {
	m := Message{Role: RoleUser, Content: []Part{Text{Text: "a"}}, Extensions: fullExtensions()}
	c := m.Clone()
	c.Content[0] = Text{Text: "b"}
	c.Extensions.Security.Labels[0] = "CHANGED"
	c.Extensions.HTTP.Headers["X-Request-Id"] = "changed"
	c.Extensions.Custom["app"][2] = 'Z'
	if m.Content[0].(Text).Text != "a" || m.Extensions.Security.Labels[0] != "PII" ||
		m.Extensions.HTTP.Headers["X-Request-Id"] != "abc" || string(m.Extensions.Custom["app"]) != `{"x":1}` {
		t.Fatal("changing the clone changed the original")
	}
	if c.Extensions.Request != m.Extensions.Request || c.Extensions.Security.Subject != m.Extensions.Security.Subject {
		t.Fatal("immutable extensions must be shared, not copied")
	}
	var nilExt *Extensions
	if nilExt.Clone() != nil {
		t.Fatal("nil Clone must be nil")
	}
}

func TestMedia(t *testing.T) {
	for _, s := range samples {
		_, isMedia := Media(s.part)
		want := false
		switch s.part.(type) {
		case Image, Video, Audio, Document:
			want = true
		}
		if isMedia != want {
			t.Errorf("Media(%s) = %v, want %v", s.name, isMedia, want)
		}
	}
}

func TestEnums(t *testing.T) {
	if !StopPaused.Valid() || StopReason("nope").Valid() {
		t.Fatal("StopReason.Valid")
	}
	if !SubjectAgent.Valid() || SubjectType("x").Valid() {
		t.Fatal("SubjectType.Valid")
	}
	if !ResourceArtifact.Valid() || ResourceType("x").Valid() {
		t.Fatal("ResourceType.Valid")
	}
	var r Role
	if err := r.UnmarshalText([]byte("tool")); err != nil || r != RoleTool {
		t.Fatal("Role.UnmarshalText")
	}
}

// Every Validate rule, by the field it names.
func TestPartValidateNamesField(t *testing.T) {
	obj := json.RawMessage(`{}`)
	cases := []struct {
		part  Part
		field string
	}{
		{ToolCall{Name: "x", Arguments: obj}, "tool_call_id"},
		{ToolCall{ToolCallID: "c", Arguments: obj}, "name"},
		{ToolCall{ToolCallID: "c", Name: "x"}, "arguments"},
		{ToolResult{ToolName: "x", Content: obj}, "tool_call_id"},
		{ToolResult{ToolCallID: "c", Content: obj}, "tool_name"},
		{ToolResult{ToolCallID: "c", ToolName: "x", Content: json.RawMessage(`{`)}, "content"},
		{Resource{URI: "u", ResourceType: ResourceFile}, "resource_request_id"},
		{Resource{ResourceRequestID: "r", ResourceType: ResourceFile}, "uri"},
		{Resource{ResourceRequestID: "r", URI: "u"}, "resource_type"},
		{Resource{ResourceRequestID: "r", URI: "u", ResourceType: ResourceFile, SizeBytes: ptr(int64(-1))}, "size_bytes"},
		{Resource{ResourceRequestID: "r", URI: "u", ResourceType: ResourceFile, Annotations: map[string]json.RawMessage{"a": json.RawMessage(`{`)}}, "annotations.a"},
		{ResourceRef{URI: "u", ResourceType: ResourceFile}, "resource_request_id"},
		{ResourceRef{ResourceRequestID: "r", ResourceType: ResourceFile}, "uri"},
		{ResourceRef{ResourceRequestID: "r", URI: "u", ResourceType: "x"}, "resource_type"},
		{ResourceRef{ResourceRequestID: "r", URI: "u", ResourceType: ResourceFile, RangeEnd: ptr(int64(-2))}, "range_end"},
		{PromptRequest{Name: "n", Arguments: obj}, "prompt_request_id"},
		{PromptRequest{PromptRequestID: "p", Arguments: obj}, "name"},
		{PromptRequest{PromptRequestID: "p", Name: "n", Arguments: json.RawMessage(`[]`)}, "arguments"},
		{PromptResult{PromptName: "n"}, "prompt_request_id"},
		{PromptResult{PromptRequestID: "p"}, "prompt_name"},
		{Image{MediaSource{Type: SourceURL}}, "data"},
		{Document{MediaSource: MediaSource{Type: "ftp", Data: "x"}}, "type"},
		{Audio{MediaSource: MediaSource{Type: SourceURL, Data: "x"}, DurationMs: ptr(int64(-5))}, "duration_ms"},
		{Video{MediaSource: MediaSource{Type: SourceBase64, Data: "%%%%"}}, "data"},
	}
	for _, c := range cases {
		err := c.part.Validate()
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("%#v: err = %v, want field %s", c.part, err, c.field)
		}
	}
	for _, s := range samples {
		s.part.isPart() // the seal: only this package's types implement Part
	}
}

func TestExtensionsValidateNamesField(t *testing.T) {
	cases := []struct {
		ext   Extensions
		field string
	}{
		{Extensions{Completion: &CompletionExtension{Tokens: &TokenUsage{InputTokens: -1}}}, "completion.tokens"},
		{Extensions{Completion: &CompletionExtension{LatencyMs: ptr(int64(-1))}}, "completion.latency_ms"},
		{Extensions{Completion: &CompletionExtension{StopReason: "bored"}}, "completion.stop_reason"},
		{Extensions{Agent: &AgentExtension{Turn: ptr(-1)}}, "agent.turn"},
		{Extensions{Agent: &AgentExtension{Conversation: &ConversationContext{History: []Message{{Role: "x"}}}}}, "agent.conversation.history[0].role"},
		{Extensions{Custom: map[string]json.RawMessage{"": json.RawMessage(`1`)}}, "custom"},
		{Extensions{Security: &SecurityExtension{Subject: &SubjectExtension{ID: "a", Type: "robot"}}}, "security.subject.type"},
	}
	for _, c := range cases {
		m := Message{Role: RoleUser, Extensions: &c.ext}
		err := m.Validate()
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "extensions."+c.field {
			t.Errorf("err = %v, want field extensions.%s", err, c.field)
		}
	}
}

// Extensions are typed, and no field anywhere in the model is an untyped
// interface (the sealed Part is the only interface), so everything a
// reader of a message meets has a documented shape.
func TestModelHasNoUntypedFields(t *testing.T) {
	f, _ := reflect.TypeFor[Message]().FieldByName("Extensions")
	if f.Type != reflect.TypeFor[*Extensions]() {
		t.Fatalf("Message.Extensions is %s", f.Type)
	}
	// No field anywhere in the model is an untyped interface; the only
	// interface is the sealed Part.
	seen := map[reflect.Type]bool{}
	var walk func(path string, t reflect.Type)
	walk = func(path string, typ reflect.Type) {
		if seen[typ] {
			return
		}
		seen[typ] = true
		switch typ.Kind() {
		case reflect.Interface:
			if typ != reflect.TypeFor[Part]() {
				t.Errorf("%s is an untyped interface (%s)", path, typ)
			}
		case reflect.Pointer, reflect.Slice, reflect.Map:
			walk(path, typ.Elem())
		case reflect.Struct:
			for i := range typ.NumField() {
				walk(path+"."+typ.Field(i).Name, typ.Field(i).Type)
			}
		}
	}
	walk("Message", reflect.TypeFor[Message]())
	for _, s := range samples {
		walk(reflect.TypeOf(s.part).Name(), reflect.TypeOf(s.part))
	}
}

// The content_type a part is written with comes from its Go type, and JSON
// decodes as the type it names and is held to that type's rules, so a part
// cannot claim one kind and carry another's fields. Part stays sealed.
func TestContentTypeComesFromTheGoType(t *testing.T) {
	// The discriminator comes from the Go type: a Text always says "text".
	b, _ := json.Marshal(Text{Text: "hello"})
	if !strings.HasPrefix(string(b), `{"content_type":"text"`) {
		t.Fatalf("Text marshals as %s", b)
	}
	// JSON claiming one type with another type's fields decodes as the
	// claimed type and is then held to that type's rules.
	p, err := UnmarshalPart([]byte(`{"content_type":"text","tool_call_id":"c","name":"rm","arguments":{"path":"/"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.(Text); !ok || p.ContentType() != ContentText {
		t.Fatalf("decoded %T", p)
	}
	if _, err := UnmarshalPart([]byte(`{"content_type":"tool_call","text":"hello"}`)); err == nil {
		t.Fatal("a tool_call made of text fields was accepted")
	}
	// The set of Part implementations is sealed: only this package's types
	// have the unexported isPart method.
	if reflect.TypeFor[Part]().NumMethod() != 3 {
		t.Fatal("Part interface changed; keep it sealed")
	}
}

// A prompt result holds typed messages, validated as any message is, and a
// validation error names the nested field.
func TestPromptResultMessagesAreValidated(t *testing.T) {
	f, _ := reflect.TypeFor[PromptResult]().FieldByName("Messages")
	if f.Type != reflect.TypeFor[[]Message]() {
		t.Fatalf("PromptResult.Messages is %s", f.Type)
	}
	_, err := UnmarshalPart([]byte(`{"content_type":"prompt_result","prompt_request_id":"p","prompt_name":"n","messages":[{"role":"wizard","content":[]}]}`))
	if err == nil {
		t.Fatal("a prompt result with an invalid message decoded")
	}
	bad := PromptResult{PromptRequestID: "p", PromptName: "n", Messages: []Message{{Role: "wizard"}}}
	var ve *ValidationError
	if err := bad.Validate(); !errors.As(err, &ve) || ve.Field != "messages[0].role" {
		t.Fatalf("Validate = %v", err)
	}
}

// A media source is a URL, base64 data or a kept file's id: no other
// source type (nor another spelling of these) decodes or validates.
func TestMediaSourceTypeIsURLBase64OrFile(t *testing.T) {
	for _, typ := range []string{"s3", "File", "", "URL", "data"} {
		src := `{"content_type":"image","type":"` + typ + `","data":"x"}`
		if _, err := UnmarshalPart([]byte(src)); err == nil {
			t.Errorf("source type %q accepted", typ)
		}
		img := Image{MediaSource{Type: SourceType(typ), Data: "x"}}
		if img.Validate() == nil {
			t.Errorf("Validate accepted source type %q", typ)
		}
	}
	for _, typ := range []SourceType{SourceURL, SourceBase64, SourceFile} {
		if err := (Audio{MediaSource: MediaSource{Type: typ, Data: "AAAA"}}).Validate(); err != nil {
			t.Errorf("%s rejected: %v", typ, err)
		}
	}
	if _, err := UnmarshalPart([]byte(`{"content_type":"image","type":"file","data":"sha256-ab","media_type":"image/png"}`)); err != nil {
		t.Errorf("a file source: %v", err)
	}
	if (Image{MediaSource{Type: SourceFile}}).Validate() == nil {
		t.Error("a file source without its id validated")
	}
}

// A malformed part is an error, never decoded as a text part, which would
// carry it past the rules for the kind it was meant to be.
func TestMalformedPartIsNeverText(t *testing.T) {
	// A malformed tool call is an error, never a text part.
	for _, src := range []string{
		`{"content_type":"tool_call","tool_call_id":"c","name":"x","arguments":[1,2]}`,
		`{"content_type":"tool_call","tool_call_id":7,"name":"x","arguments":{}}`,
		`{"name":"x","arguments":{}}`,
		`{"content_type":null,"text":"hi"}`,
	} {
		p, err := UnmarshalPart([]byte(src))
		if err == nil {
			t.Errorf("%s decoded as %T", src, p)
		}
	}
}

// A resource carries text content or a binary blob, never both (a reader
// could not tell which one is the resource); one alone, or neither, is
// valid.
func TestResourceHasContentOrBlobNotBoth(t *testing.T) {
	both := Resource{ResourceRequestID: "r", URI: "u", ResourceType: ResourceFile, Content: ptr("text"), Blob: []byte("bytes")}
	if err := both.Validate(); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Fatalf("Validate = %v", err)
	}
	if _, err := UnmarshalPart([]byte(`{"content_type":"resource","resource_request_id":"r","uri":"u","resource_type":"file","content":"t","blob":"AAE="}`)); err == nil {
		t.Fatal("decoded a resource with content and blob")
	}
	for _, r := range []Resource{
		{ResourceRequestID: "r", URI: "u", ResourceType: ResourceFile, Content: ptr("")},
		{ResourceRequestID: "r", URI: "u", ResourceType: ResourceFile, Blob: []byte{1}},
		{ResourceRequestID: "r", URI: "u", ResourceType: ResourceFile},
	} {
		if err := r.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v", r, err)
		}
	}
}

// A resource reference's range does not end before it starts nor start
// below zero; a one-point range is valid.
func TestResourceRefRangeIsOrdered(t *testing.T) {
	ref := ResourceRef{ResourceRequestID: "r", URI: "u", ResourceType: ResourceFile, RangeStart: ptr(int64(100)), RangeEnd: ptr(int64(5))}
	var ve *ValidationError
	if err := ref.Validate(); !errors.As(err, &ve) || ve.Field != "range_end" {
		t.Fatalf("Validate = %v", err)
	}
	ref.RangeStart, ref.RangeEnd = ptr(int64(5)), ptr(int64(5))
	if err := ref.Validate(); err != nil {
		t.Fatalf("a one-point range was rejected: %v", err)
	}
	ref.RangeStart = ptr(int64(-1))
	if err := ref.Validate(); err == nil {
		t.Fatal("a negative range start was accepted")
	}
}
