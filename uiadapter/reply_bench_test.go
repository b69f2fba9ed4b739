package uiadapter_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

// BenchmarkReplyCPU is S1's reply (`count to 1000`, 1,007 frames, no
// history) served in-process to a response that discards it: the server's
// own work per reply, without the network's. cpu-ns/op is the process's
// CPU time (the writer goroutine's and the GC's included). To compare two
// versions, run each with -cpu 1, alternating builds over many runs: this
// machine's speed drifts by a fifth from minute to minute.
func BenchmarkReplyCPU(b *testing.B) {
	h := testutil.Must(vercelai.Handler(testutil.DemoLoop(b, nil), uiadapter.WithLogger(testutil.Logger(io.Discard))))
	b.Cleanup(func() { testutil.ShutdownNow(h) })
	b.ReportAllocs()
	cpu := processCPU()
	for i := 0; b.Loop(); i++ {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(testutil.UserMessage(fmt.Sprint("c", i), "u1", "count to 1000")))
		r.Header.Set("Content-Type", "application/json")
		w := &testutil.DiscardWriter{}
		h.ServeHTTP(w, r)
		if w.Status != http.StatusOK || w.Written < 80_000 {
			b.Fatalf("status %d, %d bytes", w.Status, w.Written)
		}
	}
	b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
