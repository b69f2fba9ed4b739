package wire_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/agentui/agentui/internal/wire"
)

// CheckID refuses exactly the ids longer than MaxIDBytes, counted in
// bytes whatever they hold, and the ids with a character that is not safe
// in a header or a log line (invalid UTF-8, a control character: C0, DEL,
// C1; a bidirectional formatting character; a line or paragraph
// separator), with a short 400 that names the id and never repeats it.
func FuzzCheckID(f *testing.F) {
	for _, s := range []string{"", "c1", "01a21a5b-7fb8-7caf-a2ff-d889d985dfc2", "call_AbC123", "V1StGXR8_Z5jdHi6B-myT",
		strings.Repeat("x", wire.MaxIDBytes), strings.Repeat("x", wire.MaxIDBytes+1), strings.Repeat("é", wire.MaxIDBytes/2+1),
		"\x00\xff\u202e", "c\x1b[2J", "c\t", "c\x7f", "c\u0085", "c\u2066", "c\u2029", "tenant/ünï 💬", "c\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		err := wire.CheckID(`"threadId"`, id)
		if len(id) > wire.MaxIDBytes {
			var e *wire.Error
			if !errors.As(err, &e) || e.Status != http.StatusBadRequest || e.Message != `"threadId" is longer than 256 bytes` {
				t.Fatalf("a %d-byte id: %v", len(id), err)
			}
			return
		}
		unsafe := !utf8.ValidString(id) || strings.ContainsFunc(id, func(r rune) bool {
			return r < 0x20 || r >= 0x7f && r < 0xa0 || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
		})
		if !unsafe {
			if err != nil {
				t.Fatalf("%q refused: %v", id, err)
			}
			return
		}
		var e *wire.Error
		if !errors.As(err, &e) || e.Status != http.StatusBadRequest ||
			e.Message != `"threadId" must be printable UTF-8, without control or bidirectional formatting characters` {
			t.Fatalf("%q: %v", id, err)
		}
	})
}
