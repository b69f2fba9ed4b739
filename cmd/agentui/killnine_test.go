package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/mcptools"
)

// The effects server: an MCP server (the test binary started again by
// each agentui process, see TestMain) whose tools append one line per
// execution to a file all processes share, so that a test counts the
// executions of each call whichever process made them.
const (
	effectsServerEnv = "AGENTUI_TEST_EFFECTS_SERVER"
	effectsFileEnv   = "AGENTUI_TEST_EFFECTS_FILE"
)

// runEffectsServer serves the effects server on stdio. Its tools report
// progress before and after their effect, and pause after each report,
// so a process killed at a report dies before or after the effect:
//   - append (no hints: at most once) appends "append <id>";
//   - append_keyed (idempotentHint) appends "keyed <id> <key>" unless a
//     line has its idempotency key already.
func runEffectsServer() error {
	file := os.Getenv(effectsFileEnv)
	s := sdk.NewServer(&sdk.Implementation{Name: "effects", Version: "1"}, nil)
	type in struct {
		ID string `json:"id"`
	}
	effect := func(ctx context.Context, req *sdk.CallToolRequest, line, key string) (*sdk.CallToolResult, any, error) {
		progress := func(n float64, msg string) error {
			if token := req.Params.GetProgressToken(); token != nil {
				if err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: n, Total: 2, Message: msg}); err != nil {
					return err
				}
			}
			select {
			case <-time.After(100 * time.Millisecond): // a kill may land here
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := progress(1, "about to"); err != nil {
			return nil, nil, err
		}
		f, err := os.OpenFile(file, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, nil, err
		}
		b, err := os.ReadFile(file)
		if err == nil && (key == "" || !strings.Contains(string(b), " "+key+"\n")) {
			_, err = f.WriteString(line + "\n")
		}
		f.Close()
		if err != nil {
			return nil, nil, err
		}
		if err := progress(2, "done"); err != nil {
			return nil, nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "appended"}}}, nil, nil
	}
	sdk.AddTool(s, &sdk.Tool{Name: "append", Description: "Appends a line."},
		func(ctx context.Context, req *sdk.CallToolRequest, in in) (*sdk.CallToolResult, any, error) {
			return effect(ctx, req, "append "+in.ID, "")
		})
	sdk.AddTool(s, &sdk.Tool{Name: "append_keyed", Description: "Appends a line once per idempotency key.", Annotations: &sdk.ToolAnnotations{IdempotentHint: true}},
		func(ctx context.Context, req *sdk.CallToolRequest, in in) (*sdk.CallToolResult, any, error) {
			key, _ := req.Params.Meta[mcptools.IdempotencyKeyMeta].(string)
			if key == "" {
				return nil, nil, fmt.Errorf("no idempotency key")
			}
			return effect(ctx, req, "keyed "+in.ID+" "+key, key)
		})
	return s.Run(context.Background(), &sdk.StdioTransport{})
}

// killRun is one run of the property test: its chat, the tool it calls
// and the stream of the request that started it.
type killRun struct {
	chat, tool string
	done       chan struct{} // closed when its first reader's stream ends
	mu         sync.Mutex
	frames     []string // the data of each frame its first reader read
	lastID     int64    // the SSE id of the last of them
	// vanished: its process died before the shared log had the run
	// (within its first copy, 20 ms): nobody can resume it.
	vanished bool
}

