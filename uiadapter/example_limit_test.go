package uiadapter_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/limit"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

// Two runs per user and hour: the third request is refused with 429 and
// Retry-After before anything runs. (history/redisstore.NewLimiter shares
// the count between replicas.)
func ExampleWithLimiter() {
	loop, _ := agent.New(demo.New())
	limiter := limit.NewMemoryLimiter(limit.Limits{Runs: limit.Rate{N: 2, Per: time.Hour}})
	h, _ := vercelai.Handler(loop, uiadapter.WithLimiter(limiter))
	srv := httptest.NewServer(h)
	defer srv.Close()
	for i := range 3 {
		body := fmt.Sprintf(`{"id":"c%d","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"hello"}]}]}`, i)
		resp, _ := http.Post(srv.URL, "application/json", strings.NewReader(body))
		resp.Body.Close()
		fmt.Println(resp.StatusCode, resp.Header.Get("Retry-After") != "")
	}
	// Output:
	// 200 false
	// 200 false
	// 429 true
}
