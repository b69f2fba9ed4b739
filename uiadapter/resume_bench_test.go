package uiadapter_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentui/agentui/edge"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/uiadapter"
)

// BenchmarkResumeCPU: a finished 100,000-number reply (`count to
// 100000`, 100,007 frames, about 1.9 MB on the wire) resumed with
// Last-Event-ID 1, on the replica that ran it (local: its own memory
// log) and on another that reads the shared Redis log (remote), served
// in-process to a response that discards it. cpu-ms/op is the process's
// CPU time per resume, the collector's included (Redis's not); each case
// has a loop of its own, so each pays for the collections its own
// garbage sets off. The goal is remote at most 3× local: compare the two
// lines of one run (make bench-runs runs five).
func BenchmarkResumeCPU(b *testing.B) {
	store, l := history.NewMemory(), redisRunLog(b)
	owner, reader := runLogHandler(b, store, l), runLogHandler(b, store, l)
	post := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(userBody("r", "count to 100000")))
	post.Header.Set("Content-Type", "application/json")
	w := &testutil.DiscardWriter{}
	owner.ServeHTTP(w, post) // returns once the run's logs, the shared one first, have ended
	run := w.Header().Get(edge.RunHeader)
	if w.Status != http.StatusOK || run == "" {
		b.Fatalf("the reply: status %d, run %q", w.Status, run)
	}
	for _, c := range []struct {
		name string
		h    *uiadapter.Handler
	}{{"local", owner}, {"remote", reader}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				r := httptest.NewRequest(http.MethodGet, "/api/chat/r/stream", nil)
				r.SetPathValue("id", "r")
				r.Header.Set("Last-Event-ID", run+":1")
				w := &testutil.DiscardWriter{}
				c.h.ResumeHandler(nil).ServeHTTP(w, r)
				if w.Status != http.StatusOK || w.Written < 1_800_000 {
					b.Fatalf("resume: status %d, %d bytes", w.Status, w.Written)
				}
			}
			b.ReportMetric(float64((processCPU()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}
