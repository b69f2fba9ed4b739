package cmf

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

func oneView(t *testing.T, role Role, p Part, caps Capabilities) *View {
	t.Helper()
	m := Message{Role: role, Content: []Part{p}, Extensions: fullExtensions()}
	views, err := m.Views(caps)
	if err != nil || len(views) != 1 {
		t.Fatalf("Views: %v, %d views", err, len(views))
	}
	return views[0]
}

func TestViewsOnePerPart(t *testing.T) {
	var m Message
	if err := json.Unmarshal(mustRead(t, "testdata/message.json"), &m); err != nil {
		t.Fatal(err)
	}
	views, err := m.Views(0)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		kind        ContentType
		name        string
		action      Action
		pre         bool
		uri, prefix string
	}
	want := []row{
		{ContentThinking, "", ActionGenerate, false, "", "The user wants"},
		{ContentText, "", ActionSend, false, "", "Let me look"},
		{ContentToolCall, "execute_sql", ActionExecute, true, "tool://db-server/execute_sql", `{"query"`},
		{ContentToolCall, "send_email", ActionExecute, true, "tool://email-server/send_email", `{"to"`},
	}
	if len(views) != len(want) {
		t.Fatalf("%d views, want %d", len(views), len(want))
	}
	for i, v := range views {
		w := want[i]
		content, _ := v.Content()
		if v.Kind() != w.kind || v.Name() != w.name || v.Action() != w.action || v.IsPre() != w.pre ||
			v.URI() != w.uri || len(content) < len(w.prefix) || content[:len(w.prefix)] != w.prefix || v.Index() != i {
			t.Errorf("view %d = {%s %q %s pre=%v %q %q}, want %+v", i, v.Kind(), v.Name(), v.Action(), v.IsPre(), v.URI(), content, w)
		}
	}
	if _, err := (&Message{Role: RoleUser, Content: []Part{nil}}).Views(0); err == nil {
		t.Fatal("a nil part must make Views fail")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Properties, URI, name, content, MIME type and size for every kind.
func TestViewPropertiesByKind(t *testing.T) {
	type want struct {
		uri, name, mime, content string
		hasContent               bool
		size                     int64
		hasSize                  bool
		props                    map[string]any
		action                   Action
	}
	cases := map[string]want{
		"text":                {content: "Hello, <world> & \"friends\"", hasContent: true, size: 26, hasSize: true, props: map[string]any{}, action: ActionSend},
		"thinking":            {content: "The user wants admin users.", hasContent: true, size: 27, hasSize: true, props: map[string]any{}, action: ActionGenerate},
		"tool_call":           {uri: "tool://db-server/execute_sql", name: "execute_sql", content: `{"query":"SELECT 1","limit":12345678901234567890.5}`, hasContent: true, size: 51, hasSize: true, props: map[string]any{"namespace": "db-server", "tool_id": "call_1"}, action: ActionExecute},
		"tool_result":         {uri: "tool_result://execute_sql", name: "execute_sql", content: `[{"id":1}]`, hasContent: true, size: 10, hasSize: true, props: map[string]any{"is_error": false, "tool_name": "execute_sql"}, action: ActionReceive},
		"tool_result_error":   {uri: "tool_result://send_email", name: "send_email", content: `"smtp down"`, hasContent: true, size: 11, hasSize: true, props: map[string]any{"is_error": true, "tool_name": "send_email"}, action: ActionReceive},
		"resource":            {uri: "file:///srv/report.csv", name: "report", mime: "text/csv", content: "a,b\n1,2\n", hasContent: true, size: 8, hasSize: true, props: map[string]any{"resource_type": "file", "version": "v3", "annotations": map[string]json.RawMessage{"classification": json.RawMessage(`"internal"`)}}, action: ActionRead},
		"resource_blob":       {uri: "blob://x", size: 4, hasSize: true, props: map[string]any{"resource_type": "blob", "version": ""}, action: ActionRead},
		"resource_ref":        {uri: "file:///src/main.go", name: "main.go", props: map[string]any{}, action: ActionRead},
		"prompt_request":      {uri: "prompt://prompts/summarize", name: "summarize", content: `{"style":"brief"}`, hasContent: true, size: 17, hasSize: true, props: map[string]any{"server_id": "prompts"}, action: ActionInvoke},
		"prompt_result":       {uri: "prompt_result://summarize", name: "summarize", content: "Summarize briefly.", hasContent: true, size: 18, hasSize: true, props: map[string]any{"is_error": false, "message_count": 1}, action: ActionReceive},
		"prompt_result_error": {uri: "prompt_result://missing", name: "missing", props: map[string]any{"is_error": true, "message_count": 0}, action: ActionReceive},
		"image_url":           {uri: "https://example.com/cat.png", mime: "image/png", props: map[string]any{}, action: ActionSend},
		"image_base64":        {mime: "image/png", size: 9, hasSize: true, props: map[string]any{}, action: ActionSend},
		"video":               {uri: "https://example.com/v.mp4", mime: "video/mp4", props: map[string]any{}, action: ActionSend},
		"audio":               {mime: "audio/wav", size: 6, hasSize: true, props: map[string]any{}, action: ActionSend},
		"document":            {name: "Spec", mime: "application/pdf", size: 9, hasSize: true, props: map[string]any{}, action: ActionSend},
	}
	for _, s := range samples {
		w, ok := cases[s.name]
		if !ok {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			v := oneView(t, RoleAssistant, s.part, 0)
			content, has := v.Content()
			size, hasSize := v.SizeBytes()
			if v.URI() != w.uri || v.Name() != w.name || v.MimeType() != w.mime || content != w.content ||
				has != w.hasContent || v.HasContent() != w.hasContent || size != w.size || hasSize != w.hasSize || v.Action() != w.action {
				t.Errorf("got uri=%q name=%q mime=%q content=%q(%v) size=%d(%v) action=%s",
					v.URI(), v.Name(), v.MimeType(), content, has, size, hasSize, v.Action())
			}
			if !reflect.DeepEqual(v.Properties(), w.props) {
				t.Errorf("Properties() = %#v, want %#v", v.Properties(), w.props)
			}
			for k, val := range w.props {
				got, ok := v.Property(k)
				if !ok || !reflect.DeepEqual(got, val) {
					t.Errorf("Property(%s) = %v, %v", k, got, ok)
				}
			}
			if v.Part().ContentType() != s.part.ContentType() || v.Role() != RoleAssistant {
				t.Error("Part() or Role() wrong")
			}
		})
	}
	if len(cases) < 16 {
		t.Fatal("table lost rows")
	}
}

