package conformance

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/agentui/agentui/internal/server"
	"github.com/agentui/agentui/internal/testkit/testutil"
)

// TestRealClientsOnRedisHistory runs the real clients' flows for a
// message sent while a reply runs (steer, queue, interrupt, and Stop then
// send), and for the branches edits and regenerations keep, against a
// server that keeps history, its queue and its branches in Redis: the
// AI SDK 6 and 7 Chat over HTTP, the AI SDK 7 Chat over its WebSocket
// transport, and @ag-ui/client.
func TestRealClientsOnRedisHistory(t *testing.T) {
	node := testutil.Node(t)
	testutil.NodeModules(t, "js")
	testutil.NodeModules(t, "js7")
	node22, err := filepath.Abs(filepath.Join("js7", "node_modules", ".bin", "node"))
	if err != nil {
		t.Fatal(err)
	}
	// The chats expire: the shared Redis keeps nothing of the test.
	redis := func(v7 bool) server.Config {
		return server.Config{History: testutil.RedisURL(t), HistoryPrefix: testutil.KeyPrefix(), HistoryTTL: 10 * time.Minute, AISDK7: v7}
	}
	ts, _ := startServer(t, redis(false))
	ts7, _ := startServer(t, redis(true))
	env := []string{"HISTORY=1"}
	symlinked := []string{"--preserve-symlinks", "--preserve-symlinks-main"}
	type run struct {
		name string
		do   func(t *testing.T) string
	}
	var runs []run
	for _, flow := range []string{"steer", "queue", "interrupt", "stopThenSend", "browserQueue", "branches", "files"} {
		runs = append(runs,
			run{"ai6/" + flow, func(t *testing.T) string { return runNode(t, node, env, "vercel.mjs", ts.URL, flow) }},
			run{"ai7/" + flow, func(t *testing.T) string {
				return runNodeIn(t, "js7", node22, append(env, "AISDK7=1"), append(symlinked, "vercel.mjs", ts7.URL, flow)...)
			}})
	}
	for _, flow := range []string{"steerAndQueue", "interrupt", "stop"} {
		runs = append(runs, run{"websocket/" + flow, func(t *testing.T) string {
			return runNodeIn(t, "js7", node22, env, append(symlinked, "websocket.mjs", ts7.URL, flow)...)
		}})
	}
	for _, flow := range []string{"steer", "queue", "abortThenSend", "files"} {
		runs = append(runs, run{"agui/" + flow, func(t *testing.T) string { return runNode(t, node, env, "agui.mjs", ts.URL+"/api/agui", flow) }})
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			t.Log(r.do(t))
		})
	}
}
