package conformance

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentui/agentui/internal/server"
	"github.com/agentui/agentui/internal/testkit/testutil"
)

// TestVercelAISDK7 runs js/vercel.mjs's flows with AI SDK 7 (ai@7 needs
// Node 22, which js7/ installs as the npm package node@22): against the
// default server, whose AI SDK 6 chunks AI SDK 7 must accept, and against
// one sending AI SDK 7's tool-approval-response chunks too.
func TestVercelAISDK7(t *testing.T) {
	testutil.NodeModules(t, "js7")
	node, err := filepath.Abs(filepath.Join("js7", "node_modules", ".bin", "node"))
	if err != nil {
		t.Fatal(err)
	}
	for _, chunks := range []struct {
		name string
		v7   bool
	}{{"ai6-chunks", false}, {"ai7-chunks", true}} {
		for _, mode := range modes {
			t.Run(chunks.name+"/"+mode.name, func(t *testing.T) {
				t.Parallel()
				ts, _ := startServer(t, server.Config{History: mode.history, AISDK7: chunks.v7})
				env := mode.env
				if chunks.v7 {
					env = append(env[:len(env):len(env)], "AISDK7=1")
				}
				// The script is a symlink to js/vercel.mjs; keeping the
				// link's path makes its imports resolve in js7/.
				batch := &flowBatch{dir: "js7", node: node, env: env, args: []string{"--preserve-symlinks", "--preserve-symlinks-main", "vercel.mjs", ts.URL}}
				for _, flow := range vercelFlows {
					t.Run(flow, func(t *testing.T) {
						out := batch.outcome(t, flow)
						if !strings.Contains(out, `"ai":"7.`) || !strings.Contains(out, `"node":"v22.`) {
							t.Fatalf("not AI SDK 7 on Node 22: %s", out)
						}
						t.Log(out)
					})
				}
			})
		}
	}
}
