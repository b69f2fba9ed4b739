package jsonw

import (
	"encoding/json"
	"testing"
)

func TestStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " and \ backslash`, "tab\tnl\ncr\r", "\x00\x01\x1f\x7f",
		"héllo wörld ✓ 🎉", "bad \xff utf8 \xc3", "line\u2028sep\u2029", "<html>&amp;"} {
		got := String(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q: invalid JSON %s: %v", s, got, err)
		}
		want, _ := json.Marshal(s)
		var wantBack string
		_ = json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Errorf("%q: decodes to %q, encoding/json gives %q", s, back, wantBack)
		}
	}
}

func TestFields(t *testing.T) {
	b := append([]byte(nil), '{')
	b = StringField(b, "type", "x")
	b = RawField(b, "data", nil)
	b = RawField(b, "obj", json.RawMessage(`{"a":1}`))
	b = BoolField(b, "ok", true)
	b = IntField(b, "n", -3)
	b = append(b, '}')
	if string(b) != `{"type":"x","data":null,"obj":{"a":1},"ok":true,"n":-3}` {
		t.Fatalf("got %s", b)
	}
}

func FuzzString(f *testing.F) {
	f.Add("hello \"world\"\n")
	f.Fuzz(func(t *testing.T, s string) {
		var back string
		if err := json.Unmarshal(String(nil, s), &back); err != nil {
			t.Fatalf("invalid JSON for %q: %v", s, err)
		}
		want, _ := json.Marshal(s)
		var wantBack string
		_ = json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Fatalf("%q decodes to %q, want %q", s, back, wantBack)
		}
	})
}

func BenchmarkString(b *testing.B) {
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = String(buf[:0], "The weather in Paris is sunny, 21°C.")
	}
}
