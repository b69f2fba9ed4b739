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

func TestRawIsOneLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "null"},
		{`{"a":1}`, `{"a":1}`},
		{"{\n  \"city\": \"Paris\",\r\n\t\"n\": [1, 2]\n}", `{"city":"Paris","n":[1,2]}`},
		{"\"keep  spaces\\n inside\"", "\"keep  spaces\\n inside\""},
		{"{\"s\":\"a\u2028b\u2029c\"}", `{"s":"a\u2028b\u2029c"}`},
		{"\"esc \\\" quote\" ", "\"esc \\\" quote\""},
		{"\"raw\ncontrol\"", `"raw\u000acontrol"`}, // invalid JSON in, still one line out
	} {
		if got := string(Raw(nil, []byte(c.in))); got != c.want {
			t.Errorf("Raw(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// FuzzRaw: whatever the input, the output has no CR or LF; valid JSON
// stays valid and means the same.
func FuzzRaw(f *testing.F) {
	f.Add([]byte("{\n \"a\": \"x\u2028y\",\r\n \"b\": [1, 2.5e3, null, true]\n}"))
	f.Add([]byte(`"\\\"\n"`))
	f.Fuzz(func(t *testing.T, in []byte) {
		out := Raw(nil, in)
		for _, c := range out {
			if c == '\n' || c == '\r' {
				t.Fatalf("Raw(%q) = %q holds a line break", in, out)
			}
		}
		var want any
		if json.Unmarshal(in, &want) != nil {
			return
		}
		var got any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("Raw(%q) = %q is not JSON: %v", in, out, err)
		}
		a, _ := json.Marshal(want)
		b, _ := json.Marshal(got)
		if string(a) != string(b) {
			t.Fatalf("Raw(%q) = %q means something else", in, out)
		}
	})
}

// Quoted writes what String writes, also when the string changes, comes
// back, or differs only after the first write.
func TestQuoted(t *testing.T) {
	var q Quoted
	for _, s := range []string{"a", "a", "b\"c", "", "a", "\u2028x", "\u2028x", ""} {
		if got, want := string(q.Append([]byte("x"), s)), string(String([]byte("x"), s)); got != want {
			t.Fatalf("Append(%q) = %s, want %s", s, got, want)
		}
	}
}
