package uiadapter_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/history/redisstore"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/internal/wire"
	goredis "github.com/redis/go-redis/v9"
)

// With a Redis the test owns: stopped before a request → 503; stopped
// mid-stream → the stream says the reply was not saved and the log says
// why; the server keeps serving; Redis back → it works again.
func TestRedisFaults(t *testing.T) {
	rs := testutil.StartRedis(t)
	rdb := goredis.NewClient(&goredis.Options{Addr: rs.Addr, ContextTimeoutEnabled: true, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	f := newHistoryFixture(t, redisstore.New(rdb))

	// Working.
	if got := f.chat("alice", userBody("c1", "hello")).Text(); got != "You said: hello" {
		t.Fatalf("reply %q", got)
	}

	// Down before the request.
	rs.Stop()
	status, body := f.do("alice", http.MethodPost, "/api/chat", userBody("c2", "hello"))
	if status != 503 || !strings.Contains(body, "history is unavailable") {
		t.Fatalf("Redis down: %d %s", status, body)
	}

	// Down in the middle of a reply.
	rs.Start()
	resp, err := func() (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, f.url+"/api/chat", strings.NewReader(userBody("c3", "wait 300 ms")))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Scope", "alice")
		return http.DefaultClient.Do(req)
	}()
	if err != nil {
		t.Fatal(err)
	}
	r := testutil.NewSSEReader(resp.Body)
	if first, err := r.Next(); err != nil || !strings.Contains(string(first), `"type":"start"`) {
		t.Fatalf("first chunk %s %v", first, err)
	}
	rs.Stop()
	rest := testutil.ReadSSE(t, resp.Body)
	resp.Body.Close()
	joined := strings.Join(rest, "\n")
	if !strings.Contains(joined, `{"type":"error","errorText":"`+wire.SaveFailedMessage+`"}`) || rest[len(rest)-1] != "[DONE]" {
		t.Fatalf("the lost reply was not reported: %q", rest)
	}
	if !strings.Contains(f.logs.String(), "the reply could not be saved") {
		t.Fatalf("not logged:\n%s", f.logs)
	}

	// Back: the server kept serving and works again.
	rs.Start()
	if got := f.chat("alice", userBody("c4", "hello again")).Text(); got != "You said: hello again" {
		t.Fatalf("after Redis came back: %q", got)
	}
}
