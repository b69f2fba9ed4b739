package vercelai

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	sanitize "github.com/agentui/agentui/internal/turn"
	"github.com/agentui/agentui/internal/wire"
)

func decodeFile(t *testing.T, name string) *wire.Turn {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "samples", name))
	if err != nil {
		t.Fatal(err)
	}
	turn, err := New().Decode(httptest.NewRequest("POST", "/", nil), b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for i := range turn.Messages {
		if err := turn.Messages[i].Validate(); err != nil {
			t.Fatalf("%s: message %d is invalid CMF: %v", name, i, err)
		}
	}
	return turn
}

func kinds(m cmf.Message) string {
	var k []string
	for _, p := range m.Content {
		k = append(k, string(p.ContentType()))
	}
	return string(m.Role) + ":" + strings.Join(k, ",")
}

func shape(turn *wire.Turn) string {
	var s []string
	for _, m := range turn.Messages {
		s = append(s, kinds(m))
	}
	return strings.Join(s, " ")
}

// Every request body recorded from the real Chat class decodes.
func TestDecodeRecordedRequests(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "samples", "*.json"))
	n := 0
	for _, f := range files {
		name := filepath.Base(f)
		if strings.Contains(name, "final-messages") {
			continue // message lists, not requests
		}
		n++
		turn := decodeFile(t, name)
		if turn.ChatID == "" || len(turn.Messages) == 0 || turn.RunID == "" {
			t.Errorf("%s: %+v", name, turn)
		}
	}
	if n < 9 {
		t.Fatalf("only %d samples", n)
	}
}

func TestDecodeFirstMessage(t *testing.T) {
	turn := decodeFile(t, "first-message.json")
	if turn.ChatID != "chat-approval" || turn.Intent != wire.Submit || shape(turn) != "user:text" ||
		turn.Messages[0].ID() != "cmsg-1" || turn.Messages[0].Text() != "What is the weather in Berlin? Then delete /tmp/x.txt." {
		t.Fatalf("%+v / %s", turn, shape(turn))
	}
}

func TestDecodeApprovalResponse(t *testing.T) {
	turn := decodeFile(t, "approval-response.json")
	if turn.Intent != wire.Continue || turn.MessageID != "id-1" {
		t.Fatalf("intent %v, message %q", turn.Intent, turn.MessageID)
	}
	// One step: reasoning, text, two calls; the weather result in a tool message.
	if got := shape(turn); got != "user:text assistant:thinking,text,tool_call,tool_call tool:tool_result" {
		t.Fatalf("shape = %s", got)
	}
	if turn.Messages[1].ID() != "id-1" {
		t.Fatal("the assistant message lost its id")
	}
	if rec := turn.Messages[1].CallRecord("call_delete_1"); rec.ApprovalID != "id-3" {
		t.Fatalf("approval id not recorded: %+v", rec)
	}
	var approve *wire.Resolution
	for i := range turn.Resolutions {
		if turn.Resolutions[i].ToolCallID == "call_delete_1" {
			approve = &turn.Resolutions[i]
		}
	}
	if approve == nil || approve.Kind != agent.Approve || approve.ApprovalID != "id-3" || approve.Signature != "" || !approve.NeedsSignature() {
		t.Fatalf("resolutions = %+v", turn.Resolutions)
	}
}

func TestDecodeDenial(t *testing.T) {
	turn := decodeFile(t, "approval-denied-response.json")
	for _, r := range turn.Resolutions {
		if r.ToolCallID == "call_delete_1" {
			if r.Kind != agent.Deny || r.Reason != "user said no" {
				t.Fatalf("resolution = %+v", r)
			}
			return
		}
	}
	t.Fatal("no denial")
}

func TestDecodeRegenerate(t *testing.T) {
	turn := decodeFile(t, "regenerate.json")
	if turn.Intent != wire.Regenerate || turn.MessageID != "id-1" || shape(turn) != "user:text" {
		t.Fatalf("%+v", turn)
	}
}

func TestDecodeClientToolOutput(t *testing.T) {
	turn := decodeFile(t, "client-tool-output.json")
	if len(turn.Resolutions) != 1 {
		t.Fatalf("resolutions = %+v", turn.Resolutions)
	}
	r := turn.Resolutions[0]
	if r.Kind != agent.ClientOutput || r.ToolCallID != "call_confirm_1" || string(r.Output) != `"yes, go ahead"` || r.NeedsSignature() {
		t.Fatalf("resolution = %+v", r)
	}
}

