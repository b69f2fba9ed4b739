package uiadapter

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// FuzzLastEventID: any header value parses or is refused, never panics;
// what parses round-trips.
func FuzzLastEventID(f *testing.F) {
	for _, s := range []string{"", "7", "run:7", "a:b:12", "x:y", "-1", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Last-Event-ID", v)
		run, seq, ok := parseLastEventID(r)
		if !ok || r.Header.Get("Last-Event-ID") == "" {
			return
		}
		if seq < 0 {
			t.Fatalf("%q: sequence %d", v, seq)
		}
		want := strconv.FormatInt(seq, 10)
		if run != "" || strings.Contains(v, ":") {
			want = run + ":" + want
		}
		r.Header.Set("Last-Event-ID", want)
		if run2, seq2, ok := parseLastEventID(r); !ok || run2 != run || seq2 != seq {
			t.Fatalf("%q → %q %d → %q %d %v", v, run, seq, run2, seq2, ok)
		}
	})
}
