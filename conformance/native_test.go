package conformance

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentui/agentui/internal/ids"
	"github.com/agentui/agentui/internal/server"
	anthropicfake "github.com/agentui/agentui/internal/testkit/fakes/anthropic"
	"github.com/agentui/agentui/internal/testkit/fakes/gemini"
	"github.com/agentui/agentui/internal/testkit/testutil"
)

// TestNativeModels: chats on the Anthropic, OpenAI Responses and Gemini
// models, each answered by its provider's validating fake, through the
// real clients (AI SDK 6's and 7's Chat, @ag-ui/client's HttpAgent; see
// js/models.mjs): multi-turn, with thinking, a tool that runs and one
// that waits for approval; with history in memory and in Redis, across a
// server restart (on Redis: memory history does not survive one) and
// across two replicas (two processes on one Redis); and chats that
// switch model mid-chat. The fakes refuse what the real APIs refuse, so
// a chat that goes on replayed the right values and dropped the others;
// at the end every request any fake got must have passed, and the switch
// flows' requests are checked for what they carried.
func TestNativeModels(t *testing.T) {
	node := testutil.Node(t)
	testutil.NodeModules(t, "js")
	testutil.NodeModules(t, "js7")
	node7, err := filepath.Abs(filepath.Join("js7", "node_modules", ".bin", "node"))
	if err != nil {
		t.Fatal(err)
	}
	fakes := startProviderFakes(t)
	fakes.setenv(t) // the in-process servers' models read it
	tag := ids.New()
	modelsJSON, _ := json.Marshal(nativeModels)
	// envFor is the flows' environment; each run has its own tag, so its
	// chats are its own (and the fakes' records tell them apart).
	envFor := func(run string, more ...string) []string {
		return append([]string{"MODELS=" + string(modelsJSON), "TAG=" + tag + "-" + run}, more...)
	}
	specs := nativeSpecs()
	perProvider := func(flows ...string) []string {
		var out []string
		for _, f := range flows {
			for _, p := range []string{"anthropic", "responses", "gemini"} {
				out = append(out, f+":"+p)
			}
		}
		return out
	}
	redisURL := testutil.RedisURL(t)
	rdb := testutil.Redis(t)

	t.Run("chats", func(t *testing.T) {
		t.Run("memory", func(t *testing.T) {
			t.Parallel()
			ts, _ := startServer(t, server.Config{Models: specs, History: "memory"})
			flows := append(perProvider("vercel", "agui"), "vercelSwitch", "aguiSwitch")
			out := runNode(t, node, envFor("memory", "HISTORY=1"), append([]string{"models.mjs", ts.URL}, flows...)...)
			t.Log(out)
			fakes.checkCacheReported(t, out, tag+"-memory", "vercel:anthropic")
			fakes.checkCacheReported(t, out, tag+"-memory", "agui:anthropic")
		})
		t.Run("stateless", func(t *testing.T) {
			t.Parallel()
			// Without history the server keeps no provider values and
			// the client's copy carries none: each model treats the
			// earlier steps as another model's, and the chat goes on.
			ts, _ := startServer(t, server.Config{Models: specs, History: "none"})
			t.Log(runNode(t, node, envFor("stateless", "HISTORY=0"), append([]string{"models.mjs", ts.URL}, append(perProvider("vercel", "agui"), "vercelSwitch", "aguiSwitch")...)...))
		})
		t.Run("memory ai7", func(t *testing.T) {
			t.Parallel()
			ts, _ := startServer(t, server.Config{Models: specs, History: "memory", AISDK7: true})
			out := runNodeIn(t, "js7", node7, envFor("ai7", "HISTORY=1", "AISDK7=1"),
				append([]string{"--preserve-symlinks", "--preserve-symlinks-main", "models.mjs", ts.URL}, append(perProvider("vercel"), "vercelSwitch")...)...)
			if !strings.Contains(out, `"ai":"7.`) || !strings.Contains(out, `"node":"v22.`) {
				t.Fatalf("not AI SDK 7 on Node 22: %s", out)
			}
			t.Log(out)
			fakes.checkCacheReported(t, out, tag+"-ai7", "vercel:anthropic")
		})
		t.Run("redis", func(t *testing.T) {
			t.Parallel()
			prefix := testutil.KeyPrefix()
			testutil.DeleteKeysOnCleanup(t, rdb, prefix)
			ts, _ := startServer(t, server.Config{Models: specs, History: redisURL, HistoryPrefix: prefix})
			t.Log(runNode(t, node, envFor("redis", "HISTORY=1"), append([]string{"models.mjs", ts.URL}, perProvider("vercel", "agui")...)...))
		})
		t.Run("restart", func(t *testing.T) {
			t.Parallel()
			prefix := testutil.KeyPrefix()
			testutil.DeleteKeysOnCleanup(t, rdb, prefix)
			cfg := server.Config{Models: specs, History: redisURL, HistoryPrefix: prefix, Secret: "the same secret after the restart"}
			env := envFor("restart", "HISTORY=1", "COOKIE_FILE="+filepath.Join(t.TempDir(), "cookies.json"))
			first, _ := startServer(t, cfg)
			t.Log(runNode(t, node, env, append([]string{"models.mjs", first.URL}, perProvider("vercelBefore", "aguiBefore")...)...))
			first.Close()
			second, _ := startServer(t, cfg)
			t.Log(runNode(t, node, env, append([]string{"models.mjs", second.URL}, perProvider("vercelAfter", "aguiAfter")...)...))
		})
		t.Run("replicas", func(t *testing.T) {
			t.Parallel()
			prefix := testutil.KeyPrefix()
			testutil.DeleteKeysOnCleanup(t, rdb, prefix)
			args := []string{"-addr", "127.0.0.1:0", "-models", strings.Join(specs, ","), "-history", redisURL,
				"-history-prefix", prefix, "-secret", "replica test secret, 32 bytes or more"}
			bin := testutil.BuildProgram(t, "../cmd/agentui")
			a := testutil.RunBuilt(t, bin, fakes.env(), args...)
			b := testutil.RunBuilt(t, bin, fakes.env(), args...)
			out := runNode(t, node, envFor("replicas", "HISTORY=1", "BASE2="+b.URL), append([]string{"models.mjs", a.URL}, perProvider("vercel", "agui")...)...)
			t.Log(out)
			var summary struct{ Served struct{ First, Second int } }
			_ = json.Unmarshal([]byte(lastLine(out)), &summary)
			if summary.Served.First < 12 || summary.Served.Second < 12 { // six chats, four turns and an approval each
				t.Errorf("requests per replica: %+v, want each chat's turns on both", summary.Served)
			}
		})
	})
	if t.Failed() {
		return
	}
	fakes.checkAllPassed(t)
	for _, flow := range []string{tag + "-memory/vercelSwitch", tag + "-ai7/vercelSwitch", tag + "-memory/aguiSwitch"} {
		t.Run(flow[strings.IndexByte(flow, '/')+1:], func(t *testing.T) { fakes.checkSwitch(t, "["+flow+"]") })
	}
}

