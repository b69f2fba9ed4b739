package agent_test

import (
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/testutil"
)

// FuzzStoredRecords reads the agentui.calls and agentui.data extensions of
// arbitrary stored messages. Nothing panics, and what comes out is about
// the messages: every pending call is a call in them, waiting for an
// approval or a client and without a result.
func FuzzStoredRecords(f *testing.F) {
	f.Add([]byte(`[{"role":"assistant","content":[{"content_type":"tool_call","tool_call_id":"c","tool_name":"t","arguments":{}}],"extensions":{"custom":{"agentui.calls":{"c":{"approval_id":"a","client":true}},"agentui.data":[{"name":"x","value":null,"index":-5}]}}}]`))
	testutil.FuzzStored(f, func(t *testing.T, msgs []cmf.Message) {
		calls := map[string]bool{}
		for i := range msgs {
			_ = agent.CallInfos(&msgs[i])
			_ = agent.DataRecords(&msgs[i])
			for _, p := range msgs[i].Content {
				if tc, ok := p.(cmf.ToolCall); ok {
					calls[tc.ToolCallID] = true
				}
			}
		}
		for _, p := range agent.PendingCalls(msgs) {
			if !calls[p.ToolCallID] {
				t.Fatalf("pending call %q is not in the messages", p.ToolCallID)
			}
			if p.Kind == agent.PendingApproval && p.ApprovalID == "" {
				t.Fatalf("an approval without an id: %+v", p)
			}
		}
		for _, c := range agent.CallStates(msgs) {
			if c.Result != nil && c.Result.ToolCallID != c.Call.ToolCallID {
				t.Fatalf("call %q holds the result of %q", c.Call.ToolCallID, c.Result.ToolCallID)
			}
		}
	})
}
