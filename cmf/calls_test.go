package cmf_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/testkit/testutil"
)

// FuzzToolCallStates folds arbitrary stored messages into tool call
// states. Nothing panics, and what comes out is about the messages: every
// state is a call in them, holding its own result; every pending call is
// one of the last turn's, waiting for an approval (with its id) or a
// client, without a result.
func FuzzToolCallStates(f *testing.F) {
	f.Add([]byte(`[{"role":"assistant","content":[{"content_type":"tool_call","tool_call_id":"c","name":"t","arguments":{}}],"extensions":{"custom":{"agentui.calls":{"c":{"approval_id":"a","client":true}},"agentui.data":[{"name":"x","value":null,"index":-5}]}}}]`))
	f.Add([]byte(`[{"role":"assistant","content":[{"content_type":"tool_call","tool_call_id":"c","name":"t","arguments":{}}],"extensions":{"ui":{"calls":{"c":{"approval_id":"a"}}}}},{"role":"tool","content":[{"content_type":"tool_result","tool_call_id":"c","tool_name":"t","content":"no","is_error":true}],"extensions":{"ui":{"calls":{"c":{"decision":{"approved":false,"reason":"r"}}}}}}]`))
	testutil.FuzzStored(f, func(t *testing.T, msgs []cmf.Message) {
		calls := map[string]bool{}
		for i := range msgs {
			_ = msgs[i].Data()
			for _, p := range msgs[i].Content {
				if tc, ok := p.(cmf.ToolCall); ok {
					calls[tc.ToolCallID] = true
				}
			}
		}
		for _, s := range cmf.ToolCallStates(msgs) {
			if !calls[s.Call.ToolCallID] {
				t.Fatalf("state for call %q, which is not in the messages", s.Call.ToolCallID)
			}
			if s.Result != nil && s.Result.ToolCallID != s.Call.ToolCallID {
				t.Fatalf("call %q holds the result of %q", s.Call.ToolCallID, s.Result.ToolCallID)
			}
		}
		for _, p := range cmf.PendingToolCalls(msgs) {
			if p.Result != nil || !p.Pending() {
				t.Fatalf("pending call with a result or not waiting: %+v", p)
			}
			if p.Status() == cmf.CallAwaitingApproval && p.ApprovalID == "" {
				t.Fatalf("an approval without an id: %+v", p)
			}
		}
		// Whatever was read round-trips: the legacy records come out in
		// the UI extension and stay there.
		b, err := json.Marshal(msgs)
		if err != nil {
			t.Fatal(err)
		}
		var again []cmf.Message
		if err := json.Unmarshal(b, &again); err != nil {
			t.Fatalf("re-decoding: %v", err)
		}
		if !reflect.DeepEqual(cmf.ToolCallStates(msgs), cmf.ToolCallStates(again)) {
			t.Fatal("tool call states differ after a round trip")
		}
	})
}