// checkAllPassed: no fake refused a request. A refusal the server
// recovered from (it does not retry a 400) would fail its chat anyway;
// this says which value was wrong.
func (f *providerFakes) checkAllPassed(t *testing.T) {
	for _, r := range f.anthropic.Requests() {
		if r.Status != 200 {
			t.Errorf("the Anthropic fake refused a request: %d %s", r.Status, r.Error)
		}
	}
	for _, r := range f.responses.Requests() {
		if r.Status != 200 || r.Error != nil {
			t.Errorf("the Responses fake refused a request: %d %+v", r.Status, r.Error)
		}
	}
	for _, r := range f.gemini.Requests() {
		if r.Status != 200 {
			t.Errorf("the Gemini fake refused a request: %d %s", r.Status, r.Message)
		}
	}
}

// checkCacheReported: the usage the last reply of an Anthropic flow
// reported (js/models.mjs prints it, as the client got it) is what the
// fake billed for that turn: the cache read and write its breakpoints
// (on the system prompt and on the last stored message) caused.
func (f *providerFakes) checkCacheReported(t *testing.T, out, tag, flow string) {
	t.Helper()
	var summary struct {
		Flows map[string]struct {
			Usage struct {
				InputTokens, CachedInputTokens, CacheWriteInputTokens int
				InputTokenDetails                                     *struct{ CacheReadTokens, CacheWriteTokens int }
			}
		}
	}
	if err := json.Unmarshal([]byte(lastLine(out)), &summary); err != nil {
		t.Fatalf("the flows' summary: %v", err)
	}
	u := summary.Flows[flow].Usage
	read, write := u.CachedInputTokens, u.CacheWriteInputTokens
	if d := u.InputTokenDetails; d != nil { // AI SDK 7's shape, or 6's for the writes
		read, write = max(read, d.CacheReadTokens), d.CacheWriteTokens
	}
	marker := "[" + tag + "/" + flow + "]"
	var billed *anthropicfake.Request
	for _, r := range f.anthropic.Requests() {
		if s := anthropicSeen(&r); len(s.users) > 0 && s.users[len(s.users)-1] == marker+" bye" && len(s.results) == 0 {
			billed = &r
		}
	}
	if billed == nil {
		t.Fatalf("%s: the fake got no last turn", flow)
	}
	b := billed.Usage
	if read != b.CacheReadInputTokens || write != b.CacheCreationInputTokens || u.InputTokens != b.InputTokens+b.CacheReadInputTokens+b.CacheCreationInputTokens || read == 0 || write == 0 {
		t.Errorf("%s: the reply reported %+v (read %d, write %d); the fake billed %+v", flow, u, read, write, b)
	}
	var system, history bool
	for _, p := range billed.Breakpoints() {
		system = system || strings.HasPrefix(p, "system.")
		history = history || strings.HasPrefix(p, "messages.")
	}
	if !system || !history {
		t.Errorf("%s: cache breakpoints %v, want one on the system prompt and one on the history", flow, billed.Breakpoints())
	}
	t.Logf("%s: the last turn billed %d input tokens: %d read from the cache, %d written to it, breakpoints %v", flow, u.InputTokens, read, write, billed.Breakpoints())
}

