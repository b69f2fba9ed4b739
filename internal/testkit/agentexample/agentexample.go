// Package agentexample holds what the agent-framework adapters'
// examples (adapters/eino, adapters/genkit) are tested by alike: the
// real clients against one example, and two replicas of it on one Redis.
// An example takes -addr, -redis, -prefix, -secret and -demo-delay, and
// serves the demo model's grammar with get_weather and delete_file.
package agentexample

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/internal/testkit/testutil"
)

// conformance is where the real clients' scripts are: the repository's
// conformance directory, found from this file.
var conformance = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "conformance")
}()

// RealClients runs the real clients, as their docs wire them, against
// the example program bin builds, on memory and on Redis: useChat's Chat
// on AI SDK 6 and 7 and AG-UI's HttpAgent through a multi-turn chat with
// a tool and approvals (frameworkAgent), and a reload mid-reply that
// resumes it (useChat's resume, AG-UI's reattach).
func RealClients(t *testing.T, bin string) {
	node := testutil.Node(t)
	testutil.NodeModules(t, filepath.Join(conformance, "js"))
	testutil.NodeModules(t, filepath.Join(conformance, "js7"))
	node7, err := filepath.Abs(filepath.Join(conformance, "js7", "node_modules", ".bin", "node"))
	if err != nil {
		t.Fatal(err)
	}
	for _, store := range []string{"memory", "redis"} {
		t.Run(store, func(t *testing.T) {
			args := []string{"-addr", "127.0.0.1:0", "-demo-delay", "5ms"}
			if store == "redis" {
				args = append(args, "-redis", testutil.RedisURL(t), "-prefix", testutil.KeyPrefix())
			}
			p := testutil.RunBuilt(t, bin, nil, args...)
			for _, c := range []struct{ dir, node, script, url, flow string }{
				{"js", node, "vercel.mjs", p.URL, "frameworkAgent"},
				{"js", node, "vercel.mjs", p.URL, "resume"},
				{"js7", node7, "vercel.mjs", p.URL, "frameworkAgent"},
				{"js7", node7, "vercel.mjs", p.URL, "resume"},
				{"js", node, "agui.mjs", p.URL + "/api/agui", "frameworkAgent"},
				{"js", node, "agui.mjs", p.URL + "/api/agui", "reattach"},
			} {
				t.Run(c.dir+"/"+strings.TrimSuffix(c.script, ".mjs")+"/"+c.flow, func(t *testing.T) {
					t.Log(runNode(t, filepath.Join(conformance, c.dir), c.node, c.script, c.url, c.flow))
				})
			}
		})
	}
}

// runNode runs a conformance script with history on, as the conformance
// tests do (js7's scripts are links to js's: their imports resolve in js7).
func runNode(t *testing.T, dir, node, script string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"--preserve-symlinks", "--preserve-symlinks-main", script}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HISTORY=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %s %s: %v\n%s", script, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// AcrossReplicas runs two replicas of the example program bin builds
// on one Redis: a reply started on A is resumed from B while it runs and
// stopped from B; an approval asked on A is answered on B.
func AcrossReplicas(t *testing.T, bin string) {
	args := []string{"-addr", "127.0.0.1:0", "-redis", testutil.RedisURL(t), "-prefix", testutil.KeyPrefix(),
		"-secret", "the replicas share this secret, 32+ bytes long", "-demo-delay", "5ms"}
	a, b := testutil.RunBuilt(t, bin, nil, args...), testutil.RunBuilt(t, bin, nil, args...)

	// A long reply on A; B resumes it mid-reply, then stops it.
	resp, err := http.Post(a.URL+"/api/chat", "application/json", strings.NewReader(testutil.UserMessage("long", "u1", "think: wait 60000 ms")))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	onA := bufio.NewReader(resp.Body)
	readUntil(t, onA, `"type":"reasoning-delta"`)
	var resumed *http.Response
	// The shared log trails A's own by an append at most.
	testutil.Eventually(t, 10*time.Second, "B to see A's run", func() bool {
		if resumed != nil {
			resumed.Body.Close()
		}
		resumed, err = http.Get(b.URL + "/api/chat/long/stream")
		return err == nil && resumed.StatusCode == http.StatusOK
	})
	defer resumed.Body.Close()
	onB := bufio.NewReader(resumed.Body)
	readUntil(t, onB, `"delta":"Thinking `)
	stop, err := http.Post(b.URL+"/api/chat/long/stop", "application/json", nil)
	if err != nil || stop.StatusCode/100 != 2 {
		t.Fatalf("stop on B: %v %v", stop, err)
	}
	stop.Body.Close()
	readUntil(t, onA, `"type":"finish"`)
	readUntil(t, onB, `"type":"finish"`)

	// An approval asked on A, answered on B.
	asked := testutil.PostStream(t, a.URL+"/api/chat", testutil.UserMessage("approve", "u1", "delete /tmp/x.txt"))
	req, avail := asked.Find("tool-approval-request"), asked.Find("tool-input-available")
	if req == nil {
		t.Fatalf("no approval asked: %v", asked)
	}
	body := `{"id":"approve","messages":[{"id":"` + asked.Find("start")["messageId"].(string) + `","role":"assistant","parts":[{"type":"step-start"},` +
		`{"type":"tool-delete_file","toolCallId":"` + avail["toolCallId"].(string) + `","state":"approval-responded","input":{"path":"/tmp/x.txt"},` +
		`"approval":{"id":"` + req["approvalId"].(string) + `","approved":true}}]}]}`
	answered := testutil.PostStream(t, b.URL+"/api/chat", body)
	if got := answered.Text(); got != "Deleted /tmp/x.txt." {
		t.Fatalf("the answer on B: %q (%v)", got, answered)
	}
	if out := answered.Find("tool-output-available"); out == nil || out["toolCallId"] != avail["toolCallId"] {
		t.Fatalf("the call's result on B: %v", answered)
	}
}

// readUntil reads a stream until a line holds want.
func readUntil(t *testing.T, r *bufio.Reader, want string) {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if strings.Contains(line, want) {
			return
		}
		if err != nil {
			t.Fatalf("the stream ended (%v) before %s", err, want)
		}
	}
}
