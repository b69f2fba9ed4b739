package wire

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/agent"
)

func TestSSEWriterFrames(t *testing.T) {
	rec := httptest.NewRecorder()
	w := NewSSEWriter(rec)
	w.Data([]byte(`{"a":1}`))
	w.End(append(w.Start(), `{"b":2}`...))
	w.Comment("keep-alive")
	if rec.Body.Len() != 0 {
		t.Fatalf("frames reached the client before Flush: %q", rec.Body)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if want := "data: {\"a\":1}\n\ndata: {\"b\":2}\n\n: keep-alive\n\n"; rec.Body.String() != want || !rec.Flushed {
		t.Fatalf("body %q (flushed %v), want %q", rec.Body, rec.Flushed, want)
	}
	// Between bursts an idle stream holds no buffer; the next burst
	// borrows one again.
	if w.buf != nil || w.pooled != nil {
		t.Fatal("the writer kept its buffer after Flush")
	}
	w.Data([]byte(`3`))
	if err := w.Flush(); err != nil || !strings.HasSuffix(rec.Body.String(), "data: 3\n\n") {
		t.Fatalf("second burst: %q, %v", rec.Body, err)
	}
}

// A burst larger than the threshold is written as it grows, not held.
func TestSSEWriterLargeBurst(t *testing.T) {
	rec := httptest.NewRecorder()
	w := NewSSEWriter(rec)
	payload := []byte(`"` + strings.Repeat("x", 1000) + `"`)
	for range 40 {
		w.Data(payload)
	}
	if rec.Body.Len() == 0 || len(w.buf) >= flushThreshold {
		t.Fatalf("written %d, buffered %d", rec.Body.Len(), len(w.buf))
	}
	if err := w.Flush(); err != nil || strings.Count(rec.Body.String(), "data: ") != 40 {
		t.Fatalf("%d frames, %v", strings.Count(rec.Body.String(), "data: "), err)
	}
}

type failingWriter struct{ http.ResponseWriter }

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("client gone") }

// The first write error sticks: the handler stops the run on it.
func TestSSEWriterError(t *testing.T) {
	w := NewSSEWriter(failingWriter{httptest.NewRecorder()})
	w.Data([]byte(`1`))
	if err := w.Flush(); err == nil {
		t.Fatal("Flush hid the write error")
	}
	w.Data([]byte(`2`))
	if err := w.Flush(); err == nil || w.Err() == nil {
		t.Fatal("the write error did not stick")
	}
}

// The frames of one burst share one reading of the clock; a flush starts
// a new burst, which reads it again.
func TestMillisPerBurst(t *testing.T) {
	w := NewSSEWriter(httptest.NewRecorder())
	nextMilli := func(after int64) {
		for time.Now().UnixMilli() <= after { // wait for the clock to move on (a condition, not a sleep)
			runtime.Gosched()
		}
	}
	first := w.Millis()
	nextMilli(first)
	if got := w.Millis(); got != first {
		t.Fatalf("within a burst the clock was read again: %d, then %d", first, got)
	}
	_ = w.Flush()
	if got := w.Millis(); got <= first {
		t.Fatalf("after a flush the stamp is still %d (was %d)", got, first)
	}
}

// discard is a response that keeps nothing.
type discard struct{ h http.Header }

func (d discard) Header() http.Header       { return d.h }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}
func (discard) Flush()                      {}

// frameEncoder writes one fixed text-delta frame per event: the stream's
// own cost, without a protocol's.
type frameEncoder struct{ sse *SSEWriter }

func (e frameEncoder) Encode(agent.Event) {
	e.sse.End(append(e.sse.Start(), `{"type":"text-delta","id":"t","delta":"x"}`...))
}
func (frameEncoder) Fail(string) {}
func (frameEncoder) Close()      {}

// BenchmarkLiveEmit is one event through a stream without history (see
// live): encoded under the stream's lock and written by its writer
// goroutine in bursts. 0 allocations per event.
func BenchmarkLiveEmit(b *testing.B) {
	sse := NewSSEWriter(discard{http.Header{}})
	l := NewLive(sse, frameEncoder{sse}, 0, func() {})
	ev := &agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: "x"}
	b.ReportAllocs()
	for b.Loop() {
		l.Emit(ev)
	}
	l.End()
	l.Finish()
}
