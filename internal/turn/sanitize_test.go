package turn

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/wire"
)

func m(role cmf.Role, parts ...cmf.Part) cmf.Message {
	return cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: role, Content: parts}
}

func media(kind string, u string) cmf.Part {
	src := cmf.MediaSource{Type: cmf.SourceURL, Data: u}
	switch kind {
	case "image":
		return cmf.Image{MediaSource: src}
	case "audio":
		return cmf.Audio{MediaSource: src}
	case "video":
		return cmf.Video{MediaSource: src}
	}
	return cmf.Document{MediaSource: src}
}

var policy = Policy{AllowedSchemes: []string{"http", "https"}}

func TestSanitizeURLSchemes(t *testing.T) {
	in := []cmf.Message{m(cmf.RoleUser,
		cmf.Text{Text: "see"},
		media("image", "https://example.com/a.png"),
		media("image", "HTTP://example.com/b.png"),
		media("image", "s3://bucket/key"),
		media("audio", "gs://bucket/a.wav"),
		media("video", "file:///etc/shadow"),
		media("document", "ftp://x/y.pdf"),
		media("document", "relative/path.pdf"),
		media("image", "data:image/png,abc"),
		cmf.Image{MediaSource: cmf.MediaSource{Type: cmf.SourceBase64, Data: "AAAA"}},
	)}
	out, f := Sanitize(in, nil, policy)
	if got := len(out[0].Content); got != 4 {
		t.Fatalf("kept %d parts: %+v", got, out[0].Content)
	}
	if f.URLs != 6 || !reflect.DeepEqual(f.Schemes, []string{"", "data", "file", "ftp", "gs", "s3"}) {
		t.Fatalf("findings = %+v", f)
	}
	if len(in[0].Content) != 10 {
		t.Fatal("Sanitize changed its input")
	}
}

func TestSanitizeSystemMessages(t *testing.T) {
	in := []cmf.Message{m(cmf.RoleSystem, cmf.Text{Text: "x"}), m(cmf.RoleDeveloper, cmf.Text{Text: "y"}), m(cmf.RoleUser, cmf.Text{Text: "hi"})}
	out, f := Sanitize(in, nil, policy)
	if len(out) != 1 || out[0].Role != cmf.RoleUser || f.SystemMessages != 2 {
		t.Fatalf("out = %+v, findings %+v", out, f)
	}
	trusting := policy
	trusting.TrustSystemMessages = true
	if out, _ := Sanitize(in, nil, trusting); len(out) != 3 {
		t.Fatal("trusted system messages were dropped")
	}
}

func call(id string) cmf.ToolCall {
	return cmf.ToolCall{ToolCallID: id, Name: "t", Arguments: json.RawMessage(`{}`)}
}

func result(id string) cmf.ToolResult {
	return cmf.ToolResult{ToolCallID: id, ToolName: "t", Content: json.RawMessage(`1`)}
}

func TestSanitizeDanglingToolCalls(t *testing.T) {
	in := []cmf.Message{
		m(cmf.RoleUser, cmf.Text{Text: "a"}),
		m(cmf.RoleAssistant, cmf.Text{Text: "calling"}, call("answered"), call("mid")), // "mid" never answered
		m(cmf.RoleTool, result("answered")),
		m(cmf.RoleTool, result("ghost")), // a result for a call that is not there
		m(cmf.RoleUser, cmf.Text{Text: "b"}),
		m(cmf.RoleAssistant, call("tail"), call("resolved")),
	}
	out, f := Sanitize(in, map[string]bool{"resolved": true}, policy)
	if f.DanglingCalls != 2 || f.OrphanResults != 1 || f.EmptyMessages != 1 {
		t.Fatalf("findings = %+v", f)
	}
	want := [][]string{{"text"}, {"text", "tool_call"}, {"tool_result"}, {"text"}, {"tool_call"}}
	if len(out) != len(want) {
		t.Fatalf("out = %+v", out)
	}
	for i, w := range want {
		var kinds []string
		for _, p := range out[i].Content {
			kinds = append(kinds, string(p.ContentType()))
		}
		if !reflect.DeepEqual(kinds, w) {
			t.Errorf("message %d = %v, want %v", i, kinds, w)
		}
	}
	if out[4].Content[0].(cmf.ToolCall).ToolCallID != "resolved" {
		t.Fatal("the resolved call was dropped")
	}
}

func TestSanitizeSignatures(t *testing.T) {
	forged := &cmf.Opaque{Provider: "anthropic", Model: "claude-x", Data: "forged"}
	in := []cmf.Message{
		m(cmf.RoleAssistant, cmf.Thinking{Text: "t", Opaque: forged}, cmf.RedactedThinking{Opaque: *forged}, cmf.Text{Text: "x", Opaque: forged},
			cmf.ToolCall{ToolCallID: "c", Name: "n", Arguments: json.RawMessage(`{}`), Opaque: forged}),
		m(cmf.RoleTool, cmf.ToolResult{ToolCallID: "c", ToolName: "n", Content: json.RawMessage(`1`)}),
	}
	out, f := Sanitize(in, nil, policy)
	if f.Signatures != 4 || len(out[0].Content) != 3 {
		t.Fatalf("out = %+v, findings %+v", out, f)
	}
	if th := out[0].Content[0].(cmf.Thinking); th.Opaque != nil || th.Text != "t" {
		t.Fatalf("thinking = %+v", th)
	}
	if tx := out[0].Content[1].(cmf.Text); tx.Opaque != nil || tx.Text != "x" {
		t.Fatalf("text = %+v", tx)
	}
	if tc := out[0].Content[2].(cmf.ToolCall); tc.Opaque != nil || tc.ToolCallID != "c" {
		t.Fatalf("call = %+v", tc)
	}
	if in[0].Content[0].(cmf.Thinking).Opaque != forged {
		t.Fatal("Sanitize changed its input")
	}
}

