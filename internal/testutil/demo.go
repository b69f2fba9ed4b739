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
	del := agent.FuncTool("delete_file", "Deletes a file.", func(_ context.Context, in demo.DeleteInput) (map[string]string, error) {
		deleted.Add(1)
		return map[string]string{"deleted": in.Path}, nil
	})
	del.NeedsApproval = agent.Always
	return DemoLoopWith(t, del)
}

// DemoLoopWith is the demo model with its tools, replaced by those of
// replace that have their names.
func DemoLoopWith(t testing.TB, replace ...agent.Tool) *agent.Loop {
	t.Helper()
	tools := demo.Tools()
	for i := range tools {
		for _, r := range replace {
			if tools[i].Name == r.Name {
				tools[i] = r
			}
		}
	}
	loop, err := agent.New(demo.New(), agent.WithTools(tools...))
	if err != nil {
		t.Fatal(err)
	}
	return loop
}
