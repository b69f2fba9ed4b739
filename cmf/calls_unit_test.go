package cmf_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentui/agentui/cmf"
)

func call(id string) cmf.Part {
	return cmf.ToolCall{ToolCallID: id, Name: "t", Arguments: json.RawMessage(`{}`)}
}

func result(id string) cmf.Part {
	return cmf.ToolResult{ToolCallID: id, ToolName: "t", Content: json.RawMessage(`1`)}
}

// Records are set copy-on-write: a clone that shares the extension is not
// changed by a record set on the original.
func TestCallRecordsAreCopiedOnWrite(t *testing.T) {
	m := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant}
	if r := m.CallRecord("c"); r != (cmf.CallRecord{}) || m.Data() != nil {
		t.Fatal("a message without records has some")
	}
	m.SetCallRecord("c", cmf.CallRecord{ApprovalID: "a"})
	clone := m.Clone()
	m.SetCallRecord("d", cmf.CallRecord{Client: true})
	m.AddData(cmf.DataRecord{Name: "n", ID: "1", Value: json.RawMessage(`1`)})
	m.AddData(cmf.DataRecord{Name: "n", ID: "1", Value: json.RawMessage(`2`)}) // replaces
	m.AddData(cmf.DataRecord{Name: "n"})                                       // no id: added, null value
	if clone.CallRecord("d") != (cmf.CallRecord{}) || clone.Data() != nil {
		t.Fatal("a record set on the original reached its clone")
	}
	if m.CallRecord("c").ApprovalID != "a" || !m.CallRecord("d").Client {
		t.Fatalf("records = %+v", m.Extensions.UI.Calls)
	}
	if d := m.Data(); len(d) != 2 || string(d[0].Value) != "2" || string(d[1].Value) != "null" {
		t.Fatalf("data = %+v", d)
	}
	if m.Metadata() != nil || (&cmf.Message{}).Metadata() != nil {
		t.Fatal("metadata nobody set")
	}
	m.SetMetadata(map[string]json.RawMessage{"cost": json.RawMessage(`{ "usd" : 0.5 }`)})
	if clone.Metadata() != nil {
		t.Fatal("metadata set on the original reached its clone")
	}
	// It survives the codec, compacted like every raw value.
	b, err := json.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	var back cmf.Message
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got := string(back.Metadata()["cost"]); got != `{"usd":0.5}` {
		t.Fatalf("metadata after a round trip = %s", got)
	}
}

func TestToolCallStatus(t *testing.T) {
	for _, c := range []struct {
		state cmf.ToolCallState
		want  cmf.ToolCallStatus
		name  string
	}{
		{cmf.ToolCallState{}, cmf.CallRequested, "requested"},
		{cmf.ToolCallState{ApprovalID: "a"}, cmf.CallAwaitingApproval, "awaiting approval"},
		{cmf.ToolCallState{Client: true}, cmf.CallAwaitingClient, "awaiting client"},
		{cmf.ToolCallState{Result: &cmf.ToolResult{}, Decision: &cmf.Decision{}}, cmf.CallDenied, "denied"},
		{cmf.ToolCallState{Result: &cmf.ToolResult{}, ApprovalID: "a", Decision: &cmf.Decision{Approved: true}}, cmf.CallAnswered, "answered"},
	} {
		if got := c.state.Status(); got != c.want || got.String() != c.name {
			t.Errorf("%+v: %v (%s), want %v", c.state, got, got, c.want)
		}
	}
	if cmf.ToolCallStatus(0).String() != "unknown" {
		t.Error("the zero status has a name")
	}
}

