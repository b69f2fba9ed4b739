package cmf_test

import (
	"encoding/json"
	"testing"

	"github.com/agentui/agentui/cmf"
)

// A Message is copied by value, and a plain copy shares the original's
// extensions. Every setter copies what it changes, so a copy changed by
// any of them leaves the original (a decoded request, a stored message)
// exactly as it was.
func TestSettersLeaveTheOriginalOfACopyUnchanged(t *testing.T) {
	original := func() cmf.Message {
		m := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant, Content: []cmf.Part{call("c")}}
		m.SetID("m1")
		m.AddLabels("pii")
		m.SetCallRecord("c", cmf.CallRecord{ApprovalID: "a"})
		m.AddData(cmf.DataRecord{Name: "n", ID: "1", Value: json.RawMessage(`1`)})
		m.SetMetadata(map[string]json.RawMessage{"k": json.RawMessage(`1`)})
		m.SetState(cmf.StateRecord{Snapshot: json.RawMessage(`{}`)})
		return m
	}
	for name, set := range map[string]func(*cmf.Message){
		"SetID":         func(m *cmf.Message) { m.SetID("m2") },
		"AddLabels":     func(m *cmf.Message) { m.AddLabels("secret") },
		"SetCallRecord": func(m *cmf.Message) { m.SetCallRecord("c", cmf.CallRecord{Client: true}) },
		"AddData":       func(m *cmf.Message) { m.AddData(cmf.DataRecord{Name: "n", ID: "1", Value: json.RawMessage(`2`)}) },
		"AddData (new)": func(m *cmf.Message) { m.AddData(cmf.DataRecord{Name: "n", ID: "2"}) },
		"SetMetadata":   func(m *cmf.Message) { m.SetMetadata(map[string]json.RawMessage{"k": json.RawMessage(`2`)}) },
		"SetState":      func(m *cmf.Message) { m.SetState(cmf.StateRecord{Snapshot: json.RawMessage(`{"x":1}`)}) },
	} {
		t.Run(name, func(t *testing.T) {
			orig := original()
			before := mustJSON(t, orig)
			cp := orig
			set(&cp)
			if got := mustJSON(t, orig); got != before {
				t.Errorf("%s on a copy changed the original:\nbefore %s\nafter  %s", name, before, got)
			}
			if mustJSON(t, cp) == before {
				t.Errorf("%s did not change the copy", name)
			}
		})
	}
}

// A setter on a message without extensions gives it some.
func TestSettersOnAMessageWithoutExtensions(t *testing.T) {
	var m cmf.Message
	m.SetState(cmf.StateRecord{Snapshot: json.RawMessage(`{}`)})
	if cmf.LastState([]cmf.Message{m}) == nil {
		t.Fatal("no state recorded")
	}
	var n cmf.Message
	n.SetID("x")
	if n.ID() != "x" {
		t.Fatalf("id = %q", n.ID())
	}
}

func mustJSON(t *testing.T, m cmf.Message) string {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
