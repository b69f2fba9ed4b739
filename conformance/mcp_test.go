package conformance

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentui/agentui/internal/server"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/mcptools"
)

// TestMCPThroughRealClients runs an MCP server's tools (examples/mcp's
// notes server, over stdio) through useChat's Chat on AI SDK 6 and 7 and
// through @ag-ui/client (the mcpTools flows of js/vercel.mjs and
// js/agui.mjs): an approval granted and one denied, structured content,
// progress, and an error the server returns. Each client gets a server
// of its own, and so a notes server of its own.
func TestMCPThroughRealClients(t *testing.T) {
	node := testutil.Node(t)
	testutil.NodeModules(t, "js")
	testutil.NodeModules(t, "js7")
	node7, err := filepath.Abs(filepath.Join("js7", "node_modules", ".bin", "node"))
	if err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(t.TempDir(), "notes")
	if out, err := exec.Command("go", "build", "-o", notes, "../examples/mcp/notes").CombinedOutput(); err != nil {
		t.Fatalf("go build notes: %v\n%s", err, out)
	}
	start := func(t *testing.T, history string, v7 bool) string {
		ts, _ := startServer(t, server.Config{History: history, AISDK7: v7, MCP: []mcptools.Server{{Name: "notes", Command: []string{notes}}}})
		return ts.URL
	}
	for _, mode := range modes {
		t.Run("ai6/"+mode.name, func(t *testing.T) {
			t.Parallel()
			t.Log(runNode(t, node, mode.env, "vercel.mjs", start(t, mode.history, false), "mcpTools"))
		})
		t.Run("ai7/"+mode.name, func(t *testing.T) {
			t.Parallel()
			env := append(mode.env[:len(mode.env):len(mode.env)], "AISDK7=1")
			out := runNodeIn(t, "js7", node7, env, "--preserve-symlinks", "--preserve-symlinks-main", "vercel.mjs", start(t, mode.history, true), "mcpTools")
			if !strings.Contains(out, `"ai":"7.`) {
				t.Fatalf("not AI SDK 7: %s", out)
			}
			t.Log(out)
		})
		t.Run("agui/"+mode.name, func(t *testing.T) {
			t.Parallel()
			t.Log(runNode(t, node, mode.env, "agui.mjs", start(t, mode.history, false)+"/api/agui", "mcpTools"))
		})
	}
}
