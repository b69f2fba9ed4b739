// Package jsonw appends JSON to byte slices without allocating. Protocol
// encoders build every frame with it on a reused buffer, so streaming a
// text delta costs no allocation for its JSON. ReadString is the way
// back for the strings of hand-written formats.
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

// RawField appends "name":raw compacted (see [Raw]).
func RawField(b []byte, name string, raw json.RawMessage) []byte {
	return Raw(Field(b, name), raw)
}

// Raw appends raw JSON on one line: whitespace and control bytes between
// tokens are dropped, and control characters and U+2028/U+2029 inside
// strings are escaped, so the result never holds CR or LF whatever raw
// holds (an SSE frame must be one data line; models send tool arguments
// with newlines in them). Empty raw is null. Valid JSON stays valid and
// means the same; invalid JSON stays invalid, still on one line.
func Raw(b []byte, raw []byte) []byte {
	if len(raw) == 0 {
		return append(b, "null"...)
	}
	start := 0
	inString, escaped := false, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if !inString {
			switch {
			case c == '"':
				inString = true
			case c <= ' ':
				b = append(b, raw[start:i]...)
				start = i + 1
			}
			continue
		}
		switch {
		case escaped && c < ' ': // invalid: a backslash before a control byte
			b = append(b, raw[start:i]...)
			b = append(b, 'u', '0', '0', hex[c>>4], hex[c&0xF])
			start = i + 1
			escaped = false
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case c == '"':
			inString = false
		case c < ' ':
			b = append(b, raw[start:i]...)
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			start = i + 1
		case c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && (raw[i+2] == 0xA8 || raw[i+2] == 0xA9):
			b = append(b, raw[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[raw[i+2]-0xA0])
			i += 2
			start = i + 1
		}
	}
	return append(b, raw[start:]...)
}

// BoolField appends "name":true or "name":false.
func BoolField(b []byte, name string, v bool) []byte {
	return strconv.AppendBool(Field(b, name), v)
}

// IntField appends "name":n.
func IntField(b []byte, name string, n int64) []byte {
	return strconv.AppendInt(Field(b, name), n, 10)
}

// ReadString reads the JSON string b starts with and returns it and what
// follows it. A string without escapes is taken as it stands (one
// allocation); one with escapes goes through encoding/json.
func ReadString(b []byte) (string, []byte, bool) {
	if len(b) == 0 || b[0] != '"' {
		return "", nil, false
	}
	escaped := false
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			if !escaped {
				if !utf8.Valid(b[1:i]) {
					return "", nil, false
				}
				return string(b[1:i]), b[i+1:], true
			}
			var s string
			if json.Unmarshal(b[:i+1], &s) != nil {
				return "", nil, false
			}
			return s, b[i+1:], true
		default:
			if b[i] < 0x20 {
				return "", nil, false
			}
		}
	}
	return "", nil, false
}

// Quoted keeps the JSON string of the last string it wrote: a stream
// names the same part id in every one of its deltas, and comparing a
// string with the one it was last given (usually the same string) costs
// less than escaping it again.
type Quoted struct {
	s    string
	json []byte
}

// Append appends s as a JSON string, as String does.
func (q *Quoted) Append(b []byte, s string) []byte {
	if q.json == nil || s != q.s {
		q.s, q.json = s, String(q.json[:0], s)
	}
	return append(b, q.json...)
}
