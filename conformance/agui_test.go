package conformance

import (
	"strings"
	"testing"

	"github.com/agentui/agentui/internal/server"
	"github.com/agentui/agentui/internal/testkit/testutil"
)

// TestAGUI runs @ag-ui/client 1.0.0's HttpAgent through every flow; see
// js/agui.mjs for what each flow asserts.
func TestAGUI(t *testing.T) {
	node := testutil.Node(t)
	testutil.NodeModules(t, "js")
	flows := []string{"samples", "chat", "reasoning", "serverTool", "streamingTool", "frontendTool", "approve", "deny", "frameworkAgent", "cancel",
		"editArgs", "ambiguous", "state", "files", "modelError", "abort", "abortThenSend", "steer", "queue", "duplicateCallIds", "copilotKitDeny", "copilotKitApprove",
		"reload", "reattach"}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			ts, logs := startServer(t, server.Config{History: mode.history})
			batch := &flowBatch{dir: "js", node: node, env: mode.env, args: []string{"agui.mjs", ts.URL + "/api/agui"}}
			for _, flow := range flows {
				t.Run(flow, func(t *testing.T) {
					t.Log(batch.outcome(t, flow))
					if want := map[string]string{"none": "client disconnected; run cancelled", "memory": "run stopped"}[mode.history]; flow == "abort" && !strings.Contains(logs.String(), want) {
						t.Errorf("the aborted run was not cancelled on the server; log:\n%s", logs)
					}
				})
			}
		})
	}
}

// TestAGUILegacyClient runs the pre-1.0 client (@ag-ui/client 0.0.59, which
// declares no protocol version and rejects 1.0-only outcome fields).
func TestAGUILegacyClient(t *testing.T) {
	node := testutil.Node(t)
	testutil.NodeModules(t, "js")
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			ts, _ := startServer(t, server.Config{History: mode.history})
			flows := []string{"chat", "frontendTool", "state", "reload", "reattach", "files"}
			batch := &flowBatch{dir: "js", node: node, env: mode.env, args: []string{"agui.mjs", ts.URL + "/api/agui"}, extra: []string{"legacy"}}
			for _, flow := range flows {
				t.Run(flow, func(t *testing.T) {
					t.Log(batch.outcome(t, flow))
				})
			}
		})
	}
}
