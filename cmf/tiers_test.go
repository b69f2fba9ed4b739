package cmf

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestCheckExtensionChange(t *testing.T) {
	type change struct {
		name   string
		edit   func(e *Extensions) // applied to a Clone of the base
		caps   Capabilities
		reject string // "" = accepted; else the violated extension
		tier   Tier
	}
	cases := []change{
		// Mutable: anything goes.
		{name: "custom changed", edit: func(e *Extensions) { e.Custom["app"] = json.RawMessage(`2`) }},
		{name: "custom added", edit: func(e *Extensions) { e.Custom["new"] = json.RawMessage(`true`) }},
		{name: "custom removed", edit: func(e *Extensions) { e.Custom = nil }},
		{name: "no change", edit: func(*Extensions) {}},

		// Monotonic: labels add-only; classification fixed once set.
		{name: "label added", edit: func(e *Extensions) { e.Security.Labels = append(e.Security.Labels, "SECRET") }},
		{name: "label removed", edit: func(e *Extensions) { e.Security.Labels = nil }, reject: "security.labels", tier: TierMonotonic},
		{name: "label replaced", edit: func(e *Extensions) { e.Security.Labels[0] = "PUBLIC" }, reject: "security.labels", tier: TierMonotonic},
		{name: "security removed", edit: func(e *Extensions) { e.Security = nil }, reject: "security.labels", tier: TierMonotonic},
		{name: "classification changed", edit: func(e *Extensions) { e.Security.Classification = "public" }, reject: "security.classification", tier: TierMonotonic},

		// Immutable nested security fields.
		{name: "subject replaced", edit: func(e *Extensions) {
			s := *e.Security.Subject
			s.Roles = []string{"root"}
			e.Security.Subject = &s
		}, reject: "security.subject", tier: TierImmutable},
		{name: "objects changed", edit: func(e *Extensions) {
			e.Security.Objects = map[string]ObjectSecurityProfile{"x": {ManagedBy: "tool"}}
		}, reject: "security.objects", tier: TierImmutable},
		{name: "data changed", edit: func(e *Extensions) { e.Security.Data = nil }, reject: "security.data", tier: TierImmutable},

		// Guarded: headers need write_headers.
		{name: "header added without capability", edit: func(e *Extensions) { e.HTTP.Headers["X-Trace"] = "1" }, reject: "http.headers", tier: TierGuarded},
		{name: "header added with capability", edit: func(e *Extensions) { e.HTTP.Headers["X-Trace"] = "1" }, caps: CapWriteHeaders},
		{name: "header removed without capability", edit: func(e *Extensions) { delete(e.HTTP.Headers, "Cookie") }, reject: "http.headers", tier: TierGuarded},
		{name: "header read capability is not enough", edit: func(e *Extensions) { e.HTTP = nil }, caps: CapReadHeaders, reject: "http.headers", tier: TierGuarded},
		{name: "headers removed with capability", edit: func(e *Extensions) { e.HTTP = nil }, caps: CapWriteHeaders},
	}
	immutable := map[string]func(e *Extensions){
		"request":    func(e *Extensions) { e.Request = &RequestExtension{Environment: "dev"} },
		"agent":      func(e *Extensions) { e.Agent = nil },
		"mcp":        func(e *Extensions) { e.MCP = &MCPExtension{} },
		"completion": func(e *Extensions) { c := *e.Completion; c.Model = "other"; e.Completion = &c },
		"provenance": func(e *Extensions) { e.Provenance = &ProvenanceExtension{MessageID: "forged"} },
		"llm":        func(e *Extensions) { e.LLM = nil },
		"framework":  func(e *Extensions) { e.Framework = &FrameworkExtension{Framework: "other"} },
	}
	for name, edit := range immutable {
		cases = append(cases, change{name: name + " changed", edit: edit, caps: CapAll, reject: name, tier: TierImmutable})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := fullExtensions()
			after := before.Clone()
			c.edit(after)
			err := CheckExtensionChange(before, after, c.caps)
			if c.reject == "" {
				if err != nil {
					t.Fatalf("rejected an allowed change: %v", err)
				}
				return
			}
			var tv *TierViolation
			if !errors.As(err, &tv) {
				t.Fatalf("err = %v, want a TierViolation on %s", err, c.reject)
			}
			if tv.Extension != c.reject || tv.Tier != c.tier {
				t.Fatalf("violation = %s (%s), want %s (%s)", tv.Extension, tv.Tier, c.reject, c.tier)
			}
		})
	}
}

