package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	neturl "net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/internal/wire"
)

// sseData reads a stream's data lines.
type sseData struct{ br *bufio.Reader }

func (s sseData) next(t *testing.T) (string, bool) {
	t.Helper()
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			return "", false
		}
		if d, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "data: "); ok {
			return d, true
		}
	}
}

func (s sseData) rest(t *testing.T) []string {
	var out []string
	for {
		d, ok := s.next(t)
		if !ok {
			return out
		}
		out = append(out, d)
	}
}

// Two replicas of the binary on one real Redis: a reply started on A is
// resumed on B (the whole stream, identical), stopped from B (A cuts it
// within a second), and when A is killed mid-reply, B ends its readers'
// streams, stores the partial reply, runs the messages queued on B behind
// A's reply, and takes the chat's next turn once A's lock lapses.
func TestTwoReplicasShareRuns(t *testing.T) {
	t.Parallel()
	rdb := testutil.Redis(t)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, rdb, prefix)
	args := []string{"-addr", "127.0.0.1:0", "-history", testutil.RedisURL(t), "-history-prefix", prefix,
		"-secret", "replica test secret, 32 bytes or more", "-lock-ttl", "2s", "-demo-delay", "10ms"}
	a := testutil.RunProgram(t, ".", nil, args...)
	b := testutil.RunProgram(t, ".", nil, args...)
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	do := func(method, url, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	// The scope cookie comes with the page, as in a browser; both
	// replicas accept it (same secret).
	do(http.MethodGet, a.URL+"/", "")
	replies := map[string]string{} // the id of each chat's reply, from its start chunk
	startOn := func(url, chat, id, text string) sseData {
		t.Helper()
		resp := do(http.MethodPost, url+"/api/chat", testutil.UserMessage(chat, id, text))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST on %s: %d", url, resp.StatusCode)
		}
		s := sseData{bufio.NewReader(resp.Body)}
		for { // up to the pause the text asks for
			d, ok := s.next(t)
			if !ok {
				t.Fatal("A's stream ended early")
			}
			var c struct{ Type, MessageID string }
			if json.Unmarshal([]byte(d), &c) == nil && c.Type == "start" {
				replies[chat] = c.MessageID
			}
			if strings.Contains(d, `ms"}`) {
				return s
			}
		}
	}
	start := func(chat, text string) sseData { return startOn(a.URL, chat, "u-"+chat, text) }
	resume := func(chat string) *http.Response {
		t.Helper()
		var resp *http.Response
		// The shared log trails A's own by an append at most.
		testutil.Eventually(t, 5*time.Second, "B to see the run", func() bool {
			resp = do(http.MethodGet, b.URL+"/api/chat/"+chat+"/stream", "")
			return resp.StatusCode == http.StatusOK
		})
		return resp
	}

	t.Run("resume on B", func(t *testing.T) {
		s := start("c1", "think: wait 1000 ms")
		replayed := sseData{bufio.NewReader(resume("c1").Body)}.rest(t)
		original := s.rest(t)
		// B's replay is the whole run: what A's reader read up to the
		// pause, then the rest, live.
		n := len(replayed) - len(original)
		if n <= 0 || strings.Join(replayed[n:], "\n") != strings.Join(original, "\n") || !strings.Contains(replayed[n-1], `ms"}`) || replayed[len(replayed)-1] != "[DONE]" {
			t.Fatalf("B replayed:\n%s\n---\nA sent after the pause:\n%s", strings.Join(replayed, "\n"), strings.Join(original, "\n"))
		}
		if resp := do(http.MethodGet, b.URL+"/api/chat/c1/stream", ""); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("resume after the run: %d, want 204", resp.StatusCode)
		}
	})

	t.Run("stop from B", func(t *testing.T) {
		s := start("c2", "think: wait 60000 ms")
		resume("c2") // B knows the run
		begin := time.Now()
		if resp := do(http.MethodPost, b.URL+"/api/chat/c2/stop", ""); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("stop on B: %d", resp.StatusCode)
		}
		rest := s.rest(t)
		took := time.Since(begin)
		t.Logf("stop on B to the end of A's stream: %v", took)
		if took > time.Second || len(rest) < 2 || rest[len(rest)-1] != "[DONE]" || !strings.Contains(rest[len(rest)-2], `"type":"finish"`) {
			t.Fatalf("after %v A's stream ended with %q", took, rest[max(0, len(rest)-3):])
		}
		var msgs []map[string]any
		_ = json.NewDecoder(do(http.MethodGet, b.URL+"/api/chat/c2", "").Body).Decode(&msgs)
		if len(msgs) != 2 || msgs[1]["role"] != "assistant" {
			t.Fatalf("stored after stop: %v", msgs)
		}
	})

	t.Run("sending again on B stops the reply the client showed on A", func(t *testing.T) {
		s := start("c4", "think: wait 60000 ms")
		body, _ := json.Marshal(map[string]any{"id": "c4", "trigger": "submit-message", "messages": []any{
			map[string]any{"id": "u-c4", "role": "user", "parts": []any{map[string]any{"type": "text", "text": "think: wait 60000 ms"}}},
			map[string]any{"id": replies["c4"], "role": "assistant", "parts": []any{map[string]any{"type": "reasoning", "text": "Thinking", "state": "done"}}},
			map[string]any{"id": "u-c4b", "role": "user", "parts": []any{map[string]any{"type": "text", "text": "hello"}}},
		}})
		begin := time.Now()
		resp := do(http.MethodPost, b.URL+"/api/chat", string(body))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("sending again on B: %d", resp.StatusCode)
		}
		answer := sseData{bufio.NewReader(resp.Body)}.rest(t)
		t.Logf("sending again on B to the end of its reply: %v", time.Since(begin))
		if !strings.Contains(strings.Join(answer, "\n"), `"delta":"hello"`) {
			t.Fatalf("B's reply: %q", answer)
		}
		if rest := s.rest(t); rest[len(rest)-1] != "[DONE]" || !strings.Contains(rest[len(rest)-2], `"type":"finish"`) {
			t.Fatalf("A's stream ended with %q", rest[max(0, len(rest)-3):])
		}
		var msgs []struct{ ID, Role string }
		_ = json.NewDecoder(do(http.MethodGet, a.URL+"/api/chat/c4", "").Body).Decode(&msgs)
		if len(msgs) != 4 || msgs[1].ID != replies["c4"] || msgs[3].Role != "assistant" {
			t.Fatalf("stored: %+v", msgs)
		}
	})

	t.Run("a message steered on B reaches the run on A", func(t *testing.T) {
		s := start("c6", "think: wait 5000 ms")
		body, _ := json.Marshal(map[string]any{"id": "c6", "trigger": "submit-message", "busy": "steer", "messages": []any{
			map[string]any{"id": "u-c6", "role": "user", "parts": []any{map[string]any{"type": "text", "text": "think: wait 5000 ms"}}},
			map[string]any{"id": replies["c6"], "role": "assistant", "parts": []any{}},
			map[string]any{"id": "u-c6b", "role": "user", "parts": []any{map[string]any{"type": "text", "text": "hello"}}},
		}})
		resp := do(http.MethodPost, b.URL+"/api/chat", string(body))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("steering on B: %d", resp.StatusCode)
		}
		if answer := strings.Join(sseData{bufio.NewReader(resp.Body)}.rest(t), "\n"); !strings.Contains(answer, `"type":"data-steering"`) || !strings.Contains(answer, `"outcome":"delivered"`) {
			t.Fatalf("B's answer: %s", answer)
		}
		rest := strings.Join(s.rest(t), "\n")
		if !strings.Contains(rest, `"type":"data-steering-message","id":"u-c6b"`) || !strings.Contains(rest, `"delta":"hello"`) {
			t.Fatalf("A's stream: %s", rest)
		}
		var msgs []struct{ ID, Role string }
		_ = json.NewDecoder(do(http.MethodGet, b.URL+"/api/chat/c6", "").Body).Decode(&msgs)
		if len(msgs) != 4 || msgs[2].ID != "u-c6b" || msgs[3].Role != "assistant" {
			t.Fatalf("stored: %+v", msgs)
		}
	})

	t.Run("the replica of the last reply sees the next one", func(t *testing.T) {
		// A produced the chat's last reply, and keeps its log for a while:
		// the chat's next reply, on B, is the one A must show and stop.
		sseData{bufio.NewReader(do(http.MethodPost, a.URL+"/api/chat", testutil.UserMessage("c5", "u-1", "hello")).Body)}.rest(t)
		s := startOn(b.URL, "c5", "u-2", "think: wait 60000 ms")
		testutil.Eventually(t, 5*time.Second, "A to see B's run", func() bool {
			return do(http.MethodGet, a.URL+"/api/chat/c5/stream", "").StatusCode == http.StatusOK
		})
		if resp := do(http.MethodPost, a.URL+"/api/chat/c5/stop", ""); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("stop on A of B's run: %d", resp.StatusCode)
		}
		if rest := s.rest(t); rest[len(rest)-1] != "[DONE]" {
			t.Fatalf("B's stream: %q", rest)
		}
	})

	t.Run("a WebSocket reconnected to B resumes where it was on A", func(t *testing.T) {
		dial := func(url string) *websocket.Conn {
			u, _ := neturl.Parse(url)
			var cookies []string
			for _, c := range jar.Cookies(u) {
				cookies = append(cookies, c.Name+"="+c.Value)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+"/api/chat", &websocket.DialOptions{HTTPHeader: http.Header{"Cookie": {strings.Join(cookies, "; ")}}})
			if err != nil {
				t.Fatal(err)
			}
			c.SetReadLimit(1 << 20)
			t.Cleanup(func() { c.CloseNow() })
			return c
		}
		type frame struct {
			Type     string
			Sequence int
			Chunk    json.RawMessage
		}
		read := func(c *websocket.Conn) frame {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, b, err := c.Read(ctx)
			var f frame
			if err != nil || json.Unmarshal(b, &f) != nil {
				t.Fatalf("read: %v %s", err, b)
			}
			return f
		}
		onA := dial(a.URL)
		send, _ := json.Marshal(map[string]any{"type": "send", "requestId": "s", "id": "c8", "trigger": "submit-message",
			"messages": []any{map[string]any{"id": "u-c8", "role": "user", "parts": []any{map[string]any{"type": "text", "text": "think: wait 1500 ms"}}}}})
		_ = onA.Write(context.Background(), websocket.MessageText, send)
		var got []frame
		for len(got) < 6 {
			got = append(got, read(onA))
		}
		onA.CloseNow() // the connection drops
		onB := dial(b.URL)
		last := got[len(got)-1].Sequence
		resume, _ := json.Marshal(map[string]any{"type": "resume", "requestId": "r", "id": "c8", "lastSequence": last})
		testutil.Eventually(t, 5*time.Second, "B to see the run", func() bool {
			_ = onB.Write(context.Background(), websocket.MessageText, resume)
			return read(onB).Type == "start"
		})
		for f := read(onB); f.Type != "end"; f = read(onB) {
			if f.Type != "chunk" {
				t.Fatalf("B sent %s mid-stream", f.Type)
			}
			got = append(got, f)
		}
		for i, f := range got {
			if f.Sequence != i {
				t.Fatalf("chunk %d numbered %d: a gap or a duplicate", i, f.Sequence)
			}
		}
		// What the client holds is the reply as B replays it (the turn
		// has ended: a client that holds its first chunk gets the rest).
		whole := dial(b.URL)
		again, _ := json.Marshal(map[string]any{"type": "resume", "requestId": "w", "id": "c8", "lastSequence": 0})
		_ = whole.Write(context.Background(), websocket.MessageText, again)
		if f := read(whole); f.Type != "start" {
			t.Fatalf("a whole replay on B: %+v", f)
		}
		for i := 1; ; i++ {
			f := read(whole)
			if f.Type == "end" {
				if i != len(got) {
					t.Fatalf("the whole replay has %d chunks after the first, the client %d", i-1, len(got)-1)
				}
				break
			}
			if string(f.Chunk) != string(got[i].Chunk) {
				t.Fatalf("chunk %d: the client holds %s, B replays %s", i, got[i].Chunk, f.Chunk)
			}
		}
	})

	t.Run("A killed mid-reply", func(t *testing.T) {
		start("c3", "think: wait 60000 ms")
		follower := sseData{bufio.NewReader(resume("c3").Body)}
		if _, ok := follower.next(t); !ok {
			t.Fatal("B's stream ended at once")
		}
		// Two messages queued on B behind A's reply: one whose client
		// waits for its turn, one whose client left.
		queue := func(id, text string) *http.Response {
			body, _ := json.Marshal(map[string]any{"id": "c3", "trigger": "submit-message", "busy": "queue", "messages": []any{
				map[string]any{"id": id, "role": "user", "parts": []any{map[string]any{"type": "text", "text": text}}},
			}})
			resp := do(http.MethodPost, b.URL+"/api/chat", string(body))
			first, _ := sseData{bufio.NewReader(resp.Body)}.next(t)
			if resp.StatusCode != http.StatusOK || !strings.Contains(first, `"outcome":"queued"`) {
				t.Fatalf("queueing %s on B: %d %s", id, resp.StatusCode, first)
			}
			return resp
		}
		waiting := queue("u-q1", "hello")
		queue("u-q2", "hello again").Body.Close()
		a.Signal(t, syscall.SIGKILL)
		killed := time.Now()
		// B runs the reply again, from its last complete step: the step A
		// was streaming is closed and asked of the model again, and B's
		// reader reads on, with no error, until B stops it.
		var seen []string
		for starts := 0; starts < 2; {
			d, ok := follower.next(t)
			if !ok {
				t.Fatalf("B's stream ended after A died: %q", seen[max(0, len(seen)-3):])
			}
			seen = append(seen, d)
			if strings.Contains(d, `"type":"start-step"`) {
				starts++
			}
		}
		t.Logf("SIGKILL to the step run again on B: %v (lock TTL 2s)", time.Since(killed))
		if time.Since(killed) > 30*time.Second || slices.ContainsFunc(seen, func(d string) bool { return strings.Contains(d, `"type":"error"`) }) {
			t.Fatalf("B's stream after A died: %q", seen)
		}
		if resp := do(http.MethodPost, b.URL+"/api/chat/c3/stop", ""); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("stopping the run B took over: %d", resp.StatusCode)
		}
		rest := follower.rest(t)
		if len(rest) < 2 || rest[len(rest)-1] != "[DONE]" || strings.Contains(strings.Join(rest, "\n"), wire.DiedMessage) {
			t.Fatalf("B's stream after its stop: %q", rest[max(0, len(rest)-3):])
		}
		// The queue outlives A: the waiting client gets its turn's reply
		// from B, and the message whose client left runs after it.
		if got := strings.Join(sseData{bufio.NewReader(waiting.Body)}.rest(t), "\n"); !strings.Contains(got, `"type":"start"`) ||
			!strings.Contains(got, `"delta":"hello"`) || !strings.Contains(got, `"type":"finish"`) || strings.Contains(got, `"type":"error"`) {
			t.Fatalf("the queued message's reply on B: %s", got)
		}
		type stored struct {
			ID    string
			Role  string
			Parts []map[string]any
		}
		var msgs []stored
		testutil.Eventually(t, 10*time.Second, "the second queued message to run", func() bool {
			msgs = nil
			_ = json.NewDecoder(do(http.MethodGet, b.URL+"/api/chat/c3", "").Body).Decode(&msgs)
			return len(msgs) == 6 && msgs[5].Role == "assistant"
		})
		if msgs[1].Role != "assistant" || len(msgs[1].Parts) == 0 || msgs[2].ID != "u-q1" || msgs[4].ID != "u-q2" {
			t.Fatalf("stored after A died: %+v", msgs)
		}
		// The reply is stored a moment before its run lets go of the chat
		// and ends its log: a turn sent in between is refused as busy.
		testutil.Eventually(t, 10*time.Second, "the queued run to end", func() bool {
			resp := do(http.MethodGet, b.URL+"/api/chat/c3/stream", "")
			resp.Body.Close()
			return resp.StatusCode == http.StatusNoContent
		})
		resp := do(http.MethodPost, b.URL+"/api/chat", testutil.UserMessage("c3", "u-next", "hello"))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("a new turn on B: %d", resp.StatusCode)
		}
		sseData{bufio.NewReader(resp.Body)}.rest(t)
		msgs = nil
		_ = json.NewDecoder(do(http.MethodGet, b.URL+"/api/chat/c3", "").Body).Decode(&msgs)
		if len(msgs) != 8 || msgs[7].Role != "assistant" {
			t.Fatalf("stored after the next turn: %+v", msgs)
		}
	})
}