// States pair each call with its result; a second call with a seen id
// and a result for an unknown or answered call are left out. Pending
// calls come from the last turn only.
func TestToolCallStates(t *testing.T) {
	asst := cmf.Message{Role: cmf.RoleAssistant, Content: []cmf.Part{call("a"), call("b"), call("a")}}
	asst.SetID("m1")
	asst.SetCallRecord("b", cmf.CallRecord{ApprovalID: "ap"})
	old := cmf.Message{Role: cmf.RoleAssistant, Content: []cmf.Part{call("old")}}
	old.SetCallRecord("old", cmf.CallRecord{Client: true})
	msgs := []cmf.Message{
		{Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: "u"}}}, old,
		{Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: "u2"}}}, asst,
		{Role: cmf.RoleTool, Content: []cmf.Part{result("a"), result("a"), result("ghost")}},
	}
	states := cmf.ToolCallStates(msgs)
	if len(states) != 3 || states[1].Call.ToolCallID != "a" || states[1].MessageID != "m1" || states[1].Result == nil {
		t.Fatalf("states = %+v", states)
	}
	pending := cmf.PendingToolCalls(msgs)
	if len(pending) != 1 || pending[0].Call.ToolCallID != "b" || pending[0].ApprovalID != "ap" {
		t.Fatalf("pending = %+v (the old turn's client call is not the last turn's)", pending)
	}
	if cmf.PendingToolCalls(nil) != nil {
		t.Fatal("pending calls in nothing")
	}
}

// The records written before the UI extension are read into it; one
// that does not parse stays where it was; new records win over legacy
// ones for the same call.
func TestLegacyRecordsMigrate(t *testing.T) {
	var m cmf.Message
	raw := `{"role":"tool","content":[],"extensions":{` +
		`"ui":{"calls":{"c":{"client":true}}},` +
		`"custom":{"agentui.calls":{"c":{"approval_id":"x"},"d":{"approved":false,"reason":"no"}},"agentui.data":[{"name":"n","value":1,"index":0}],"app":1}}}`
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatal(err)
	}
	if r := m.CallRecord("c"); !r.Client || r.ApprovalID != "" {
		t.Fatalf("c = %+v: the new record should win", r)
	}
	if d := m.CallRecord("d").Decision; d == nil || d.Approved || d.Reason != "no" {
		t.Fatalf("d = %+v", d)
	}
	if len(m.Data()) != 1 || len(m.Extensions.Custom) != 1 {
		t.Fatalf("data %+v, custom %s", m.Data(), m.Extensions.Custom)
	}
	var bad cmf.Message
	if err := json.Unmarshal([]byte(`{"role":"tool","content":[],"extensions":{"custom":{"agentui.calls":[1],"agentui.data":{"x":1}}}}`), &bad); err != nil {
		t.Fatal(err)
	}
	if len(bad.Extensions.Custom) != 2 || bad.Data() != nil {
		t.Fatalf("unparsable legacy records moved: %+v", bad.Extensions)
	}
	var empty cmf.Message
	if err := json.Unmarshal([]byte(`{"role":"tool","content":[],"extensions":{"ui":{"calls":{},"data":[]}}}`), &empty); err != nil {
		t.Fatal(err)
	}
	if empty.Extensions.UI != nil {
		t.Fatal("an empty UI extension survived decoding")
	}
}

func TestUIExtensionValidation(t *testing.T) {
	for name, ui := range map[string]*cmf.UIExtension{
		"empty call id": {Calls: map[string]cmf.CallRecord{"": {}}},
		"bad data":      {Data: []cmf.DataRecord{{Name: "n", Value: json.RawMessage(`{`)}}},
	} {
		m := cmf.Message{Role: cmf.RoleAssistant, Extensions: &cmf.Extensions{UI: ui}}
		var v *cmf.ValidationError
		if err := m.Validate(); !errors.As(err, &v) || !strings.HasPrefix(v.Field, "extensions.ui.") {
			t.Errorf("%s: %v", name, err)
		}
	}
	ok := cmf.Message{Role: cmf.RoleAssistant, Extensions: &cmf.Extensions{UI: &cmf.UIExtension{
		Calls: map[string]cmf.CallRecord{"c": {Decision: &cmf.Decision{Approved: true, EditedArguments: json.RawMessage(`{"a": 1}`)}}},
	}}}
	b, err := json.Marshal(ok)
	if err != nil {
		t.Fatal(err)
	}
	var back cmf.Message
	if err := json.Unmarshal(b, &back); err != nil || string(back.CallRecord("c").Decision.EditedArguments) != `{"a":1}` {
		t.Fatalf("round trip: %v %+v", err, back.CallRecord("c"))
	}
	if err := cmf.CheckExtensionChange(ok.Extensions, &cmf.Extensions{}, 0); err == nil {
		t.Fatal("removing the UI extension is allowed")
	}
}
