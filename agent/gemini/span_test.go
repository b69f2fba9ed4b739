package gemini

import (
	"strings"
	"testing"

	"github.com/agentui/agentui/cmf"
)

// FuzzSpan splits a signed part back around any stored span: the pieces
// join to the part's text, exactly one carries the signature, and a
// span that does not fit the text signs the whole part.
func FuzzSpan(f *testing.F) {
	f.Add("Hello world", "0:5")
	f.Add("Sunny.", "6:6")
	f.Add("héllo", "1:2")
	f.Add("x", "-1:3")
	f.Add("", "0:0")
	f.Fuzz(func(t *testing.T, text, id string) {
		var empty bool
		parts := appendSigned(nil, text, false, &cmf.Opaque{Provider: Provider, Model: "m", ID: id, Data: "c2ln"}, &empty)
		var joined strings.Builder
		signed := 0
		for _, p := range parts {
			joined.WriteString(p.Text)
			if len(p.ThoughtSignature) > 0 {
				signed++
				if empty != (p.Text == "") {
					t.Fatalf("empty signed part not noted: %+v", parts)
				}
			} else if p.Text == "" {
				t.Fatalf("an unsigned empty part: %+v", parts)
			}
		}
		if joined.String() != text || signed != 1 {
			t.Fatalf("split %q at %q into %+v", text, id, parts)
		}
		if _, _, ok := parseSpan(id, text); !ok && (len(parts) != 1 || parts[0].Text != text) {
			t.Fatalf("a span that does not fit split the part: %+v", parts)
		}
	})
}
