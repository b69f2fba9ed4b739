package agui

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	sanitize "github.com/agentui/agentui/internal/turn"
	"github.com/agentui/agentui/internal/wire"
)

func sample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "samples", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var wrapped struct {
		Body json.RawMessage `json:"body"`
	}
	if json.Unmarshal(b, &wrapped) == nil && len(wrapped.Body) > 0 {
		return wrapped.Body
	}
	return b
}

func decode(t *testing.T, body []byte) *wire.Turn {
	t.Helper()
	turn, err := New().Decode(httptest.NewRequest("POST", "/", nil), body)
	if err != nil {
		t.Fatal(err)
	}
	for i := range turn.Messages {
		if err := turn.Messages[i].Validate(); err != nil {
			t.Fatalf("message %d is invalid CMF: %v", i, err)
		}
	}
	return turn
}

func shape(turn *wire.Turn) string {
	var s []string
	for _, m := range turn.Messages {
		var k []string
		for _, p := range m.Content {
			k = append(k, string(p.ContentType()))
		}
		s = append(s, string(m.Role)+":"+strings.Join(k, ","))
	}
	return strings.Join(s, " ")
}

func TestDecodeSamples(t *testing.T) {
	cases := map[string]struct {
		shape  string
		intent wire.Intent
	}{
		"simple-chat":                {"user:text", wire.Submit},
		"minimal-wire":               {"user:text", wire.Submit},
		"captured-httpagent-request": {"user:text", wire.Submit},
		"multimodal":                 {"user:text,image,document,audio", wire.Submit},
		"state-and-context":          {"system:text user:text", wire.Submit},
		"full-history":               {"developer:text system:text user:text assistant:thinking assistant:tool_call tool:tool_result assistant:text user:text", wire.Submit},
		"frontend-tool-result":       {"user:text assistant:text,tool_call tool:tool_result", wire.Continue},
		"frontend-tool-error":        {"user:text assistant:tool_call tool:tool_result", wire.Continue},
		"interrupt-request":          {"user:text", wire.Submit},
		"interrupt-resume":           {"user:text assistant:text,tool_call", wire.Continue},
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "samples", "*.json"))
	if len(files) != len(cases) {
		t.Fatalf("%d sample files, %d cases", len(files), len(cases))
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			turn := decode(t, sample(t, name))
			if got := shape(turn); got != want.shape || turn.Intent != want.intent {
				t.Fatalf("shape %s intent %v, want %s %v", got, turn.Intent, want.shape, want.intent)
			}
		})
	}
}

