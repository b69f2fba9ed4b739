package conformance

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentui/agentui/internal/server"
	"github.com/agentui/agentui/internal/testkit/testutil"
)

// TestRedriveThroughRealClients: a replica shuts down while the step of
// a reply streams, with another replica on the same Redis; it hands the
// run over, the other runs the step again, and the real clients reading
// the reply on the first get the voided step replaced: AI SDK 7's Chat
// (reset-step), AI SDK 6's Chat (the step closed, then the new one, and
// a data-reset-step part; the stored reply the new step only), and
// @ag-ui/client (MESSAGES_SNAPSHOT). See the redrive flows.
func TestRedriveThroughRealClients(t *testing.T) {
	node := testutil.Node(t)
	testutil.NodeModules(t, "js")
	testutil.NodeModules(t, "js7")
	node22, err := filepath.Abs(filepath.Join("js7", "node_modules", ".bin", "node"))
	if err != nil {
		t.Fatal(err)
	}
	// replicas starts two replicas of one app on Redis, and a route that
	// shuts the first down with a 1.5 s grace: shorter than the reply.
	replicas := func(t *testing.T, v7 bool) (a, b, drain string) {
		cfg := server.Config{History: testutil.RedisURL(t), HistoryPrefix: testutil.KeyPrefix(), HistoryTTL: 10 * time.Minute,
			Secret: "redrive test secret, 32 bytes or more", DemoDelay: 20 * time.Millisecond, LockTTL: 2 * time.Second, AISDK7: v7}
		first, _ := startServer(t, cfg)
		second, _ := startServer(t, cfg)
		v, _ := servers.Load(first)
		srv := v.(*server.Server)
		d := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
				defer cancel()
				_ = srv.Shutdown(ctx)
			}()
			w.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(d.Close)
		return first.URL, second.URL, d.URL
	}
	symlinked := []string{"--preserve-symlinks", "--preserve-symlinks-main"}
	t.Run("ai6", func(t *testing.T) {
		t.Parallel()
		a, b, drain := replicas(t, false)
		t.Log(runNode(t, node, []string{"HISTORY=1", "DRAIN=" + drain, "OTHER=" + b}, "vercel.mjs", a, "redrive"))
	})
	t.Run("ai7", func(t *testing.T) {
		t.Parallel()
		a, b, drain := replicas(t, true)
		t.Log(runNodeIn(t, "js7", node22, []string{"HISTORY=1", "AISDK7=1", "DRAIN=" + drain, "OTHER=" + b}, append(symlinked, "vercel.mjs", a, "redrive")...))
	})
	t.Run("agui", func(t *testing.T) {
		t.Parallel()
		a, _, drain := replicas(t, false)
		t.Log(runNode(t, node, []string{"HISTORY=1", "DRAIN=" + drain}, "agui.mjs", a+"/api/agui", "redrive"))
	})
}