// Two replicas on one Redis share a user's rate limit (-rate-limit): two
// runs on A and B, and the third, on either, gets 429 with Retry-After.
func TestTwoReplicasShareARateLimit(t *testing.T) {
	// Hour windows; a test that would straddle the hour's end waits for
	// the next hour to begin first.
	testutil.Eventually(t, 2*time.Minute, "a fresh hour window", func() bool {
		return time.Until(time.Now().Truncate(time.Hour).Add(time.Hour)) > time.Minute
	})
	rdb := testutil.Redis(t)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, rdb, prefix)
	args := []string{"-addr", "127.0.0.1:0", "-history", testutil.RedisURL(t), "-history-prefix", prefix,
		"-secret", "limit test secret, 32 bytes or more", "-rate-limit", "2/h", "-demo-delay", "0s"}
	a := testutil.RunProgram(t, ".", nil, args...)
	b := testutil.RunProgram(t, ".", nil, args...)
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	if resp, err := client.Get(a.URL + "/"); err == nil { // the scope cookie, as a browser gets it
		resp.Body.Close()
	}
	post := func(url, chat string) *http.Response {
		t.Helper()
		resp, err := client.Post(url+"/api/chat", "application/json", strings.NewReader(testutil.UserMessage(chat, "u1", "hello")))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	if ra, rb := post(a.URL, "c1"), post(b.URL, "c2"); ra.StatusCode != 200 || rb.StatusCode != 200 {
		t.Fatalf("runs under the limit: A %d, B %d", ra.StatusCode, rb.StatusCode)
	}
	for _, url := range []string{a.URL, b.URL} {
		resp := post(url, "c3")
		if secs, _ := strconv.Atoi(resp.Header.Get("Retry-After")); resp.StatusCode != http.StatusTooManyRequests || secs < 1 || secs > 3600 {
			t.Fatalf("the third run: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
}

// Two replicas on one Redis share the bound on issuing anonymous scopes
// per client address (-scope-limit): scopes issued on A and B count
// together, and over the bound either answers 429.
func TestTwoReplicasShareTheScopeBound(t *testing.T) {
	testutil.Eventually(t, 2*time.Minute, "a fresh hour window", func() bool {
		return time.Until(time.Now().Truncate(time.Hour).Add(time.Hour)) > time.Minute
	})
	rdb := testutil.Redis(t)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, rdb, prefix)
	args := []string{"-addr", "127.0.0.1:0", "-history", testutil.RedisURL(t), "-history-prefix", prefix,
		"-secret", "scope bound test secret, 32 bytes or more", "-scope-limit", "3/h"}
	a := testutil.RunProgram(t, ".", nil, args...)
	b := testutil.RunProgram(t, ".", nil, args...)
	token := func(url string) int {
		t.Helper()
		resp, err := http.Post(url+"/api/token", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := []int{token(a.URL), token(b.URL), token(a.URL)}; got[0] != 200 || got[1] != 200 || got[2] != 200 {
		t.Fatalf("under the bound: %v", got)
	}
	for _, url := range []string{a.URL, b.URL} {
		if got := token(url); got != http.StatusTooManyRequests {
			t.Fatalf("over the bound on %s: %d", url, got)
		}
		resp, err := http.Get(url + "/") // a page load would issue one too
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests || len(resp.Cookies()) != 0 {
			t.Fatalf("a page load over the bound: %d %v", resp.StatusCode, resp.Cookies())
		}
	}
}

// A request without a credential answers a signed approval itself (no
// history to check it against); on Redis deployments each signed
// approval runs its tool once across the replicas, not once per replica.
func TestTwoReplicasRunACookielessApprovalOnce(t *testing.T) {
	rdb := testutil.Redis(t)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, rdb, prefix)
	args := []string{"-addr", "127.0.0.1:0", "-history", testutil.RedisURL(t), "-history-prefix", prefix,
		"-secret", "approval test secret, 32 bytes or more", "-demo-delay", "0s"}
	a := testutil.RunProgram(t, ".", nil, args...)
	b := testutil.RunProgram(t, ".", nil, args...)
	asked := testutil.PostStream(t, a.URL+"/api/chat", testutil.UserMessage("c1", "m1", "delete notes.txt"))
	req, avail := asked.Find("tool-approval-request"), asked.Find("tool-input-available")
	if req == nil || avail == nil {
		t.Fatalf("no approval request: %v", asked)
	}
	answer, _ := json.Marshal(map[string]any{"id": "c1", "messages": []any{
		map[string]any{"id": "m1", "role": "user", "parts": []any{map[string]any{"type": "text", "text": "delete notes.txt"}}},
		map[string]any{"id": asked.Find("start")["messageId"], "role": "assistant", "parts": []any{map[string]any{
			"type": "tool-delete_file", "toolCallId": avail["toolCallId"], "state": "approval-responded", "input": avail["input"],
			"approval": map[string]any{"id": req["approvalId"], "approved": true, "signature": req["signature"]},
		}}},
	}})
	if got := testutil.PostStream(t, a.URL+"/api/chat", string(answer)).Text(); got != "Deleted notes.txt." {
		t.Fatalf("the answer on A: %q", got)
	}
	resp, err := http.Post(b.URL+"/api/chat", "application/json", strings.NewReader(string(answer)))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict || strings.Contains(string(body), "Deleted") {
		t.Fatalf("the same answer on B: %d %s", resp.StatusCode, body)
	}
}

// A Redis that freezes mid-run (a failover, a paused VM) for less than a
// lock's TTL costs a reader on the other replica nothing: the owner's
// copy to the shared log catches up once Redis answers, the reader waits
// meanwhile, and it gets the whole reply, which is stored whole. Nobody
// is told the server stopped, and nothing claims a partial reply was
// stored.
func TestTwoReplicasOutlastARedisFreeze(t *testing.T) {
	t.Parallel()
	rs := testutil.StartRedis(t)
	args := []string{"-addr", "127.0.0.1:0", "-history", "redis://" + rs.Addr, "-secret", "replica test secret, 32 bytes long!",
		"-lock-ttl", "20s", "-demo-delay", "20ms"}
	a := testutil.RunProgram(t, ".", nil, args...)
	b := testutil.RunProgram(t, ".", nil, args...)
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	get := func(url string) *http.Response {
		t.Helper()
		resp, err := client.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	get(a.URL + "/").Body.Close() // the scope cookie, as a browser gets it
	// The demo echoes it a word every 20 ms: 6 s of deltas.
	long := strings.Repeat("word ", 300) + "end"
	req, _ := http.NewRequest(http.MethodPost, a.URL+"/api/chat", strings.NewReader(testutil.UserMessage("f1", "u1", long)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST on A: %v %v", resp, err)
	}
	owner := sseData{bufio.NewReader(resp.Body)}
	var follower *http.Response
	testutil.Eventually(t, 5*time.Second, "B to see the run", func() bool {
		follower = get(b.URL + "/api/chat/f1/stream")
		return follower.StatusCode == http.StatusOK
	})
	rs.Freeze()
	frozen := time.Now()
	for time.Since(frozen) < 4*time.Second { // the run goes on meanwhile: read A's stream
		if _, ok := owner.next(t); !ok {
			break
		}
	}
	rs.Thaw()
	ownerRest, remote := owner.rest(t), sseData{bufio.NewReader(follower.Body)}.rest(t)
	text := func(frames []string) string {
		var b strings.Builder
		for _, f := range frames {
			var c struct{ Type, Delta string }
			if json.Unmarshal([]byte(f), &c) == nil && c.Type == "text-delta" {
				b.WriteString(c.Delta)
			}
		}
		return b.String()
	}
	if len(ownerRest) == 0 || ownerRest[len(ownerRest)-1] != "[DONE]" {
		t.Fatalf("A's stream ended with %q", ownerRest[max(0, len(ownerRest)-3):])
	}
	got := text(remote)
	if strings.Contains(strings.Join(remote, "\n"), wire.DiedMessage) || got != "You said: "+long || remote[len(remote)-1] != "[DONE]" {
		t.Fatalf("B's stream (%d bytes of text) ended with %q", len(got), remote[max(0, len(remote)-3):])
	}
	var msgs []struct {
		Role  string
		Parts []struct{ Type, Text string }
	}
	_ = json.NewDecoder(get(b.URL + "/api/chat/f1").Body).Decode(&msgs)
	if len(msgs) != 2 || msgs[1].Parts[len(msgs[1].Parts)-1].Text != "You said: "+long {
		t.Fatalf("stored %+v", msgs)
	}
	for _, p := range []*testutil.Program{a, b} {
		if strings.Contains(p.Stderr.String(), "partial reply is stored") {
			t.Fatalf("a replica claims it stored a partial reply:\n%s", p.Stderr)
		}
	}
}
