package wire

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// CanonicalJSON re-encodes JSON with object keys sorted and numbers in the
// form a browser writes back after JSON.parse and JSON.stringify (the
// shortest form of the float64), except integers beyond 2^53, which a
// float64 cannot hold: they keep their exact digits, so two of them never
// sign alike (a JavaScript client that rounds one gets its approval
// refused, not another number run). Input that does not parse is used as
// it is.
func CanonicalJSON(raw json.RawMessage) []byte {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.More() {
		return raw
	}
	return appendCanonical(make([]byte, 0, len(raw)), v)
}

func appendCanonical(b []byte, v any) []byte {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			kb, _ := json.Marshal(k)
			b = append(append(b, kb...), ':')
			b = appendCanonical(b, v[k])
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendCanonical(b, e)
		}
		return append(b, ']')
	case json.Number:
		return appendNumber(b, string(v))
	}
	out, _ := json.Marshal(v) // strings, booleans, null
	return append(b, out...)
}

// maxExact is the largest integer every float64 between it and zero can
// hold.
const maxExact = 1 << 53

func appendNumber(b []byte, lit string) []byte {
	if !strings.ContainsAny(lit, ".eE") {
		digits := strings.TrimPrefix(lit, "-")
		if n, err := strconv.ParseUint(digits, 10, 64); err != nil || n > maxExact {
			digits = strings.TrimLeft(digits, "0")
			if lit[0] == '-' {
				return append(append(b, '-'), digits...)
			}
			return append(b, digits...)
		}
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil { // beyond float64's range: keep it as written
		return append(b, lit...)
	}
	if f == 0 {
		return append(b, '0') // JSON.stringify(-0) is "0"
	}
	out, err := json.Marshal(f)
	if err != nil {
		return append(b, lit...)
	}
	return append(b, out...)
}
