package uiadapter_test

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/uiadapter"
)

// BenchmarkDetachedRunFlood is the detached-run flood of the trust model:
// one client starts "count to 100000" in new chats and leaves each at
// once. It reports how many of 60 were accepted and the heap the server
// holds once they have ended (their replies stored, their logs kept for
// the retention), per accepted run.
//
//	go test -run '^$' -bench DetachedRunFlood -benchtime 1x ./uiadapter
func BenchmarkDetachedRunFlood(b *testing.B) {
	for range b.N {
		limits := &uiadapter.RunLimits{}
		f := newHistoryFixture(b, history.NewMemory(), uiadapter.WithRunLimits(limits), uiadapter.WithRunRetention(time.Hour))
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		accepted := 0
		for i := range 60 {
			req, _ := http.NewRequest(http.MethodPost, f.url+"/api/chat", strings.NewReader(userBody(fmt.Sprint("c", i), "count to 100000")))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Scope", "mallory")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				accepted++
			}
		}
		deadline := time.Now().Add(time.Minute)
		for limits.Running() > 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond) // a benchmark's wait for the runs to end
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		held := float64(after.HeapInuse) - float64(before.HeapInuse)
		b.ReportMetric(float64(accepted), "runs-accepted")
		b.ReportMetric(held/float64(max(accepted, 1))/(1<<20), "MiB-held/run")
	}
}