func TestSanitizeEmptyMessages(t *testing.T) {
	in := []cmf.Message{m(cmf.RoleUser), m(cmf.RoleUser, media("image", "s3://x")), m(cmf.RoleUser, cmf.Text{Text: "ok"})}
	out, f := Sanitize(in, nil, policy)
	if len(out) != 1 || f.EmptyMessages != 2 || !f.Any() {
		t.Fatalf("out = %+v, findings %+v", out, f)
	}
	var none Findings
	if none.Any() {
		t.Fatal("empty findings report drops")
	}
}

func TestIntentStrings(t *testing.T) {
	for i, want := range map[wire.Intent]string{wire.Submit: "submit", wire.Continue: "continue", wire.Regenerate: "regenerate", 0: "unknown"} {
		if i.String() != want {
			t.Errorf("%d.String() = %s", i, i.String())
		}
	}
}

// Each kind of drop is one log line per request, with its count; nothing
// is logged when nothing was dropped.
func TestFindingsLog(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	(&Findings{}).Log(log)
	if buf.Len() != 0 {
		t.Fatalf("logged without findings: %s", buf.String())
	}
	f := Findings{URLs: 2, Schemes: []string{"file", "s3"}, SystemMessages: 1, DanglingCalls: 3, OrphanResults: 4, Signatures: 5, EmptyMessages: 6}
	f.Log(log, "chat", "c1")
	want := []string{
		`msg="dropped client media with disallowed URL schemes" chat=c1 count=2 schemes="[file s3]"`,
		`msg="dropped client system/developer messages" chat=c1 count=1`,
		`msg="dropped client tool calls without results" chat=c1 count=3`,
		`msg="dropped client tool results without calls" chat=c1 count=4`,
		`msg="dropped client reasoning signatures" chat=c1 count=5`,
		`msg="dropped client messages left empty" chat=c1 count=6`,
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
	for i, w := range want {
		if !strings.HasSuffix(lines[i], w) {
			t.Errorf("line %d: %s\nwant …%s", i, lines[i], w)
		}
	}
}

// A call is answered only by a result that is kept: one whose only
// result is invalid is dangling and goes too, so the model never sees a
// call without its result.
func TestSanitizeCallWhoseOnlyResultIsInvalid(t *testing.T) {
	bad := cmf.ToolResult{ToolCallID: "c", ToolName: "", Content: json.RawMessage(`1`)} // no tool name
	in := []cmf.Message{m(cmf.RoleUser, cmf.Text{Text: "a"}), m(cmf.RoleAssistant, call("c")), m(cmf.RoleTool, bad)}
	out, f := Sanitize(in, nil, policy)
	if len(out) != 1 || f.InvalidParts != 1 || f.DanglingCalls != 1 {
		t.Fatalf("out = %+v, findings %+v", out, f)
	}
}

// A second result for one call is dropped: the first answers it.
func TestSanitizeSecondResult(t *testing.T) {
	second := cmf.ToolResult{ToolCallID: "c", ToolName: "t", Content: json.RawMessage(`2`)}
	in := []cmf.Message{m(cmf.RoleUser, cmf.Text{Text: "a"}), m(cmf.RoleAssistant, call("c")), m(cmf.RoleTool, result("c"), second)}
	out, f := Sanitize(in, nil, policy)
	if f.DuplicateResults != 1 || len(out) != 3 || len(out[2].Content) != 1 || string(out[2].Content[0].(cmf.ToolResult).Content) != "1" {
		t.Fatalf("out = %+v, findings %+v", out, f)
	}
}

// urn: names are not locations: kept whatever the allowlist, since
// nothing fetches them.
func TestSanitizeKeepsURNs(t *testing.T) {
	ref := cmf.ResourceRef{ResourceRequestID: "r", URI: "urn:isbn:0451450523", ResourceType: cmf.ResourceURI}
	out, f := Sanitize([]cmf.Message{m(cmf.RoleUser, cmf.Text{Text: "a"}, ref)}, nil, policy)
	if len(out[0].Content) != 2 || f.URLs != 0 {
		t.Fatalf("out = %+v, findings %+v", out, f)
	}
}

// With PublicHostsOnly, carrier-grade NAT addresses (100.64.0.0/10) are
// private too.
func TestSanitizeCarrierGradeNATIsPrivate(t *testing.T) {
	public := policy
	public.PublicHostsOnly = true
	in := []cmf.Message{m(cmf.RoleUser, cmf.Text{Text: "a"}, media("image", "http://100.64.0.1/x.png"), media("image", "http://100.127.255.254/y.png"),
		media("image", "http://100.128.0.1/z.png"))}
	out, _ := Sanitize(in, nil, public)
	if len(out[0].Content) != 2 {
		t.Fatalf("kept %+v", out[0].Content)
	}
}