func TestCheckExtensionChangeFromNothing(t *testing.T) {
	if err := CheckExtensionChange(nil, nil, 0); err != nil {
		t.Fatal(err)
	}
	// Adding labels and a classification is additive.
	after := &Extensions{Security: &SecurityExtension{Labels: []string{"PII"}, Classification: "secret"}, Custom: map[string]json.RawMessage{"a": json.RawMessage(`1`)}}
	if err := CheckExtensionChange(nil, after, 0); err != nil {
		t.Fatalf("adding labels was rejected: %v", err)
	}
	// Adding an immutable extension is a change.
	if err := CheckExtensionChange(&Extensions{}, &Extensions{Provenance: &ProvenanceExtension{MessageID: "x"}}, CapAll); err == nil {
		t.Fatal("adding provenance was accepted")
	}
	// Adding a subject later is a change to an immutable field.
	if err := CheckExtensionChange(nil, &Extensions{Security: &SecurityExtension{Subject: &SubjectExtension{ID: "x", Type: SubjectUser}}}, CapAll); err == nil {
		t.Fatal("adding a subject was accepted")
	}
}

func TestTiers(t *testing.T) {
	want := map[string]Tier{
		"request": TierImmutable, "agent": TierImmutable, "http": TierGuarded, "security": TierMonotonic,
		"security.subject": TierImmutable, "security.objects": TierImmutable, "security.data": TierImmutable,
		"mcp": TierImmutable, "completion": TierImmutable, "provenance": TierImmutable, "llm": TierImmutable,
		"framework": TierImmutable, "ui": TierImmutable, "custom": TierMutable,
	}
	// Every extension has a tier: one added to Extensions without one
	// would be checked by nothing.
	ty := reflect.TypeFor[Extensions]()
	for i := range ty.NumField() {
		name, _, _ := strings.Cut(ty.Field(i).Tag.Get("json"), ",")
		if _, ok := want[name]; !ok || TierOf(name) == 0 {
			t.Errorf("extension %q has no tier", name)
		}
	}
	for ext, tier := range want {
		if got := TierOf(ext); got != tier {
			t.Errorf("TierOf(%s) = %s, want %s", ext, got, tier)
		}
	}
	if TierOf("nope") != 0 || Tier(0).String() != "unknown" {
		t.Error("unknown extension must have no tier")
	}
}

func TestCapabilities(t *testing.T) {
	c, err := ParseCapabilities("read_roles", "write_headers")
	if err != nil || !c.Has(CapReadRoles) || !c.Has(CapWriteHeaders) || c.Has(CapReadHeaders) {
		t.Fatalf("ParseCapabilities = %v, %v", c, err)
	}
	if c.String() != "read_roles,write_headers" {
		t.Fatalf("String() = %q", c.String())
	}
	if _, err := ParseCapabilities("fly"); err == nil {
		t.Fatal("unknown capability accepted")
	}
	all, _ := ParseCapabilities(capabilityNames[:]...)
	if all != CapAll {
		t.Fatalf("CapAll = %b, want %b", CapAll, all)
	}
}

// Labels only grow, and adding them never changes extensions another
// message shares.
func TestAddLabels(t *testing.T) {
	if got := AddLabels([]string{"a"}, "b", "", "a", "b"); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("AddLabels = %v", got)
	}
	shared := &Extensions{Security: &SecurityExtension{Labels: []string{"a"}}, Request: &RequestExtension{RequestID: "r"}}
	m := Message{Role: RoleUser, Extensions: shared}
	other := Message{Role: RoleUser, Extensions: shared}
	m.AddLabels("PII", "a")
	if !slices.Equal(m.Extensions.Security.Labels, []string{"a", "PII"}) || m.Extensions.Request != shared.Request {
		t.Fatalf("labelled = %+v", m.Extensions)
	}
	if !slices.Equal(other.Extensions.Security.Labels, []string{"a"}) || shared.Security.Labels[0] != "a" || len(shared.Security.Labels) != 1 {
		t.Fatalf("the shared extensions changed: %+v", shared.Security)
	}
	var bare Message
	bare.AddLabels()
	if bare.Extensions != nil {
		t.Fatal("no labels made extensions")
	}
	bare.AddLabels("x")
	if !slices.Equal(bare.Extensions.Security.Labels, []string{"x"}) {
		t.Fatalf("bare = %+v", bare.Extensions)
	}
}
