package conformance

import (
	"path/filepath"
	"testing"

	"github.com/agentui/agentui/internal/server"
	"github.com/agentui/agentui/internal/testkit/testutil"
)

// TestHistorySurvivesRestart: two turns, a server restart (Redis keeps the
// conversation), and a third turn from a client that sends none of the
// first two: the model still sees them. For useChat and for AG-UI.
func TestHistorySurvivesRestart(t *testing.T) {
	node := testutil.Node(t)
	testutil.NodeModules(t, "js")
	redisURL := testutil.RedisURL(t)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, testutil.Redis(t), prefix)
	cfg := server.Config{History: redisURL, HistoryPrefix: prefix, Secret: "the same secret after the restart"}
	for _, proto := range []string{"vercel", "agui"} {
		t.Run(proto, func(t *testing.T) {
			env := []string{
				"CHAT_ID=restart-" + proto,
				"COOKIE_FILE=" + filepath.Join(t.TempDir(), "cookies.json"),
				"INSTRUCTIONS=" + server.Instructions,
			}
			first, _ := startServer(t, cfg)
			t.Log(runNode(t, node, env, "history.mjs", first.URL, proto+"Turns"))
			first.Close()
			second, _ := startServer(t, cfg)
			t.Log(runNode(t, node, env, "history.mjs", second.URL, proto+"Third"))
		})
	}
}

// TestHistoryFlows: the server's copy is the truth for rewrites, edits,
// regenerations and reloads; one reply at a time per chat; chats belong to
// their scope; see js/history.mjs.
func TestHistoryFlows(t *testing.T) {
	node := testutil.Node(t)
	testutil.NodeModules(t, "js")
	ts, _ := startServer(t, server.Config{History: "memory"})
	env := []string{"INSTRUCTIONS=" + server.Instructions}
	for _, flow := range []string{"vercelRewrite", "aguiRewrite", "vercelEdit", "vercelEditNewId", "vercelRegenerate", "vercelRegenerateOlder", "vercelReload", "vercelStale", "aguiStale", "vercelBusy", "aguiBusy", "vercelOtherScope"} {
		t.Run(flow, func(t *testing.T) {
			t.Parallel()
			t.Log(runNode(t, node, env, "history.mjs", ts.URL, flow))
		})
	}
}