func TestDecodeDetails(t *testing.T) {
	turn := decode(t, sample(t, "captured-httpagent-request"))
	if turn.ChatID != "thread-captured-1" || turn.RunID != "run-captured-1" || turn.ProtocolVersion != "1.0" ||
		string(turn.State) != `{"counter":1}` || len(turn.ClientTools) != 1 || turn.ClientTools[0].Name != "confirm_action" ||
		len(turn.Context) != 1 || turn.Context[0].Value != "UTC" {
		t.Fatalf("turn = %+v", turn)
	}
	if minimal := decode(t, sample(t, "minimal-wire")); minimal.ProtocolVersion != "" || minimal.State != nil {
		t.Fatalf("minimal = %+v", minimal)
	}
	mm := decode(t, sample(t, "multimodal")).Messages[0]
	if img := mm.Content[1].(cmf.Image); img.Type != cmf.SourceURL || img.Data != "https://example.com/cat.png" {
		t.Fatalf("image = %+v", img)
	}
	if doc := mm.Content[2].(cmf.Document); doc.Type != cmf.SourceBase64 || doc.MediaType != "application/pdf" {
		t.Fatalf("document = %+v", doc)
	}
	if audio := mm.Content[3].(cmf.Audio); audio.Data != "provider-file://openai/file-abc123" {
		t.Fatalf("file source = %+v", audio)
	}
	// The legacy binary part (0.0.x clients): inline data, a URL or an id,
	// its kind its MIME type's.
	legacy := decode(t, []byte(`{"threadId":"t","runId":"r","messages":[{"id":"u","role":"user","content":[
		{"type":"binary","mimeType":"image/png","data":"iVBORw0KGgo="},
		{"type":"binary","mimeType":"application/pdf","url":"https://example.com/a.pdf","filename":"a.pdf"},
		{"type":"binary","mimeType":"audio/wav","id":"file-1"}]}]}`)).Messages[0]
	if img, ok := legacy.Content[0].(cmf.Image); !ok || img.Type != cmf.SourceBase64 || img.MediaType != "image/png" {
		t.Fatalf("binary data = %#v", legacy.Content[0])
	}
	if doc, ok := legacy.Content[1].(cmf.Document); !ok || doc.Type != cmf.SourceURL || doc.Title != "a.pdf" {
		t.Fatalf("binary url = %#v", legacy.Content[1])
	}
	if audio, ok := legacy.Content[2].(cmf.Audio); !ok || audio.Data != "provider-file://unknown/file-1" {
		t.Fatalf("binary id = %#v", legacy.Content[2])
	}
	full := decode(t, sample(t, "full-history"))
	if th := full.Messages[3].Content[0].(cmf.Thinking); th.Opaque != nil || th.Text == "" {
		t.Fatalf("reasoning = %+v: a client's encryptedValue never becomes a provider value", th)
	}
	if want := []wire.SealedValue{{Message: 3, Part: 0, Value: "opaque-provider-blob"}}; !slices.Equal(full.Sealed, want) {
		t.Fatalf("sealed = %+v, want %+v (the handler opens or drops it)", full.Sealed, want)
	}
	if r := full.Messages[5].Content[0].(cmf.ToolResult); r.ToolName != "get_weather" || string(r.Content) != `"18°C, light rain"` {
		t.Fatalf("tool result = %+v %s", r, r.Content)
	}
	res := decode(t, sample(t, "frontend-tool-result"))
	if r := res.Resolutions[0]; r.Kind != agent.ClientOutput || string(r.Output) != `{"confirmed":true}` || r.MessageID != "msg-tool-1" || res.MessageID != "msg-asst-1" {
		t.Fatalf("resolution = %+v", res.Resolutions)
	}
	errRes := decode(t, sample(t, "frontend-tool-error"))
	if r := errRes.Resolutions[0]; r.Kind != agent.ClientError || !strings.Contains(r.ErrorText, "locked") {
		t.Fatalf("error resolution = %+v", r)
	}
	resume := decode(t, sample(t, "interrupt-resume"))
	if r := resume.Resolutions[0]; r.Kind != agent.Approve || r.ToolCallID != "int-tc-approve-1" || r.Signature != "" {
		t.Fatalf("resume = %+v", r)
	}
}

func TestResumePayloads(t *testing.T) {
	cases := []struct {
		entry  string
		kind   agent.ResolutionKind
		edited string
		reason string
	}{
		{`{"interruptId":"c.s","status":"resolved","payload":{"approved":true}}`, agent.Approve, "", ""},
		{`{"interruptId":"c.s","status":"resolved","payload":{"approved":true,"editedArgs":{"path":"/y"}}}`, agent.Approve, `{"path":"/y"}`, ""},
		{`{"interruptId":"c.s","status":"resolved","payload":{"approved":false,"reason":"no"}}`, agent.Deny, "", "no"},
		{`{"interruptId":"c.s","status":"cancelled"}`, agent.Deny, "", ""},
		// Ambiguous payloads deny.
		{`{"interruptId":"c.s","status":"resolved"}`, agent.Deny, "", ""},
		{`{"interruptId":"c.s","status":"resolved","payload":{"approved":"yes"}}`, agent.Deny, "", ""},
		{`{"interruptId":"c.s","status":"resolved","payload":{"approved":1}}`, agent.Deny, "", ""},
		{`{"interruptId":"c.s","status":"resolved","payload":"approve"}`, agent.Deny, "", ""},
		{`{"interruptId":"c.s","status":"resolved","payload":{"approved":true,"editedArgs":"rm -rf"}}`, agent.Approve, "", ""},
	}
	for _, c := range cases {
		var e ResumeEntry
		_ = json.Unmarshal([]byte(c.entry), &e)
		r, err := resumeResolution(e)
		if err != nil || r.Kind != c.kind || string(r.EditedArgs) != c.edited || r.Reason != c.reason || r.ToolCallID != "c" || r.Signature != "s" {
			t.Errorf("%s: %+v %v", c.entry, r, err)
		}
	}
	if _, err := resumeResolution(ResumeEntry{InterruptID: "x", Status: "maybe"}); err == nil {
		t.Error("unknown status accepted")
	}
	if InterruptID("call.1", "sig") != "call.1.sig" || InterruptID("c", "") != "c" {
		t.Error("InterruptID")
	}
	r, _ := resumeResolution(ResumeEntry{InterruptID: "call.1.sig", Status: "cancelled"})
	if r.ToolCallID != "call.1" || r.Signature != "sig" {
		t.Errorf("a tool call id with dots: %+v", r)
	}
}