// The kill -9 property: three processes of the binary on one Redis, with
// a tool whose executions are counted (the effects server). In each
// round, five runs start on one process, which is killed (SIGKILL) when
// one of them, picked at random, has streamed a random number of frames:
// 50 runs cut at random points, before, during and after their tool's
// effect. Another process takes over each run (re-drive), and a reader
// there resumes it from the last event its first reader saw. Then:
//   - an at-most-once tool (append) ran at most once per call, and a
//     call that did not run to its result is reported unknown;
//   - an idempotent tool (append_keyed) had its effect at most once per
//     call (its key), and every call has its result;
//   - no call is lost (neither executed nor reported);
//   - every run finished, and every resumed stream goes on from the
//     event after the last one seen, numbered upwards, to its end.
//
// The seed is printed; AGENTUI_PROPERTY_SEED replays one.
func TestKillNineProperty(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("AGENTUI_PROPERTY_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (AGENTUI_PROPERTY_SEED=%d replays it)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	rdb := testutil.Redis(t)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, rdb, prefix)
	dir := t.TempDir()
	effects := filepath.Join(dir, "effects")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	servers, _ := json.Marshal(map[string]any{"servers": []any{map[string]any{"name": "fx", "command": []string{self}, "approval": "never"}}})
	mcpFile := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(mcpFile, servers, 0o600); err != nil {
		t.Fatal(err)
	}
	const lockTTL = time.Second
	env := []string{effectsServerEnv + "=1", effectsFileEnv + "=" + effects}
	args := []string{"-addr", "127.0.0.1:0", "-history", testutil.RedisURL(t), "-history-prefix", prefix,
		"-secret", "kill nine test secret, 32 bytes or more", "-lock-ttl", lockTTL.String(), "-demo-delay", "5ms", "-mcp", mcpFile}
	bin := testutil.BuildProgram(t, ".")
	var procs [3]*testutil.Program
	for i := range procs {
		procs[i] = testutil.RunBuilt(t, bin, env, args...)
	}
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	if resp, err := client.Get(procs[0].URL + "/"); err == nil {
		resp.Body.Close()
	}

	var runs []*killRun
	var gaps []time.Duration // from each kill to the next frame of each resumed stream
	for round := range 10 {
		victim := rng.IntN(len(procs))
		var round5 []*killRun
		for i := range 5 {
			tool := "fx_append"
			if (round+i)%2 == 1 {
				tool = "fx_append_keyed"
			}
			r := &killRun{chat: fmt.Sprintf("k%d-%d", round, i), tool: tool, done: make(chan struct{})}
			body := testutil.UserMessage(r.chat, "u-"+r.chat, fmt.Sprintf(`call %s {"id":%q}`, tool, r.chat))
			resp, err := client.Post(procs[victim].URL+"/api/chat", "application/json", strings.NewReader(body))
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("starting %s: %v %v", r.chat, err, resp)
			}
			go func() { // the first reader, until its process dies
				defer close(r.done)
				defer resp.Body.Close()
				br := bufio.NewReader(resp.Body)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					r.mu.Lock()
					if id, ok := strings.CutPrefix(strings.TrimSpace(line), "id: "); ok {
						r.lastID, _ = strconv.ParseInt(id, 10, 64)
					} else if d, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
						r.frames = append(r.frames, d)
					}
					r.mu.Unlock()
				}
			}()
			round5 = append(round5, r)
		}
		// The kill point: when the picked run's first reader has read k
		// frames (or its stream ended first).
		picked, k := round5[rng.IntN(len(round5))], 1+rng.IntN(14)
		testutil.Eventually(t, 20*time.Second, "the kill point", func() bool {
			select {
			case <-picked.done:
				return true
			default:
			}
			return picked.seen() >= k
		})
		procs[victim].Signal(t, syscall.SIGKILL)
		killed := time.Now()
		for _, r := range round5 {
			<-r.done
		}
		// Each run resumed on another process, from the last event seen,
		// while the killed one starts again.
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i, r := range round5 {
			reader := procs[(victim+1+i%2)%len(procs)]
			wg.Go(func() {
				at, err := resumeFrom(client, reader.URL, r)
				mu.Lock()
				defer mu.Unlock()
				if errors.Is(err, errVanished) {
					r.vanished = true
				} else if err != nil {
					t.Errorf("%s: %v", r.chat, err)
					for i, p := range procs {
						for _, line := range strings.Split(p.Stderr.String(), "\n") {
							if strings.Contains(line, "chat="+r.chat+" ") {
								t.Logf("process %d: %s", i, line)
							}
						}
					}
				}
				if !at.IsZero() {
					gaps = append(gaps, at.Sub(killed))
				}
			})
		}
		procs[victim] = testutil.RunBuilt(t, bin, env, args...)
		wg.Wait()
		runs = append(runs, round5...)
	}

	// The effects, counted.
	b, _ := os.ReadFile(effects)
	count := map[string]int{}
	keys := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 {
			count[f[0]+" "+f[1]]++
			if len(f) == 3 {
				if k, ok := keys[f[1]]; ok && k != f[2] {
					t.Errorf("call %s ran under two keys", f[1])
				}
				keys[f[1]] = f[2]
			}
		}
	}
	unknown, ran, vanished := 0, 0, 0
	for _, r := range runs {
		what := map[string]string{"fx_append": "append", "fx_append_keyed": "keyed"}[r.tool]
		n := count[what+" "+r.chat]
		result, stop := storedResult(t, client, procs[0].URL, r.chat)
		switch {
		case r.vanished && (n > 0 || result != ""):
			t.Errorf("%s: a run nobody could resume had its tool run (%d effects, result %q)", r.chat, n, result)
		case r.vanished:
			vanished++ // its message is stored unanswered: the page offers to send it again
		case n > 1:
			t.Errorf("%s: %s had its effect %d times", r.chat, r.tool, n)
		case stop != "end":
			t.Errorf("%s: the run did not finish: %q (result %q)", r.chat, stop, result)
		case result == agent.OutcomeUnknown && r.tool == "fx_append_keyed":
			t.Errorf("%s: an idempotent call reported unknown", r.chat)
		case result == agent.OutcomeUnknown:
			unknown++
		case result != `appended`:
			t.Errorf("%s: result %q", r.chat, result)
		case n == 0:
			t.Errorf("%s: reported run, but no effect", r.chat)
		default:
			ran++
		}
	}
	slices.Sort(gaps)
	if len(gaps) == 0 {
		t.Fatal("no resumed stream got a frame after its kill")
	}
	// A reader looks at a quiet run's lock every tenth of its TTL: the
	// next frame comes once the lock lapses and another process has
	// taken the run over (the maximum is logged; a loaded machine may
	// stretch it).
	if median := gaps[len(gaps)/2]; median > lockTTL+2*time.Second {
		t.Errorf("kill to next frame: median %v, want at most the lock TTL + 2 s", median)
	}
	t.Logf("%d runs cut by %d kills: %d ran to their result, %d at-most-once calls reported unknown, %d died before their first copy to the shared log (no tool had begun); kill to next frame: median %v, max %v (lock TTL %v)",
		len(runs), 10, ran, unknown, vanished, gaps[len(gaps)/2], gaps[len(gaps)-1], lockTTL)
}