// Direction for every kind × role.
func TestViewDirection(t *testing.T) {
	alwaysPre := map[ContentType]bool{ContentToolCall: true, ContentPromptRequest: true, ContentResourceRef: true}
	alwaysPost := map[ContentType]bool{ContentToolResult: true, ContentPromptResult: true, ContentResource: true}
	roles := []Role{RoleSystem, RoleDeveloper, RoleUser, RoleAssistant, RoleTool}
	seen := map[ContentType]bool{}
	for _, s := range samples {
		kind := s.part.ContentType()
		if seen[kind] {
			continue
		}
		seen[kind] = true
		for _, role := range roles {
			v := oneView(t, role, s.part, 0)
			var wantPre bool
			switch {
			case alwaysPre[kind]:
				wantPre = true
			case alwaysPost[kind]:
				wantPre = false
			default: // text, thinking, media: input unless the assistant or a tool produced it
				wantPre = role != RoleAssistant && role != RoleTool
			}
			if v.IsPre() != wantPre || v.IsPost() == wantPre {
				t.Errorf("%s from %s: IsPre=%v IsPost=%v, want pre=%v", kind, role, v.IsPre(), v.IsPost(), wantPre)
			}
		}
	}
	if len(seen) != 13 {
		t.Fatalf("covered %d kinds, want 13", len(seen))
	}
}

// Every part of a tool message is output (post), whatever its kind: a
// tool's text or image is what the tool returned, not input to it.
func TestViewToolMessagePartsArePost(t *testing.T) {
	for _, p := range []Part{Text{Text: "result"}, Thinking{Text: "t"}, Image{MediaSource{Type: SourceURL, Data: "https://x"}}} {
		v := oneView(t, RoleTool, p, 0)
		if v.IsPre() || !v.IsPost() {
			t.Errorf("%s from a tool message is pre", p.ContentType())
		}
	}
}

