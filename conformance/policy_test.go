package conformance

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/agentui/agentui/internal/server"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/policy"
)

// TestVercelPolicy runs the real useChat Chat against a server with the
// demo policies (testutil.DemoPolicies): a denied call, an approval a
// policy requires, and a redacted input, with and without history.
func TestVercelPolicy(t *testing.T) {
	node := testutil.Node(t)
	testutil.NodeModules(t, "js")
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			logs := &testutil.LogBuffer{}
			engine := testutil.DemoEngine(t, policy.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
			ts, _ := startServer(t, server.Config{History: mode.history, Guard: engine})
			batch := &flowBatch{dir: "js", node: node, env: mode.env, args: []string{"vercel.mjs", ts.URL}}
			for _, flow := range []string{"policyDenied", "policyApproval", "policyInput"} {
				t.Run(flow, func(t *testing.T) { t.Log(batch.outcome(t, flow)) })
			}
			t.Cleanup(func() {
				if !strings.Contains(logs.String(), `policy=tmp-only decision=deny reason="files may be deleted only under /tmp"`) {
					t.Errorf("the denial was not logged:\n%s", logs)
				}
			})
		})
	}
}

// TestAGUIPolicy runs the real @ag-ui/client HttpAgent (1.0.0, and 0.0.59
// for the denial) against a server with the demo policies.
func TestAGUIPolicy(t *testing.T) {
	node := testutil.Node(t)
	testutil.NodeModules(t, "js")
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			engine := testutil.DemoEngine(t, policy.WithLogger(slog.New(slog.DiscardHandler)))
			ts, _ := startServer(t, server.Config{History: mode.history, Guard: engine})
			url := ts.URL + "/api/agui"
			for _, run := range [][]string{{"policyDenied"}, {"policyApproval"}, {"policyDenied", "legacy"}} {
				t.Run(strings.Join(run, "-"), func(t *testing.T) {
					t.Parallel()
					t.Log(runNode(t, node, mode.env, append([]string{"agui.mjs", url}, run...)...))
				})
			}
		})
	}
}
