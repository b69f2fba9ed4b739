package wire

import (
	"encoding/json"
	"testing"
)

func TestCanonicalJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"b":[1.50,2e2,-0,0.1],"a":null}`:                `{"a":null,"b":[1.5,200,0,0.1]}`,
		`{"big":-9007199254740993,"ok":9007199254740992}`: `{"big":-9007199254740993,"ok":9007199254740992}`,
		`{"s":"<&>\u2028"}`:                               `{"s":"\u003c\u0026\u003e\u2028"}`,
		`1e400`:                                           `1e400`,
		`"x" "y"`:                                         `"x" "y"`, // not one value: as it is
	} {
		if got := string(CanonicalJSON(json.RawMessage(in))); got != want {
			t.Errorf("CanonicalJSON(%s) = %s, want %s", in, got, want)
		}
	}
}

// FuzzCanonicalJSON: canonical JSON of valid JSON is valid JSON, means
// the same, and is a fixed point.
func FuzzCanonicalJSON(f *testing.F) {
	f.Add(`{"b":[1.50,2e2,-0],"a":{"z":true,"y":"\u00e9"}}`)
	f.Add(`12345678901234567890123`)
	f.Fuzz(func(t *testing.T, in string) {
		if !json.Valid([]byte(in)) {
			return
		}
		c := CanonicalJSON(json.RawMessage(in))
		if !json.Valid(c) {
			t.Fatalf("CanonicalJSON(%q) = %q is not JSON", in, c)
		}
		if again := CanonicalJSON(c); string(again) != string(c) {
			t.Fatalf("not a fixed point: %q → %q → %q", in, c, again)
		}
	})
}