func TestViewKindPredicates(t *testing.T) {
	for _, s := range samples {
		v := oneView(t, RoleUser, s.part, 0)
		k := s.part.ContentType()
		checks := map[string][2]bool{
			"IsTool":     {v.IsTool(), k == ContentToolCall || k == ContentToolResult},
			"IsPrompt":   {v.IsPrompt(), k == ContentPromptRequest || k == ContentPromptResult},
			"IsResource": {v.IsResource(), k == ContentResource || k == ContentResourceRef},
			"IsText":     {v.IsText(), k == ContentText || k == ContentThinking},
			"IsMedia":    {v.IsMedia(), k == ContentImage || k == ContentVideo || k == ContentAudio || k == ContentDocument},
		}
		for name, c := range checks {
			if c[0] != c[1] {
				t.Errorf("%s.%s = %v", s.name, name, c[0])
			}
		}
	}
}

func TestViewArgs(t *testing.T) {
	v := oneView(t, RoleAssistant, ToolCall{ToolCallID: "c", Name: "rm", Arguments: json.RawMessage(`{"path":"/tmp/x","force":true}`)}, 0)
	if got, ok := v.GetArg("path"); !ok || string(got) != `"/tmp/x"` {
		t.Fatalf("GetArg(path) = %s, %v", got, ok)
	}
	if !v.HasArg("force") || v.HasArg("nope") {
		t.Fatal("HasArg")
	}
	if _, ok := v.GetArg("nope"); ok {
		t.Fatal("GetArg(nope) found something")
	}
	if len(v.Args()) != 2 {
		t.Fatalf("Args() = %v", v.Args())
	}
	if oneView(t, RoleUser, Text{Text: "x"}, 0).Args() != nil {
		t.Fatal("text has no args")
	}
}

func TestViewURIPattern(t *testing.T) {
	v := oneView(t, RoleAssistant, ToolCall{ToolCallID: "c", Name: "delete_file", Namespace: "fs", Arguments: json.RawMessage(`{}`)}, 0)
	cases := map[string]bool{
		"tool://fs/delete_file":   true,
		"tool://*/delete_file":    true,
		"tool://*/delete_*":       true,
		"tool://**":               true,
		"tool://**/delete_file":   true,
		"tool:/**":                true,
		"tool://*":                false, // * stops at "/"
		"tool://fs/delete_fil":    false,
		"tool://fs/delete_file/x": false,
		"tool_result://**":        false,
		"*":                       false,
	}
	for p, want := range cases {
		if got := v.MatchesURIPattern(p); got != want {
			t.Errorf("MatchesURIPattern(%q) = %v, want %v", p, got, want)
		}
	}
	noNS := oneView(t, RoleAssistant, ToolCall{ToolCallID: "c", Name: "x", Arguments: json.RawMessage(`{}`)}, 0)
	if noNS.URI() != "tool:///x" || !noNS.MatchesURIPattern("tool://*/x") {
		t.Fatalf("tool without namespace: URI %q", noNS.URI())
	}
	if oneView(t, RoleUser, Text{Text: "t"}, 0).MatchesURIPattern("**") {
		t.Fatal("a view without a URI matched **")
	}
}