// Every part type and tool state decodes to the CMF it stands for.
func TestDecodeAllPartsAndStates(t *testing.T) {
	body := `{"id":"c","messages":[
	  {"id":"s","role":"system","parts":[{"type":"text","text":"sys"}]},
	  {"id":"u","role":"user","parts":[
	    {"type":"text","text":"look"},
	    {"type":"file","mediaType":"image/png","url":"data:image/png;base64,iVBORw0KGgo=","filename":"a.png"},
	    {"type":"file","mediaType":"audio/wav","url":"https://x/a.wav"},
	    {"type":"file","mediaType":"video/mp4","url":"https://x/a.mp4"},
	    {"type":"file","mediaType":"application/pdf","url":"https://x/a.pdf","filename":"spec.pdf"},
	    {"type":"data-note","id":"n1","data":{"x":1}},
	    {"type":"hologram","text":"unknown parts are skipped"}
	  ]},
	  {"id":"a","role":"assistant","parts":[
	    {"type":"step-start"},
	    {"type":"reasoning","text":"hm","state":"done","providerMetadata":{"x":{"signature":"s"}}},
	    {"type":"source-url","sourceId":"s1","url":"https://src","title":"Src"},
	    {"type":"source-document","sourceId":"s2","mediaType":"application/pdf","title":"Doc","filename":"d.pdf"},
	    {"type":"tool-t","toolCallId":"streaming","state":"input-streaming","input":{"pa"}},
	    {"type":"tool-t","toolCallId":"available","state":"input-available","input":{"a":1}},
	    {"type":"tool-t","toolCallId":"requested","state":"approval-requested","input":{},"approval":{"id":"ap1"}},
	    {"type":"tool-t","toolCallId":"responded","state":"approval-responded","input":{},"approval":{"id":"ap2","approved":true,"signature":"sig"}},
	    {"type":"step-start"},
	    {"type":"text","text":"step two"},
	    {"type":"tool-t","toolCallId":"ok","state":"output-available","input":{},"output":{"r":1}},
	    {"type":"tool-t","toolCallId":"err","state":"output-error","errorText":"boom"},
	    {"type":"dynamic-tool","toolName":"dyn","toolCallId":"denied","state":"output-denied","input":{},"approval":{"id":"ap3","approved":false,"reason":"no"}},
	    {"type":"tool-t","toolCallId":"future","state":"output-streaming","input":{}}
	  ]}
	]}`
	body = strings.ReplaceAll(body, `{"pa"}`, `"{\"pa"`)
	turn, err := New().Decode(httptest.NewRequest("POST", "/", nil), []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := "system:text user:text,image,audio,video,document assistant:thinking,resource_ref,resource,tool_call,tool_call,tool_call " +
		"assistant:text,tool_call,tool_call,tool_call tool:tool_result tool:tool_result tool:tool_result"
	if got := shape(turn); got != want {
		t.Fatalf("shape =\n%s\nwant\n%s", got, want)
	}
	user := turn.Messages[1]
	if img := user.Content[1].(cmf.Image); img.Type != cmf.SourceBase64 || img.Data != "iVBORw0KGgo=" || img.MediaType != "image/png" {
		t.Fatalf("data URL image = %+v", img)
	}
	if doc := user.Content[4].(cmf.Document); doc.Title != "spec.pdf" || doc.Type != cmf.SourceURL {
		t.Fatalf("document = %+v", doc)
	}
	if recs := user.Data(); len(recs) != 1 || recs[0].Name != "note" || recs[0].Index != 5 {
		t.Fatalf("data records = %+v", recs)
	}
	if th := turn.Messages[2].Content[0].(cmf.Thinking); th.Opaque != nil {
		t.Fatal("a client signature was kept")
	}
	if turn.Messages[3].ID() != "a-step2" {
		t.Fatalf("step ids: %s", turn.Messages[3].ID())
	}
	results := turn.Messages[4:]
	if r := results[1].Content[0].(cmf.ToolResult); !r.IsError || string(r.Content) != `"boom"` {
		t.Fatalf("error result = %+v", r)
	}
	if r := results[2].Content[0].(cmf.ToolResult); !r.IsError || r.ToolName != "dyn" || !strings.Contains(string(r.Content), "Reason: no") {
		t.Fatalf("denied result = %+v", r)
	}
	if d := results[2].CallRecord("denied").Decision; d == nil || d.Approved || d.Reason != "no" {
		t.Fatalf("denial record = %+v", d)
	}
	// Only the last step's answers are resolutions.
	var kindsOf []string
	for _, r := range turn.Resolutions {
		kindsOf = append(kindsOf, r.ToolCallID+":"+r.Kind.String())
	}
	if strings.Join(kindsOf, " ") != "ok:client output err:client error" {
		t.Fatalf("resolutions = %v", kindsOf)
	}
}

func TestDecodeErrors(t *testing.T) {
	for name, body := range map[string]string{
		"approved as string":  `{"id":"c","messages":[{"id":"a","role":"assistant","parts":[{"type":"tool-t","toolCallId":"x","state":"approval-responded","input":{},"approval":{"id":"a","approved":"yes"}}]}]}`,
		"parts not a list":    `{"id":"c","messages":[{"id":"u","role":"user","parts":{}}]}`,
		"messages not a list": `{"id":"c","messages":"hi"}`,
		"empty id":            `{"id":"","messages":[{"id":"u","role":"user","parts":[]}]}`,
	} {
		_, err := New().Decode(httptest.NewRequest("POST", "/", nil), []byte(body))
		var e *wire.Error
		if err == nil || !asError(err, &e) || e.Status != 400 {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func asError(err error, target **wire.Error) bool {
	e, ok := err.(*wire.Error)
	*target = e
	return ok
}

// FuzzDecode feeds arbitrary bodies to the decoder: it must never panic,
// must fail only with a 400, and what it decodes must be valid CMF.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "samples", "*.json"))
	for _, file := range files {
		b, _ := os.ReadFile(file)
		f.Add(b)
	}
	f.Add([]byte(`{"id":"c","messages":[{"id":"u","role":"user","parts":[{"type":"file","url":"data:,x","mediaType":"image/png"}]}]}`))
	f.Add([]byte(`{"id":"c","messages":[{"id":"a","role":"assistant","parts":[{"type":"step-start"},{"type":"reasoning","text":"r","providerMetadata":{"agentui":{"sealed":"AQ"}}},{"type":"text","text":"t","providerMetadata":{"agentui":{"sealed":7}}},{"type":"tool-x","toolCallId":"c1","state":"output-available","input":{},"output":1,"callProviderMetadata":{"agentui":{"sealed":"AQ"}}},{"type":"step-start"},{"type":"text","text":"","providerMetadata":{"agentui":{"sealed":"AQ"}}}]},{"id":"u","role":"user","parts":[{"type":"text","text":"a","providerMetadata":{"agentui":{"sealed":"AQ"}}}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		turn, err := New().Decode(httptest.NewRequest("POST", "/", nil), body)
		if err != nil {
			var e *wire.Error
			if !asError(err, &e) || e.Status != 400 {
				t.Fatalf("decode failed without a 400: %v", err)
			}
			return
		}
		checkSealed(t, turn)
		ids := []string{turn.ChatID, turn.MessageID, turn.ParentID}
		for _, r := range turn.Resolutions {
			ids = append(ids, r.ToolCallID, r.ApprovalID)
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
			if _, err := json.Marshal(msgs[i]); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// Tolerant where the SDK evolves: unknown part types and fields are
// skipped, and the skipped parts are named in the turn for the handler's
// debug log.
func TestDecodeSkipsUnknownParts(t *testing.T) {
	body := `{"id":"c","futureField":1,"messages":[{"id":"u","role":"user","newField":true,"parts":[` +
		`{"type":"hologram","beam":1},{"type":"text","text":"hi","extra":"x"}]}]}`
	turn, err := New().Decode(httptest.NewRequest("POST", "/", nil), []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(turn.Messages) != 1 || turn.Messages[0].Text() != "hi" || len(turn.Messages[0].Content) != 1 {
		t.Fatalf("decoded %+v", turn.Messages)
	}
	if len(turn.Skipped) != 1 || turn.Skipped[0] != `an unknown UI message part "hologram"` {
		t.Fatalf("skipped %q", turn.Skipped)
	}
}

// An AI SDK 4 body ({role, content}, no parts) gets a 400 that says so,
// not a misleading "no content left". A message that has both is SDK 5.
func TestDecodeSDK4Body(t *testing.T) {
	_, err := New().Decode(httptest.NewRequest("POST", "/", nil), []byte(`{"id":"c","messages":[{"id":"m","role":"user","content":"hi"}]}`))
	var e *wire.Error
	if !errors.As(err, &e) || e.Status != http.StatusBadRequest || !strings.Contains(e.Message, "AI SDK 4 message format") {
		t.Fatalf("SDK 4 body: %v", err)
	}
	if _, err := New().Decode(httptest.NewRequest("POST", "/", nil), []byte(`{"id":"c","messages":[{"id":"m","role":"user","content":"hi","parts":[{"type":"text","text":"hi"}]}]}`)); err != nil {
		t.Fatalf("a message with parts: %v", err)
	}
}

// Every id a request carries is checked (wire.CheckID): one byte
// over the bound, or a control or bidi character, in any of them is a 400
// that names it; at the bound it decodes. Decode and DecodeTail alike.
func TestIDsAreChecked(t *testing.T) {
	user := func(id string) string {
		return `{"id":"` + id + `","role":"user","parts":[{"type":"text","text":"hi"}]}`
	}
	tool := func(callID, approvalID string) string {
		return `{"id":"a1","role":"assistant","parts":[{"type":"tool-t","toolCallId":"` + callID +
			`","state":"approval-responded","input":{},"approval":{"id":"` + approvalID + `","approved":true}}]}`
	}
	for _, tc := range []struct {
		what string
		body func(id string) string
	}{
		{`chat "id"`, func(id string) string { return `{"id":"` + id + `","messages":[` + user("u1") + `]}` }},
		{"a message id", func(id string) string { return `{"id":"c","messages":[` + user(id) + `]}` }},
		{"a message id", func(id string) string { return `{"id":"c","messages":[` + user(id) + `,` + user("u2") + `]}` }},
		{"a message id", func(id string) string { return `{"id":"c","message":` + user(id) + `}` }},
		{`"messageId"`, func(id string) string {
			return `{"id":"c","trigger":"regenerate-message","messageId":"` + id + `","messages":[` + user("u1") + `]}`
		}},
		{"a tool call id", func(id string) string { return `{"id":"c","messages":[` + user("u1") + `,` + tool(id, "p1") + `]}` }},
		{"an approval id", func(id string) string { return `{"id":"c","messages":[` + user("u1") + `,` + tool("t1", id) + `]}` }},
		{"a part id", func(id string) string {
			return `{"id":"c","messages":[{"id":"u1","role":"user","parts":[{"type":"data-x","id":"` + id + `","data":1}]}]}`
		}},
		{"a source id", func(id string) string {
			return `{"id":"c","messages":[{"id":"u1","role":"user","parts":[{"type":"source-url","sourceId":"` + id + `","url":"https://a.example"}]}]}`
		}},
	} {
		for _, decode := range []func(*http.Request, []byte) (*wire.Turn, error){New().Decode, New().DecodeTail} {
			at := strings.Repeat("i", wire.MaxIDBytes)
			if _, err := decode(httptest.NewRequest("POST", "/", nil), []byte(tc.body(at))); err != nil {
				t.Errorf("%s at the bound: %v", tc.what, err)
			}
			_, err := decode(httptest.NewRequest("POST", "/", nil), []byte(tc.body(at+"i")))
			var e *wire.Error
			if !asError(err, &e) || e.Status != http.StatusBadRequest || e.Message != tc.what+" is longer than 256 bytes" {
				t.Errorf("%s over the bound: %v", tc.what, err)
			}
			for _, bad := range []string{`i\u001b[2J`, `i\u0000`, `i\u007f`, `i\u0085`, `i\u202e`} {
				_, err := decode(httptest.NewRequest("POST", "/", nil), []byte(tc.body(bad)))
				var e *wire.Error
				if !asError(err, &e) || e.Status != http.StatusBadRequest || e.Message != tc.what+" must be printable UTF-8, without control or bidirectional formatting characters" {
					t.Errorf("%s %s: %v", tc.what, bad, err)
				}
			}
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