func TestDecodeErrors(t *testing.T) {
	for name, body := range map[string]string{
		"not JSON":            `{"threadId":`,
		"no threadId":         `{"runId":"r","messages":[]}`,
		"no runId":            `{"threadId":"t","messages":[]}`,
		"no messages":         `{"threadId":"t","runId":"r"}`,
		"null messages":       `{"threadId":"t","runId":"r","messages":null}`,
		"messages not list":   `{"threadId":"t","runId":"r","messages":{}}`,
		"message without id":  `{"threadId":"t","runId":"r","messages":[{"role":"user","content":"hi"}]}`,
		"bad user content":    `{"threadId":"t","runId":"r","messages":[{"id":"u","role":"user","content":7}]}`,
		"tool without call":   `{"threadId":"t","runId":"r","messages":[{"id":"x","role":"tool","content":"hi"}]}`,
		"call without name":   `{"threadId":"t","runId":"r","messages":[{"id":"a","role":"assistant","toolCalls":[{"id":"c","type":"function","function":{"arguments":"{}"}}]}]}`,
		"media without src":   `{"threadId":"t","runId":"r","messages":[{"id":"u","role":"user","content":[{"type":"image"}]}]}`,
		"bad source type":     `{"threadId":"t","runId":"r","messages":[{"id":"u","role":"user","content":[{"type":"image","source":{"type":"s3","value":"x"}}]}]}`,
		"binary without type": `{"threadId":"t","runId":"r","messages":[{"id":"u","role":"user","content":[{"type":"binary","data":"AAAA"}]}]}`,
		"empty binary":        `{"threadId":"t","runId":"r","messages":[{"id":"u","role":"user","content":[{"type":"binary","mimeType":"image/png"}]}]}`,
		"bad resume status":   `{"threadId":"t","runId":"r","messages":[],"resume":[{"interruptId":"i","status":"later"}]}`,
		"resume without id":   `{"threadId":"t","runId":"r","messages":[],"resume":[{"status":"cancelled"}]}`,
		"tool without name":   `{"threadId":"t","runId":"r","messages":[],"tools":[{"description":"x"}]}`,
		"state wrong type":    `{"threadId":7,"runId":"r","messages":[]}`,
	} {
		_, err := New().Decode(httptest.NewRequest("POST", "/", nil), []byte(body))
		var e *wire.Error
		if !errors.As(err, &e) || e.Status != 400 {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	// Tolerated: unknown fields, unknown roles and parts, activity messages, null state.
	turn := decode(t, []byte(`{"threadId":"t","runId":"r","state":null,"future":1,"messages":[
		{"id":"a","role":"activity","activityType":"x","content":{}},
		{"id":"w","role":"wizard","content":"?"},
		{"id":"u","role":"user","content":[{"type":"text","text":"hi"},{"type":"hologram"}],"extra":true}]}`))
	if shape(turn) != "user:text" || turn.State != nil {
		t.Fatalf("tolerant decode = %s %s", shape(turn), turn.State)
	}
}

// FuzzDecode feeds arbitrary bodies to the RunAgentInput decoder: no
// panic, only 400s, and valid CMF once sanitized.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "samples", "*.json"))
	for _, file := range files {
		b, _ := os.ReadFile(file)
		f.Add(b)
	}
	f.Add([]byte(`{"threadId":"t","runId":"r","messages":[{"id":"r1","role":"reasoning","content":"r","encryptedValue":"AQ"},{"id":"a","role":"assistant","content":"","encryptedValue":"AQ","toolCalls":[{"id":"c1","type":"function","function":{"name":"x","arguments":"{}"},"encryptedValue":"AQ"}]},{"id":"u","role":"user","content":"a","encryptedValue":"AQ"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		turn, err := New().Decode(httptest.NewRequest("POST", "/", nil), body)
		if err != nil {
			var e *wire.Error
			if !errors.As(err, &e) || e.Status != 400 {
				t.Fatalf("decode failed without a 400: %v", err)
			}
			return
		}
		checkSealed(t, turn)
		ids := []string{turn.ChatID, turn.RunID, turn.MessageID}
		for _, r := range turn.Resolutions {
			ids = append(ids, r.ToolCallID)
		}
		for _, m := range turn.Messages {
			ids = append(ids, m.ID())
			for _, p := range m.Content {
				switch p := p.(type) {
				case cmf.ToolCall:
					ids = append(ids, p.ToolCallID)
				case cmf.ToolResult:
					ids = append(ids, p.ToolCallID)
				}
			}
		}
		for _, id := range ids {
			if err := wire.CheckID("an id", id); err != nil {
				t.Fatalf("%q decoded: %v", id, err)
			}
		}
		// What reaches the agent and the store has been through
		// Sanitize, which drops the parts that are not valid CMF.
		msgs, _ := sanitize.Sanitize(turn.Messages, nil, sanitize.Policy{AllowedSchemes: []string{"http", "https"}})
		for i := range msgs {
			if err := msgs[i].Validate(); err != nil {
				t.Fatalf("message %d is invalid CMF after Sanitize: %v", i, err)
			}
		}
	})
}

// A snapshot shows tool errors as the live stream did: only the client's
// own tool messages carry "error".
func TestDumpErrorsLikeTheStream(t *testing.T) {
	call := func(id string) cmf.Message {
		m := cmf.Message{Role: cmf.RoleAssistant, Content: []cmf.Part{cmf.ToolCall{ToolCallID: id, Name: "t", Arguments: json.RawMessage(`{}`)}}}
		m.SetID("a-" + id)
		return m
	}
	result := func(id string, client bool) cmf.Message {
		m := cmf.Message{Role: cmf.RoleTool, Content: []cmf.Part{cmf.ToolResult{ToolCallID: id, ToolName: "t", IsError: true, Content: json.RawMessage(`"boom"`)}}}
		m.SetID("r-" + id)
		m.SetCallRecord(id, cmf.CallRecord{Client: client})
		return m
	}
	out := Dump([]cmf.Message{call("server"), result("server", false), call("client"), result("client", true)})
	if out[1].Error != "" || out[3].Error != "boom" || string(out[1].Content) != `"boom"` {
		t.Fatalf("dump = %+v", out)
	}
}

// Every id an input carries is checked (wire.CheckID): one byte over
// the bound, or a control or bidi character, in any of them is a 400 that
// names it; at the bound it decodes. An interrupt id is a tool call id and
// a signature: each half is checked.
func TestIDsAreChecked(t *testing.T) {
	input := func(thread, run, rest string) string {
		return `{"threadId":"` + thread + `","runId":"` + run + `","messages":[{"id":"u1","role":"user","content":"hi"}` + rest
	}
	for _, tc := range []struct {
		what string
		body func(id string) string
	}{
		{`"threadId"`, func(id string) string { return input(id, "r", `]}`) }},
		{`"runId"`, func(id string) string { return input("t", id, `]}`) }},
		{`"parentRunId"`, func(id string) string { return input("t", "r", `],"parentRunId":"`+id+`"}`) }},
		{"a message id", func(id string) string { return input("t", "r", `,{"id":"`+id+`","role":"user","content":"hi"}]}`) }},
		{"a tool call id", func(id string) string {
			return input("t", "r", `,{"id":"a1","role":"assistant","toolCalls":[{"id":"`+id+`","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`)
		}},
		{"a tool call id", func(id string) string {
			return input("t", "r", `,{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"id":"r1","role":"tool","toolCallId":"`+id+`","content":"x"}]}`)
		}},
		{"an interrupt id", func(id string) string {
			return input("t", "r", `],"resume":[{"interruptId":"`+id+`.sig","status":"cancelled"}]}`)
		}},
		{"an interrupt id", func(id string) string {
			return input("t", "r", `],"resume":[{"interruptId":"call.`+id+`","status":"cancelled"}]}`)
		}},
	} {
		at := strings.Repeat("i", wire.MaxIDBytes)
		if _, err := New().Decode(httptest.NewRequest("POST", "/", nil), []byte(tc.body(at))); err != nil {
			t.Errorf("%s at the bound: %v", tc.what, err)
		}
		_, err := New().Decode(httptest.NewRequest("POST", "/", nil), []byte(tc.body(at+"i")))
		var e *wire.Error
		if !errors.As(err, &e) || e.Status != 400 || e.Message != tc.what+" is longer than 256 bytes" {
			t.Errorf("%s over the bound: %v", tc.what, err)
		}
		for _, bad := range []string{`i\u001b[2J`, `i\u0000`, `i\u007f`, `i\u0085`, `i\u202e`} {
			_, err := New().Decode(httptest.NewRequest("POST", "/", nil), []byte(tc.body(bad)))
			var e *wire.Error
			if !errors.As(err, &e) || e.Status != 400 || e.Message != tc.what+" must be printable UTF-8, without control or bidirectional formatting characters" {
				t.Errorf("%s %s: %v", tc.what, bad, err)
			}
		}
	}
}