func TestMatchGlob(t *testing.T) {
	cases := []struct {
		p, s string
		want bool
	}{
		{"", "", true},
		{"", "a", false},
		{"a", "a", true},
		{"*", "", true},
		{"*", "abc", true},
		{"*", "a/b", false},
		{"**", "a/b/c", true},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/xb", false},
		{"a/***/b", "a/x/b", true},
		{"file:///**/*.csv", "file:///srv/data/report.csv", true},
		{"file:///**/*.csv", "file:///report.csv", true},
		{"file:///*.csv", "file:///srv/report.csv", false},
		{"a?c", "abc", false},
		{"a?c", "a?c", true},
		{"[ab]", "a", false},
		{"[ab]", "[ab]", true},
		{`a\*`, `a\b`, true},
		{"*a*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
	}
	for _, c := range cases {
		if got := matchGlob(c.p, c.s); got != c.want {
			t.Errorf("matchGlob(%q, %q) = %v, want %v", c.p, c.s, got, c.want)
		}
	}
}

// Only * and ** are wildcards in a URI pattern: any other character,
// a regexp metacharacter included, matches itself, so a pattern written
// for one tool namespace does not match another ("my.ns" is not "myXns").
func TestViewURIPatternMetacharactersAreLiteral(t *testing.T) {
	v := oneView(t, RoleAssistant, ToolCall{ToolCallID: "c", Name: "tool", Namespace: "myXnamespace", Arguments: json.RawMessage(`{}`)}, 0)
	if v.MatchesURIPattern("tool://my.namespace/tool") {
		t.Fatal(`"." matched "X"`)
	}
	for _, meta := range []string{"(", ")", "+", "?", "[", "]", "{", "}", "^", "$", "|", `\`} {
		uri := "tool://ns" + meta + "/tool"
		v := oneView(t, RoleAssistant, ToolCall{ToolCallID: "c", Name: "tool", Namespace: "ns" + meta, Arguments: json.RawMessage(`{}`)}, 0)
		if !v.MatchesURIPattern(uri) {
			t.Errorf("%q does not match itself", uri)
		}
		if v.MatchesURIPattern("tool://ns" + meta + meta + "/tool") {
			t.Errorf("metacharacter %q acted as a quantifier", meta)
		}
	}
}

// Each accessor returns its value only with its capability.
func TestViewCapabilityGating(t *testing.T) {
	part := ToolCall{ToolCallID: "c", Name: "execute_sql", Arguments: json.RawMessage(`{}`)}
	none := oneView(t, RoleAssistant, part, 0)
	all := oneView(t, RoleAssistant, part, CapAll)

	// Base tier: always visible.
	if none.Environment() != "production" || none.RequestID() != "req-1" {
		t.Error("base accessors must not need capabilities")
	}
	gated := []struct {
		name string
		cap  Capabilities
		get  func(v *View) any
		zero any
	}{
		{"Subject", CapReadSubject, func(v *View) any { return v.Subject() }, (*SubjectExtension)(nil)},
		{"Roles", CapReadRoles, func(v *View) any { return v.Roles() }, []string(nil)},
		{"HasRole", CapReadRoles, func(v *View) any { return v.HasRole("admin") }, false},
		{"Permissions", CapReadPermissions, func(v *View) any { return v.Permissions() }, []string(nil)},
		{"HasPermission", CapReadPermissions, func(v *View) any { return v.HasPermission("db.read") }, false},
		{"Teams", CapReadTeams, func(v *View) any { return v.Teams() }, []string(nil)},
		{"Headers", CapReadHeaders, func(v *View) any { return v.Headers() }, map[string]string(nil)},
		{"HasHeader", CapReadHeaders, func(v *View) any { return v.HasHeader("x-request-id") }, false},
		{"GetHeader", CapReadHeaders, func(v *View) any { return v.GetHeader("X-REQUEST-ID") }, ""},
		{"Labels", CapReadLabels, func(v *View) any { return v.Labels() }, []string(nil)},
		{"HasLabel", CapReadLabels, func(v *View) any { return v.HasLabel("PII") }, false},
		{"Classification", CapReadLabels, func(v *View) any { return v.Classification() }, ""},
		{"AgentInput", CapReadAgent, func(v *View) any { return v.AgentInput() }, ""},
		{"SessionID", CapReadAgent, func(v *View) any { return v.SessionID() }, ""},
		{"ConversationID", CapReadAgent, func(v *View) any { return v.ConversationID() }, ""},
		{"Turn", CapReadAgent, func(v *View) any { n, _ := v.Turn(); return n }, 0},
		{"AgentID", CapReadAgent, func(v *View) any { return v.AgentID() }, ""},
		{"ParentAgentID", CapReadAgent, func(v *View) any { return v.ParentAgentID() }, ""},
		{"Object", CapReadObjects, func(v *View) any { return v.Object() }, (*ObjectSecurityProfile)(nil)},
		{"DataPolicy", CapReadData, func(v *View) any { return v.DataPolicy() }, (*DataPolicy)(nil)},
	}
	for _, g := range gated {
		if got := g.get(none); !reflect.DeepEqual(got, g.zero) {
			t.Errorf("%s without capability = %#v, want zero", g.name, got)
		}
		if got := g.get(all); reflect.DeepEqual(got, g.zero) {
			t.Errorf("%s with every capability is zero", g.name)
		}
		only := oneView(t, RoleAssistant, part, g.cap)
		if got := g.get(only); reflect.DeepEqual(got, g.zero) {
			t.Errorf("%s with only %s is zero", g.name, g.cap)
		}
		others := oneView(t, RoleAssistant, part, CapAll&^g.cap)
		if got := g.get(others); !reflect.DeepEqual(got, g.zero) {
			t.Errorf("%s without %s (but with everything else) = %#v", g.name, g.cap, got)
		}
	}
	// The subject's fields are gated separately.
	s := oneView(t, RoleAssistant, part, CapReadSubject).Subject()
	if s.ID != "alice" || s.Roles != nil || s.Permissions != nil || s.Teams != nil || s.Claims != nil {
		t.Errorf("Subject with read_subject only = %+v", s)
	}
	s = all.Subject()
	if len(s.Roles) != 1 || len(s.Claims) != 1 || len(s.Teams) != 1 || len(s.Permissions) != 1 {
		t.Errorf("Subject with every capability = %+v", s)
	}
	if turn, ok := all.Turn(); !ok || turn != 3 {
		t.Errorf("Turn() = %d, %v", turn, ok)
	}
	// A view of a message without extensions is empty, not a panic.
	bare, _ := (&Message{Role: RoleUser, Content: []Part{part}}).Views(CapAll)
	if bare[0].Subject() != nil || bare[0].Environment() != "" || bare[0].Object() != nil || bare[0].HasLabel("x") {
		t.Error("bare message view has context")
	}
}

func TestViewHeadersCaseInsensitive(t *testing.T) {
	v := oneView(t, RoleUser, Text{Text: "x"}, CapReadHeaders)
	for _, n := range []string{"x-request-id", "X-Request-Id", "X-REQUEST-ID"} {
		if !v.HasHeader(n) || v.GetHeader(n) != "abc" {
			t.Errorf("header %q not found", n)
		}
	}
	if v.HasHeader("x-missing") {
		t.Error("HasHeader(missing)")
	}
}

func TestViewSerializationStripsSensitiveHeaders(t *testing.T) {
	v := oneView(t, RoleAssistant, ToolCall{ToolCallID: "c", Name: "execute_sql", Arguments: json.RawMessage(`{"q":1}`)}, CapAll)
	opa := v.ToOPAInput()
	input, ok := opa["input"].(map[string]any)
	if !ok {
		t.Fatalf("ToOPAInput() = %v", opa)
	}
	ext := input["extensions"].(map[string]any)
	headers := ext["http"].(map[string]any)["headers"].(map[string]string)
	for _, h := range []string{"authorization", "cookie", "x-api-key"} {
		if _, ok := headers[h]; ok {
			t.Errorf("serialized view contains %s", h)
		}
	}
	if headers["x-request-id"] != "abc" {
		t.Errorf("harmless header missing: %v", headers)
	}
	// The view itself (with read_headers) still sees them: stripping is for
	// serialization only.
	if v.GetHeader("Authorization") != "Bearer secret" {
		t.Error("Authorization not readable in-process")
	}
	b, err := json.Marshal(opa)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"Bearer secret", `"s=1"`, `"k"`} {
		if strings.Contains(string(b), secret) {
			t.Errorf("serialized view leaks %s: %s", secret, b)
		}
	}
	sec := ext["security"].(map[string]any)
	if sec["subject"] == nil || sec["object"] == nil || sec["data_policy"] == nil || sec["labels"] == nil || sec["classification"] != "confidential" {
		t.Errorf("security block = %v", sec)
	}
	if ext["request"] == nil || ext["agent"] == nil {
		t.Errorf("extensions block = %v", ext)
	}
	if input["content"] != `{"q":1}` || input["uri"] != "tool:///execute_sql" || input["is_pre"] != true || input["args"] == nil {
		t.Errorf("input = %v", input)
	}

	// Without capabilities, the extensions block holds only the base tier.
	bare := oneView(t, RoleAssistant, Text{Text: "hi"}, 0).ToMap(MapOptions{IncludeContext: true})
	if e := bare["extensions"].(map[string]any); len(e) != 1 || e["request"] == nil {
		t.Errorf("ungated extensions block = %v", e)
	}
	if _, ok := bare["content"]; ok {
		t.Error("content included without IncludeContent")
	}
}

// A view's action comes from one table of every kind, built once for the
// package, so Action, called for every part a policy sees, does not
// allocate.
func TestViewActionDoesNotAllocate(t *testing.T) {
	v := oneView(t, RoleAssistant, ToolCall{ToolCallID: "c", Name: "x", Arguments: json.RawMessage(`{}`)}, 0)
	if n := testing.AllocsPerRun(100, func() { _ = v.Action() }); n != 0 {
		t.Fatalf("Action() allocates %v times per call", n)
	}
	if len(actions) != 13 {
		t.Fatalf("action map covers %d kinds, want 13", len(actions))
	}
}

// A view computes its content and size when it is made: reading them again
// does not allocate.
func TestViewContentIsComputedOnce(t *testing.T) {
	v := oneView(t, RoleAssistant, ToolResult{ToolCallID: "c", ToolName: "x", Content: json.RawMessage(`{"rows":[1,2,3]}`)}, 0)
	if n := testing.AllocsPerRun(100, func() {
		_, _ = v.Content()
		_, _ = v.SizeBytes()
		_ = v.HasContent()
	}); n != 0 {
		t.Fatalf("reading content and size allocates %v times: content is recomputed", n)
	}
}

// A view's accessors return copies: a policy that changes what it read
// changes neither the message nor what the next policy reads.
func TestViewAccessorsReturnCopies(t *testing.T) {
	m := Message{Role: RoleAssistant, Content: []Part{ToolCall{ToolCallID: "c", Name: "execute_sql", Arguments: json.RawMessage(`{"q":"x"}`)}}, Extensions: fullExtensions()}
	views, _ := m.Views(CapAll)
	v := views[0]

	v.Headers()["authorization"] = "Bearer forged"
	v.Roles()[0] = "root"
	v.Permissions()[0] = "everything"
	v.Teams()[0] = "other"
	v.Labels()[0] = "PUBLIC"
	v.Args()["q"][1] = 'Z'
	arg, _ := v.GetArg("q")
	arg[1] = 'Z'
	s := v.Subject()
	s.Roles[0] = "root"
	s.Claims["iss"] = json.RawMessage(`"forged"`)
	v.Object().Permissions[0] = "none"
	v.DataPolicy().DeniedActions[0] = "nothing"
	v.Properties()["tool_id"] = "forged"

	if v.GetHeader("Authorization") != "Bearer secret" || m.Extensions.HTTP.Headers["Authorization"] != "Bearer secret" {
		t.Error("Headers() exposed the internal map")
	}
	if !v.HasRole("admin") || m.Extensions.Security.Subject.Roles[0] != "admin" {
		t.Error("Roles()/Subject() exposed internal slices")
	}
	if !v.HasPermission("db.read") || v.Teams()[0] != "ops" || !v.HasLabel("PII") {
		t.Error("Permissions()/Teams()/Labels() exposed internal slices")
	}
	if got, _ := v.GetArg("q"); string(got) != `"x"` {
		t.Errorf("Args()/GetArg() exposed internal bytes: %s", got)
	}
	if string(m.Extensions.Security.Subject.Claims["iss"]) != `"idp"` {
		t.Error("Subject() exposed the claims map")
	}
	if v.Object().Permissions[0] != "db.read" || v.DataPolicy().DeniedActions[0] != "export" {
		t.Error("Object()/DataPolicy() exposed internal slices")
	}
	if v.Properties()["tool_id"] != "c" {
		t.Error("Properties() exposed an internal map")
	}
}
