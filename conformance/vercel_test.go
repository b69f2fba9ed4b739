package conformance

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentui/agentui/internal/server"
	"github.com/agentui/agentui/internal/testkit/testutil"
)

// startServer runs the binary's server in-process on a real port.
func startServer(t *testing.T, cfg server.Config) (*httptest.Server, *testutil.LogBuffer) {
	t.Helper()
	logs := &testutil.LogBuffer{}
	if cfg.Model == "" && len(cfg.Models) == 0 {
		cfg.Model = "demo"
	}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ts.Close()
		_ = srv.Close()
	})
	servers.Store(ts, srv)
	t.Cleanup(func() { servers.Delete(ts) })
	return ts, logs
}

// servers maps each test server startServer started to its server, for
// tests that shut one down.
var servers sync.Map // *httptest.Server → *server.Server

// modes are the two ways the server runs: keeping no history (the client's
// copy is sanitized and used) and keeping it (the client sends only the
// new turn's content that counts).
var modes = []struct {
	name    string
	history string
	env     []string
}{
	{"stateless", "none", []string{"HISTORY=0"}},
	{"history", "memory", []string{"HISTORY=1"}},
}

// runNode runs one script flow in js/ and fails the test with its output
// when it fails.
func runNode(t *testing.T, node string, env []string, args ...string) string {
	t.Helper()
	return runNodeIn(t, "js", node, env, args...)
}

// runNodeIn runs node in dir.
func runNodeIn(t *testing.T, dir, node string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// flowBatch runs flows of one script in one node process in dir, as
// flows.mjs runs them (a few at a time, each a visitor of its own): a
// process per flow would spend more CPU importing the SDKs than running
// the flows. Each flow's subtest asks for its flow with outcome; the
// process starts once every subtest -run selected has asked.
type flowBatch struct {
	dir, node   string
	env         []string
	args, extra []string // before the comma-joined flows (the script, its URL), after them

	mu     sync.Mutex
	wanted []string
	once   sync.Once
	lines  map[string]string // a flow's outcome line (flows.mjs)
	failed map[string]string // a failed flow's error
	output string            // all the process printed
	err    error             // the process failed and no flow said why
}

// outcome is flow's outcome line; t fails when the flow failed. It calls
// t.Parallel, so that the batch starts once all its subtests have asked.
func (b *flowBatch) outcome(t *testing.T, flow string) string {
	t.Helper()
	b.mu.Lock()
	b.wanted = append(b.wanted, flow)
	b.mu.Unlock()
	t.Parallel()
	b.once.Do(b.run)
	if e, failed := b.failed[flow]; failed {
		t.Fatalf("flow %s failed: %s\n--- all the process printed:\n%s", flow, e, b.output)
	}
	line, ok := b.lines[flow]
	if !ok {
		t.Fatalf("flow %s did not report (%v); the process printed:\n%s", flow, b.err, b.output)
	}
	return line
}

func (b *flowBatch) run() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b.mu.Lock()
	args := append(append(slices.Clone(b.args), strings.Join(b.wanted, ",")), b.extra...)
	b.mu.Unlock()
	cmd := exec.CommandContext(ctx, b.node, args...)
	cmd.Env = append(os.Environ(), b.env...)
	cmd.Dir = b.dir
	out, err := cmd.CombinedOutput()
	b.lines, b.failed, b.output, b.err = map[string]string{}, map[string]string{}, string(out), err
	for line := range strings.Lines(b.output) {
		var v struct {
			Flow  string `json:"flow"`
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		}
		if !strings.HasPrefix(line, `{"flow":`) || json.Unmarshal([]byte(line), &v) != nil {
			continue
		}
		b.lines[v.Flow] = strings.TrimSpace(line)
		if !v.OK {
			b.failed[v.Flow] = v.Error
		}
	}
}

// vercelFlows are the flows of js/vercel.mjs.
var vercelFlows = []string{"chat", "metadata", "reasoning", "serverTool", "streamingTool", "approvalGranted", "approvalDenied", "frameworkAgent",
	"clientTool", "regenerate", "branches", "files", "count5000", "modelError", "clientAbort", "stopThenSend", "steer", "queue", "interrupt", "browserQueue", "duplicateCallIds", "resume", "concurrentResumes", "resumeAfterDrop"}

// TestVercelAISDK runs useChat's Chat class through every flow the demo
// model supports; see js/vercel.mjs for what each flow asserts.
func TestVercelAISDK(t *testing.T) {
	node := testutil.Node(t)
	testutil.NodeModules(t, "js")
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			ts, logs := startServer(t, server.Config{History: mode.history})
			batch := &flowBatch{dir: "js", node: node, env: mode.env, args: []string{"vercel.mjs", ts.URL}}
			for _, flow := range vercelFlows {
				t.Run(flow, func(t *testing.T) {
					t.Log(batch.outcome(t, flow))
					switch flow {
					case "clientAbort": // stop() reached the server: the run was cancelled
						if want := map[string]string{"none": "client disconnected; run cancelled", "memory": "run stopped"}[mode.history]; !strings.Contains(logs.String(), want) {
							t.Errorf("the aborted run was not cancelled on the server; log:\n%s", logs)
						}
					case "modelError":
						if !strings.Contains(logs.String(), "the model failed, as asked") {
							t.Errorf("the model error was not logged with its cause; log:\n%s", logs)
						}
					}
				})
			}
		})
	}
}

// TestVercelResumeContinuation: a reload while the reply after an
// approval streams (js/vercel.mjs resumeContinuation), with AI SDK 6 and
// 7. The demo model pauses between words, so the reply is still running
// when the page reloads.
func TestVercelResumeContinuation(t *testing.T) {
	node := testutil.Node(t)
	testutil.NodeModules(t, "js")
	testutil.NodeModules(t, "js7")
	node7, err := filepath.Abs(filepath.Join("js7", "node_modules", ".bin", "node"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v7 := range []bool{false, true} {
		t.Run(map[bool]string{false: "ai6", true: "ai7"}[v7], func(t *testing.T) {
			t.Parallel()
			ts, _ := startServer(t, server.Config{History: "memory", AISDK7: v7, DemoDelay: time.Second})
			if !v7 {
				t.Log(runNode(t, node, []string{"HISTORY=1"}, "vercel.mjs", ts.URL, "resumeContinuation"))
				return
			}
			out := runNodeIn(t, "js7", node7, []string{"HISTORY=1", "AISDK7=1"}, "--preserve-symlinks", "--preserve-symlinks-main", "vercel.mjs", ts.URL, "resumeContinuation")
			if !strings.Contains(out, `"ai":"7.`) {
				t.Fatalf("not AI SDK 7: %s", out)
			}
			t.Log(out)
		})
	}
}
