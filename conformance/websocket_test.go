package conformance

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentui/agentui/internal/server"
	"github.com/agentui/agentui/internal/testkit/testutil"
)

// websocketFlows are the flows of js7/websocket.mjs.
var websocketFlows = []string{"chat", "multiplex", "stop", "resume", "steerAndQueue", "interrupt"}

// TestWebSocketTransport runs js7/websocket.mjs's flows: the AI SDK 7's
// Chat over its real WebSocketChatTransport (Node 22), against the
// server with and without history.
func TestWebSocketTransport(t *testing.T) {
	testutil.NodeModules(t, "js7")
	node, err := filepath.Abs(filepath.Join("js7", "node_modules", ".bin", "node"))
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			ts, _ := startServer(t, server.Config{History: mode.history, AISDK7: true})
			for _, flow := range websocketFlows {
				t.Run(flow, func(t *testing.T) {
					t.Parallel()
					out := runNodeIn(t, "js7", node, mode.env, "--preserve-symlinks", "--preserve-symlinks-main", "websocket.mjs", ts.URL, flow)
					if !strings.Contains(out, `"ai":"7.`) || !strings.Contains(out, `"node":"v22.`) {
						t.Fatalf("not AI SDK 7 on Node 22: %s", out)
					}
					t.Log(out)
				})
			}
		})
	}
}