// checkSwitch checks what the switch flow's requests carried (see
// vercelSwitch in js/models.mjs for the turns): a model gets back the
// values it produced, and none another model produced.
func (f *providerFakes) checkSwitch(t *testing.T, tag string) {
	A1, A2 := nativeModelID("anthropic", 0), nativeModelID("anthropic", 1)
	R1, R2 := nativeModelID("responses", 0), nativeModelID("responses", 1)
	G1, G2 := nativeModelID("gemini", 0), nativeModelID("gemini", 1)

	// Anthropic: thinking blocks (each with its signature) per request.
	thinking := map[string][]int{}
	for _, r := range f.anthropic.Requests() {
		if !strings.Contains(string(r.Body), tag) {
			continue
		}
		n := 0
		for _, m := range r.Messages() {
			for _, b := range asObjects(m["content"]) {
				if b["type"] == "thinking" || b["type"] == "redacted_thinking" {
					n++
				}
			}
		}
		model, _ := r.Params["model"].(string)
		thinking[model] = append(thinking[model], n)
	}
	// A1 asked for approval (nothing to replay); A2 continued it without
	// A1's thinking; A1, back in turn 6, got its own block again and not
	// A2's.
	want := map[string][]int{A1: {0, 1}, A2: {0}}
	if !equalCounts(thinking, want) {
		t.Errorf("Anthropic thinking blocks per request: %v, want %v", thinking, want)
	}

	// Responses: reasoning items per request.
	reasoning := map[string][]int{}
	for _, r := range f.responses.Requests() {
		if !strings.Contains(string(r.Body), tag) {
			continue
		}
		n := 0
		for _, it := range r.Items() {
			if it["type"] == "reasoning" {
				n++
			}
		}
		model, _ := r.JSON()["model"].(string)
		reasoning[model] = append(reasoning[model], n)
	}
	// R1 asked for approval in turn 4 and got that item back in turn 7;
	// R2 got none of R1's.
	if want := (map[string][]int{R1: {0, 1}, R2: {0}}); !equalCounts(reasoning, want) {
		t.Errorf("Responses reasoning items per request: %v, want %v", reasoning, want)
	}

	// Gemini: thought signatures per request, its own and the sentinel.
	type sigs struct{ own, sentinel int }
	signatures := map[string][]sigs{}
	for _, r := range f.gemini.Requests() {
		if !strings.Contains(string(r.Body), tag) || r.Parsed == nil {
			continue
		}
		var s sigs
		for _, c := range r.Parsed.Contents {
			for _, p := range c.Parts {
				switch {
				case p.ThoughtSignature == "":
				case gemini.IsSentinel(p.ThoughtSignature):
					s.sentinel++
				default:
					s.own++
				}
			}
		}
		signatures[r.Model] = append(signatures[r.Model], s)
	}
	// G1's turn 2: the call step (no signature yet: the history is
	// Anthropic's), then the step after its call (its call's signature).
	// G2's turn 3: none of G1's. G1's continuation of R1's call in turn
	// 4: its turn-2 signatures, and the sentinel on R1's call, a step of
	// the current turn another model made. G1's turn 8: its own, from
	// turns 2 and 4 (R1's step is no longer in the current turn).
	g1 := signatures[G1]
	if len(g1) != 4 || len(signatures[G2]) != 1 || signatures[G2][0] != (sigs{}) ||
		g1[0] != (sigs{}) || g1[1].own == 0 || g1[1].sentinel != 0 ||
		g1[2].sentinel != 1 || g1[2].own < g1[1].own ||
		g1[3].sentinel != 0 || g1[3].own <= g1[2].own {
		t.Errorf("Gemini signatures per request (own, sentinel): %s %v, %s %v", G1, g1, G2, signatures[G2])
	}
}

// nativeModelID is the model id of one of nativeModels.
func nativeModelID(provider string, i int) string {
	spec := nativeModels[provider][i]
	return spec[strings.IndexByte(spec, ':')+1:]
}

func equalCounts(got, want map[string][]int) bool {
	if len(got) != len(want) {
		return false
	}
	for k, w := range want {
		g := got[k]
		if len(g) != len(w) {
			return false
		}
		for i := range w {
			if g[i] != w[i] {
				return false
			}
		}
	}
	return true
}

func asObjects(v any) []map[string]any {
	list, _ := v.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, x := range list {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// lastLine is a node script's summary: the last line it printed.
func lastLine(out string) string {
	out = strings.TrimSpace(out)
	return out[strings.LastIndexByte(out, '\n')+1:]
}
