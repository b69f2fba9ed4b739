package testutil

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
)

// DemoLoop is the demo model with its tools, except that delete_file
// deletes nothing: it counts its runs in deleted, so a test can tell
// whether an approval really ran the tool. It still needs approval.
func DemoLoop(t testing.TB, deleted *atomic.Int32) *agent.Loop {
	t.Helper()
	tools := demo.Tools()
	del := agent.FuncTool("delete_file", "Deletes a file.", func(_ context.Context, in demo.DeleteInput) (map[string]string, error) {
		deleted.Add(1)
		return map[string]string{"deleted": in.Path}, nil
	})
	del.NeedsApproval = agent.Always
	for i := range tools {
		if tools[i].Name == "delete_file" {
			tools[i] = del
		}
	}
	loop, err := agent.New(demo.New(), agent.WithTools(tools...))
	if err != nil {
		t.Fatal(err)
	}
	return loop
}
