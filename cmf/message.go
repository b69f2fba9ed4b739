package cmf

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Message is one turn of a conversation: who speaks, what they said (ordered
// parts), what kind of output it is, and its context.
//
// The zero SchemaVersion means [SchemaVersion]; it is written out as such.
type Message struct {
	SchemaVersion string
	Role          Role
	Content       []Part
	Channel       Channel
	Extensions    *Extensions
}

// ID returns the message's stable id: the provenance extension's message id,
// or "" when it has none. Protocol adapters store UI message ids here, so
// ids survive a round trip through storage.
func (m *Message) ID() string {
	if m.Extensions == nil || m.Extensions.Provenance == nil {
		return ""
	}
	return m.Extensions.Provenance.MessageID
}

// SetID sets the provenance message id. The provenance extension is
// immutable once a message is in a pipeline; SetID is for building
// messages, and replaces the extension rather than changing a shared one.
func (m *Message) SetID(id string) {
	e := m.ownExtensions()
	var p ProvenanceExtension
	if e.Provenance != nil {
		p = *e.Provenance
	}
	p.MessageID = id
	e.Provenance = &p
}

// ownExtensions gives m extensions of its own to change: a copy of the
// ones it had, which a copy of m (a Message is copied by value) may share.
// The copy is shallow; a setter replaces, never changes, what it points to.
func (m *Message) ownExtensions() *Extensions {
	var e Extensions
	if m.Extensions != nil {
		e = *m.Extensions
	}
	m.Extensions = &e
	return &e
}

// Text returns the message's text parts joined together.
func (m *Message) Text() string {
	var n int
	var only string
	for _, p := range m.Content {
		if t, ok := p.(Text); ok {
			n++
			only = t.Text
		}
	}
	if n <= 1 {
		return only
	}
	var b strings.Builder
	for _, p := range m.Content {
		if t, ok := p.(Text); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// Clone returns a copy that can be changed without affecting m: the content
// slice is copied (parts are values) and the extensions are copied on write.
func (m *Message) Clone() Message {
	c := *m
	c.Content = slices.Clone(m.Content)
	c.Extensions = m.Extensions.Clone()
	return c
}

type messageJSON struct {
	SchemaVersion string      `json:"schema_version"`
	Role          Role        `json:"role"`
	Content       []Part      `json:"content"`
	Channel       Channel     `json:"channel,omitempty"`
	Extensions    *Extensions `json:"extensions,omitempty"`
}

// MarshalJSON writes the CMF wire form; content is always an array.
func (m Message) MarshalJSON() ([]byte, error) {
	w := messageJSON(m)
	if w.SchemaVersion == "" {
		w.SchemaVersion = SchemaVersion
	}
	if w.Content == nil {
		w.Content = []Part{}
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes and validates a message. Every part must have a
// known content type; a message that decodes is a valid message.
func (m *Message) UnmarshalJSON(b []byte) error {
	// One pass over the bytes: the parts decode as partWire with the
	// message.
	var w struct {
		SchemaVersion string      `json:"schema_version"`
		Role          *Role       `json:"role"`
		Content       []partWire  `json:"content"`
		Channel       Channel     `json:"channel"`
		Extensions    *Extensions `json:"extensions"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("cmf: message: %w", err)
	}
	if w.Role == nil {
		return errors.New("cmf: message: role: required")
	}
	msg := Message{SchemaVersion: w.SchemaVersion, Role: *w.Role, Channel: w.Channel, Extensions: w.Extensions}
	if msg.SchemaVersion == "" {
		msg.SchemaVersion = SchemaVersion
	}
	if len(w.Content) > 0 {
		msg.Content = make([]Part, len(w.Content))
		for i := range w.Content {
			p, err := w.Content[i].part()
			if err != nil {
				return fmt.Errorf("cmf: message: content[%d]: %w", i, err)
			}
			msg.Content[i] = p
		}
	}
	msg.Extensions.normalize()
	if err := msg.Validate(); err != nil {
		return err
	}
	*m = msg
	return nil
}
