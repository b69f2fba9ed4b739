package cmf

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// The review of a first CMF implementation (end of seed 000) found 14
// defects. Each test below is named after one and shows it cannot happen
// here. Finding 3 (keep test coverage above 96%) is enforced by `make test`,
// which fails when this package's coverage drops below that.

func TestReviewFinding01_GlobMetacharactersAreLiteral(t *testing.T) {
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

func TestReviewFinding02_UnknownContentTypeIsAnError(t *testing.T) {
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

func TestReviewFinding04_ExtensionsAreTyped(t *testing.T) {
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

func TestReviewFinding05_DiscriminatorCannotLie(t *testing.T) {
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

func TestReviewFinding06_PromptResultMessagesAreMessages(t *testing.T) {
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

func TestReviewFinding07_MediaSourceTypeIsURLOrBase64(t *testing.T) {
	for _, typ := range []string{"s3", "file", "", "URL", "data"} {
		src := `{"content_type":"image","type":"` + typ + `","data":"x"}`
		if _, err := UnmarshalPart([]byte(src)); err == nil {
			t.Errorf("source type %q accepted", typ)
		}
		img := Image{MediaSource{Type: SourceType(typ), Data: "x"}}
		if img.Validate() == nil {
			t.Errorf("Validate accepted source type %q", typ)
		}
	}
	for _, typ := range []SourceType{SourceURL, SourceBase64} {
		if err := (Audio{MediaSource: MediaSource{Type: typ, Data: "AAAA"}}).Validate(); err != nil {
			t.Errorf("%s rejected: %v", typ, err)
		}
	}
}

func TestReviewFinding08_NoFallbackToText(t *testing.T) {
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

func TestReviewFinding09_ResourceContentOrBlob(t *testing.T) {
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

func TestReviewFinding10_ReferenceRangeNotReversed(t *testing.T) {
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

func TestReviewFinding11_ToolRoleTextIsPost(t *testing.T) {
	for _, p := range []Part{Text{Text: "result"}, Thinking{Text: "t"}, Image{MediaSource{Type: SourceURL, Data: "https://x"}}} {
		v := oneView(t, RoleTool, p, 0)
		if v.IsPre() || !v.IsPost() {
			t.Errorf("%s from a tool message is pre", p.ContentType())
		}
	}
}

func TestReviewFinding12_ActionMapIsPackageLevel(t *testing.T) {
	v := oneView(t, RoleAssistant, ToolCall{ToolCallID: "c", Name: "x", Arguments: json.RawMessage(`{}`)}, 0)
	if n := testing.AllocsPerRun(100, func() { _ = v.Action() }); n != 0 {
		t.Fatalf("Action() allocates %v times per call", n)
	}
	if len(actions) != 13 {
		t.Fatalf("action map covers %d kinds, want 13", len(actions))
	}
}

func TestReviewFinding13_ContentComputedOnce(t *testing.T) {
	v := oneView(t, RoleAssistant, ToolResult{ToolCallID: "c", ToolName: "x", Content: json.RawMessage(`{"rows":[1,2,3]}`)}, 0)
	if n := testing.AllocsPerRun(100, func() {
		_, _ = v.Content()
		_, _ = v.SizeBytes()
		_ = v.HasContent()
	}); n != 0 {
		t.Fatalf("reading content and size allocates %v times: content is recomputed", n)
	}
}

func TestReviewFinding14_AccessorsReturnCopies(t *testing.T) {
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
