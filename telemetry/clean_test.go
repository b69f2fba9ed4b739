package telemetry

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	for _, tc := range []struct {
		in    string
		limit int
		want  string
	}{
		{"c1", 1024, "c1"},
		{"chat ünïcode 💬", 1024, "chat ünïcode 💬"},
		{"\x1b[31mred\x00", 1024, `\x1b[31mred\x00`},
		{"evil\u202etxt.exe", 1024, `evil\u202etxt.exe`},
		{"a\u2028b\u2066c\u200fd", 1024, `a\u2028b\u2066c\u200fd`},
		{"bad\xffbyte\xc3", 1024, `bad\xffbyte\xc3`},
		{"\u0085next line", 1024, `\u0085next line`},
		{"tab\there\r\n", 1024, `tab\x09here\x0d\x0a`},
		{strings.Repeat("x", 10), 10, strings.Repeat("x", 10)},
		{strings.Repeat("x", 11), 10, strings.Repeat("x", 7) + "…"},
		{"ab\x1bcd", 7, `ab…`},            // cut before the escape: after it "…" no longer fits
		{"ééééé", 8, "éé…"},               // cut on a character boundary
		{strings.Repeat("y", 5), 2, "yy"}, // no room for "…"
		{"\x00", 2, ""},
		{strings.Repeat("z", 6<<20), -1, strings.Repeat("z", 6<<20)},
	} {
		got := clean(tc.in, tc.limit)
		if got != tc.want {
			t.Errorf("clean(%.40q, %d) = %.60q, want %.60q", tc.in, tc.limit, got, tc.want)
		}
	}
}

// What clean returns is valid UTF-8 with nothing hidden, fits the bound,
// is clean already, begins like the whole value cleaned, and is the
// value itself when that was clean and short enough.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"", "c1", "\x1b[2J\x00", "\u202eexe.txt", "\xff\xfe", "é\u2029", strings.Repeat("\x7f", 300)} {
		f.Add(s, 1024)
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, limit int) {
		limit %= 2048
		got := clean(s, limit)
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8: %q", got)
		}
		for _, r := range got {
			if hidden(r) {
				t.Fatalf("%U left in %q", r, got)
			}
		}
		if limit >= 0 && len(got) > limit {
			t.Fatalf("%d bytes over a bound of %d", len(got), limit)
		}
		if again := clean(got, limit); again != got {
			t.Fatalf("cleaning %q again gives %q", got, again)
		}
		if whole := clean(s, -1); !strings.HasPrefix(whole, strings.TrimSuffix(got, ellipsis)) {
			t.Fatalf("%q is not how %q begins", got, whole)
		}
		if isClean(s, limit) != (got == s) {
			t.Fatalf("isClean(%q) = %v, clean gives %q", s, isClean(s, limit), got)
		}
	})
}