// A run that cancels every open interrupt and ends with a new user
// message is a new turn (the user moved on); a resume that answers one,
// or cancels without a new message, continues the paused run.
func TestDecodeNewMessageCancellingInterrupts(t *testing.T) {
	const thread = `"threadId":"t","runId":"r","messages":[{"id":"u1","role":"user","content":"delete /x"},{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"delete_file","arguments":"{}"}}]}`
	for body, want := range map[string]wire.Intent{
		`{` + thread + `,{"id":"u2","role":"user","content":"no"}],"resume":[{"interruptId":"c1.s","status":"cancelled"}]}`:                            wire.Submit,
		`{` + thread + `,{"id":"u2","role":"user","content":"no"}],"resume":[{"interruptId":"c1.s","status":"resolved","payload":{"approved":true}}]}`: wire.Continue,
		`{` + thread + `],"resume":[{"interruptId":"c1.s","status":"cancelled"}]}`:                                                                     wire.Continue,
	} {
		turn := decode(t, []byte(body))
		if turn.Intent != want || (want == wire.Submit) != (len(turn.Resolutions) == 0 && !turn.ResumeRequired) {
			t.Errorf("%s: intent %v, %d resolutions, resume required %v", body, turn.Intent, len(turn.Resolutions), turn.ResumeRequired)
		}
	}
}

// checkSealed fails unless each sealed value a turn names is with a part
// of an assistant message that can carry one.
func checkSealed(t *testing.T, turn *wire.Turn) {
	t.Helper()
	for _, sv := range turn.Sealed {
		if sv.Message < 0 || sv.Message >= len(turn.Messages) || turn.Messages[sv.Message].Role != cmf.RoleAssistant ||
			sv.Part < 0 || sv.Part >= len(turn.Messages[sv.Message].Content) || sv.Value == "" {
			t.Fatalf("sealed value %+v names no assistant part", sv)
		}
		switch turn.Messages[sv.Message].Content[sv.Part].(type) {
		case cmf.Text, cmf.Thinking, cmf.ToolCall:
		default:
			t.Fatalf("sealed value %+v is with a %T", sv, turn.Messages[sv.Message].Content[sv.Part])
		}
	}
}