// seen is how many frames the run's first reader has read.
func (r *killRun) seen() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.frames)
}

// resumeFrom resumes r's run on the server at url after the last event
// its first reader saw, reads it to its end and checks that it goes on
// numbered upwards from there and ends with the protocol's end. It
// returns when the first new frame came (zero when the first reader
// had read the whole stream).
func resumeFrom(client *http.Client, url string, r *killRun) (time.Time, error) {
	var first time.Time
	if n := len(r.frames); n > 0 && r.frames[n-1] == "[DONE]" {
		return first, nil // its first reader read it to its end
	}
	req, _ := http.NewRequest(http.MethodGet, url+"/api/chat/"+r.chat+"/stream", nil)
	if r.lastID > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(r.lastID, 10))
	}
	resp, err := client.Do(req)
	if err != nil {
		return first, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNoContent {
		return first, errVanished
	}
	if resp.StatusCode != http.StatusOK {
		return first, fmt.Errorf("resume after event %d: %d", r.lastID, resp.StatusCode)
	}
	br := bufio.NewReader(resp.Body)
	last := r.lastID
	var data []string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			break
		}
		line = strings.TrimSpace(line)
		if id, ok := strings.CutPrefix(line, "id: "); ok {
			// One entry may make several frames, under its id: ids go up,
			// and the first is past the last one seen.
			n, _ := strconv.ParseInt(id, 10, 64)
			if n < last || n == r.lastID {
				return first, fmt.Errorf("event %d after %d (resumed after %d)", n, last, r.lastID)
			}
			last = n
			if first.IsZero() {
				first = time.Now()
			}
		} else if d, ok := strings.CutPrefix(line, "data: "); ok {
			data = append(data, d)
		}
	}
	// The one error a resumed stream may end with: its run stored its
	// reply, whole, and died before it could end its log.
	failed := func(d string) bool {
		return strings.Contains(d, `"type":"error"`) && !strings.Contains(d, wire.EndNotShownMessage)
	}
	if len(data) == 0 || data[len(data)-1] != "[DONE]" || slices.ContainsFunc(data, failed) {
		return first, fmt.Errorf("resumed after event %d (after %q): the stream ended with %q", r.lastID, r.frames[max(0, len(r.frames)-3):], data[max(0, len(data)-3):])
	}
	return first, nil
}

// errVanished: the run's process died before the shared log had it.
var errVanished = errors.New("no run to resume")

// storedResult is the stored result of the chat's tool call, and its
// reply's stop reason.
func storedResult(t *testing.T, client *http.Client, url, chat string) (result, stop string) {
	t.Helper()
	resp, err := client.Get(url + "/api/chat/" + chat)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return "", "" // nothing stored: the run's process died before its turn was
	}
	var msgs []struct {
		Role     string
		Metadata struct{ FinishReason string }
		Parts    []struct {
			Type, State string
			Output      json.RawMessage
			ErrorText   string
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&msgs); err != nil {
		t.Fatalf("%s: %v", chat, err)
	}
	for _, m := range msgs {
		for _, p := range m.Parts {
			if strings.HasPrefix(p.Type, "tool-") {
				result = p.ErrorText
				if len(p.Output) > 0 {
					_ = json.Unmarshal(p.Output, &result)
				}
			}
		}
		if m.Role == "assistant" {
			stop = m.Metadata.FinishReason
		}
	}
	if stop == "stop" {
		stop = "end"
	}
	return result, stop
}
