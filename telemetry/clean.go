package telemetry

import (
	"context"
	"slices"
	"unicode"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// DefaultAttributeValueLength bounds, in bytes, each string attribute
// value agentui records, and each string the binary exports unless
// OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT (or OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT)
// says otherwise. The longest value agentui itself sets is an id (256
// bytes at most, wire.MaxIDBytes), 1,024 bytes even when every byte
// of it is escaped; a user agent or a path is a few hundred.
const DefaultAttributeValueLength = 1024

// ellipsis ends a value that was cut.
const ellipsis = "…"

// clean returns s safe to export and to show in a terminal or a trace
// viewer: valid UTF-8 with no control characters (C0, DEL, C1), no
// bidirectional formatting characters (U+202E and its kind, which reorder
// what a viewer shows) and no line or paragraph separators, and at most
// limit bytes (no bound when limit < 0). Each character it removes is
// written as an escape (\x1b, \u202e; an invalid byte as \xff), so what
// was there stays visible; a value it cuts ends with "…". The escapes are
// for reading, not for decoding: a backslash is left as it is.
//
// Clients choose chat ids, run ids, user agents and paths. An OTLP
// exporter refuses a whole batch over one invalid UTF-8 string (protobuf
// strings must be valid), and a value of megabytes makes the batch too big
// to send: either way every other user's spans in it are lost.
func clean(s string, limit int) string {
	if isClean(s, limit) {
		return s
	}
	capacity := len(s) + 16 // room for a few escapes
	if limit >= 0 {
		capacity = min(capacity, limit+len(ellipsis))
	}
	out := make([]byte, 0, capacity)
	fit := 0 // out's length at the last character that leaves room for the ellipsis
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		n := len(out)
		switch {
		case r == utf8.RuneError && size == 1:
			out = escape(out, `\x`, rune(s[i]), 2)
		case hidden(r) && r < 0x80:
			out = escape(out, `\x`, r, 2)
		case hidden(r):
			out = escape(out, `\u`, r, 4)
		default:
			out = append(out, s[i:i+size]...)
		}
		i += size
		if limit < 0 {
			continue
		}
		if len(out) > limit {
			if limit < len(ellipsis) {
				return string(out[:n])
			}
			return string(append(out[:fit], ellipsis...))
		}
		if len(out) <= limit-len(ellipsis) {
			fit = len(out)
		}
	}
	return string(out)
}

// isClean reports whether clean would return s as it is.
func isClean(s string, limit int) bool {
	if limit >= 0 && len(s) > limit {
		return false
	}
	for i := 0; i < len(s); {
		if c := s[i]; c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || hidden(r) {
			return false
		}
		i += size
	}
	return true
}

// hidden reports whether r is a character clean escapes.
func hidden(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
}

func escape(out []byte, prefix string, r rune, digits int) []byte {
	const hex = "0123456789abcdef"
	out = append(out, prefix...)
	for shift := (digits - 1) * 4; shift >= 0; shift -= 4 {
		out = append(out, hex[(r>>shift)&0xf])
	}
	return out
}

// cleaned is clean with agentui's own bound: for every value a client or
// a model chose (ids, tool and model names, error texts) before it becomes
// a span's name, attribute or status, or a metric's attribute.
func cleaned(s string) string { return clean(s, DefaultAttributeValueLength) }

// CleanExporter wraps a span exporter so that every string it exports
// (span names, string and string-slice attribute values of spans, events
// and links, status descriptions) is cleaned as agentui cleans its own
// attributes: valid UTF-8, control and bidirectional formatting characters
// escaped, at most limit bytes (no bound when limit < 0). The HTTP
// instrumentation records what clients send (the user agent, the path):
// one invalid UTF-8 byte there makes an OTLP exporter refuse the whole
// batch, every user's spans with it. FromEnv wraps the binary's exporter
// in it; wrap yours when you build your own provider.
func CleanExporter(exp sdktrace.SpanExporter, limit int) sdktrace.SpanExporter {
	return &cleanExporter{SpanExporter: exp, limit: limit}
}

type cleanExporter struct {
	sdktrace.SpanExporter
	limit int
}

func (e *cleanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	out := spans
	for i, s := range spans {
		c, changed := cleanSpan(s, e.limit)
		if !changed {
			continue
		}
		if len(out) > 0 && &out[0] == &spans[0] {
			out = slices.Clone(spans) // the batch is the SDK's: do not write into it
		}
		out[i] = c
	}
	return e.SpanExporter.ExportSpans(ctx, out)
}

// cleanedSpan is a span whose strings were cleaned; the rest is the
// span's own.
type cleanedSpan struct {
	sdktrace.ReadOnlySpan
	name   string
	attrs  []attribute.KeyValue
	events []sdktrace.Event
	links  []sdktrace.Link
	status sdktrace.Status
}

func (s *cleanedSpan) Name() string                     { return s.name }
func (s *cleanedSpan) Attributes() []attribute.KeyValue { return s.attrs }
func (s *cleanedSpan) Events() []sdktrace.Event         { return s.events }
func (s *cleanedSpan) Links() []sdktrace.Link           { return s.links }
func (s *cleanedSpan) Status() sdktrace.Status          { return s.status }

// cleanSpan returns s with its strings cleaned, and whether any changed;
// an unchanged span costs no allocation.
func cleanSpan(s sdktrace.ReadOnlySpan, limit int) (sdktrace.ReadOnlySpan, bool) {
	name, status := clean(s.Name(), limit), s.Status()
	status.Description = clean(status.Description, limit)
	changed := name != s.Name() || status.Description != s.Status().Description
	attrs, ch := cleanAttrs(s.Attributes(), limit)
	changed = changed || ch
	events, copied := s.Events(), false
	for i, ev := range events {
		name := clean(ev.Name, limit)
		attrs, ch := cleanAttrs(ev.Attributes, limit)
		if name == ev.Name && !ch {
			continue
		}
		if !copied {
			events, copied = slices.Clone(events), true
		}
		events[i].Name, events[i].Attributes, changed = name, attrs, true
	}
	links, copied := s.Links(), false
	for i, l := range links {
		attrs, ch := cleanAttrs(l.Attributes, limit)
		if !ch {
			continue
		}
		if !copied {
			links, copied = slices.Clone(links), true
		}
		links[i].Attributes, changed = attrs, true
	}
	if !changed {
		return s, false
	}
	return &cleanedSpan{ReadOnlySpan: s, name: name, attrs: attrs, events: events, links: links, status: status}, true
}

// cleanAttrs returns attrs with their string values cleaned (a copy when
// any changed), and whether any did.
func cleanAttrs(attrs []attribute.KeyValue, limit int) ([]attribute.KeyValue, bool) {
	out := attrs
	changed := false
	for i, kv := range attrs {
		v, ok := cleanValue(kv.Value, limit)
		if !ok {
			continue
		}
		if !changed {
			out, changed = slices.Clone(attrs), true
		}
		out[i].Value = v
	}
	return out, changed
}

func cleanValue(v attribute.Value, limit int) (attribute.Value, bool) {
	switch v.Type() {
	case attribute.STRING:
		if s := v.AsString(); !isClean(s, limit) {
			return attribute.StringValue(clean(s, limit)), true
		}
	case attribute.STRINGSLICE:
		ss := v.AsStringSlice()
		for _, s := range ss {
			if !isClean(s, limit) {
				for i := range ss {
					ss[i] = clean(ss[i], limit)
				}
				return attribute.StringSliceValue(ss), true
			}
		}
	}
	return v, false
}
