// Package jsonw appends JSON to byte slices without allocating. Protocol
// encoders build every frame with it on a reused buffer, so streaming a
// text delta costs no allocation for its JSON.
package jsonw

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// safe[b] is true for ASCII bytes that need no escaping in a JSON string.
var safe = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// String appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, and
// U+2028/U+2029 are escaped, as encoding/json does.
func String(b []byte, s string) []byte {
	return append(Escaped(append(b, '"'), s), '"')
}

// Escaped appends the inside of s as a JSON string, without the quotes.
func Escaped(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}

// Field appends `"name":` after a comma when b does not end an opening
// brace. name must need no escaping.
func Field(b []byte, name string) []byte {
	if len(b) > 0 && b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

// StringField appends "name":"value".
func StringField(b []byte, name, value string) []byte {
	return String(Field(b, name), value)
}

// RawField appends "name":raw, writing null for empty raw JSON.
func RawField(b []byte, name string, raw json.RawMessage) []byte {
	b = Field(b, name)
	if len(raw) == 0 {
		return append(b, "null"...)
	}
	return append(b, raw...)
}

// BoolField appends "name":true or "name":false.
func BoolField(b []byte, name string, v bool) []byte {
	return strconv.AppendBool(Field(b, name), v)
}

// IntField appends "name":n.
func IntField(b []byte, name string, n int64) []byte {
	return strconv.AppendInt(Field(b, name), n, 10)
}
