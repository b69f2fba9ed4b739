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
	ai6 := &flowBatch{dir: "js", node: node, env: env, args: []string{"vercel.mjs", ts.URL}}
	ai7 := &flowBatch{dir: "js7", node: node22, env: append(env, "AISDK7=1"), args: append(symlinked, "vercel.mjs", ts7.URL)}
	agui := &flowBatch{dir: "js", node: node, env: env, args: []string{"agui.mjs", ts.URL + "/api/agui"}}
	for _, flow := range []string{"steer", "queue", "interrupt", "stopThenSend", "browserQueue", "branches", "files"} {
		t.Run("ai6/"+flow, func(t *testing.T) { t.Log(ai6.outcome(t, flow)) })
		t.Run("ai7/"+flow, func(t *testing.T) { t.Log(ai7.outcome(t, flow)) })
	}
	for _, flow := range []string{"steerAndQueue", "interrupt", "stop"} {
		t.Run("websocket/"+flow, func(t *testing.T) {
			t.Parallel()
			t.Log(runNodeIn(t, "js7", node22, env, append(symlinked, "websocket.mjs", ts7.URL, flow)...))
		})
	}
	for _, flow := range []string{"steer", "queue", "abortThenSend", "files"} {
		t.Run("agui/"+flow, func(t *testing.T) { t.Log(agui.outcome(t, flow)) })
	}
}
