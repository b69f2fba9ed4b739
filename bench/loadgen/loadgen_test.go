package loadgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// sseServer writes n frames, flushing in the middle of each frame's
// terminating blank line so the counter must carry "\n" across reads.
func sseServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.URL.Query().Get("n"))
		if err != nil {
			http.Error(w, "n", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for i := range n {
			fmt.Fprintf(w, "data: {\"i\":%d}\n", i)
			f.Flush()
			fmt.Fprint(w, "\n")
			f.Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestStreamCountsFramesAcrossReads(t *testing.T) {
	srv := sseServer(t)
	c := NewClient(1)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"?n=50", nil)
	var body bytes.Buffer
	var firsts atomic.Int32
	s, err := Stream(c, req, &body, func() { firsts.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	if s.Frames != 50 {
		t.Errorf("Frames = %d, want 50", s.Frames)
	}
	if got := bytes.Count(body.Bytes(), []byte("data: ")); got != 50 {
		t.Errorf("kept body has %d frames, want 50", got)
	}
	if firsts.Load() != 1 {
		t.Errorf("onFirstByte called %d times, want 1", firsts.Load())
	}
	if s.TTFB <= 0 || s.TTFB > s.Latency {
		t.Errorf("TTFB %v, Latency %v: want 0 < TTFB ≤ Latency", s.TTFB, s.Latency)
	}
}

func TestStreamStatusError(t *testing.T) {
	srv := sseServer(t)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"?n=x", nil)
	s, err := Stream(NewClient(1), req, nil, nil)
	if !errors.Is(err, ErrStatus) || s.Status != http.StatusBadRequest {
		t.Fatalf("err = %v, status %d; want ErrStatus, 400", err, s.Status)
	}
}

func TestRunRequestsAndMinFrames(t *testing.T) {
	srv := sseServer(t)
	newReq := func(n string) func(int, int) (*http.Request, error) {
		return func(int, int) (*http.Request, error) {
			return http.NewRequest(http.MethodGet, srv.URL+"?n="+n, nil)
		}
	}
	res := Run(context.Background(), Config{Concurrency: 4, Requests: 20, NewRequest: newReq("10"), MinFrames: 10})
	if res.Requests != 20 || res.Errors != 0 || res.Frames != 200 {
		t.Fatalf("got %d requests, %d errors (%v), %d frames; want 20, 0, 200", res.Requests, res.Errors, res.FirstErr, res.Frames)
	}
	if len(res.TTFB) != 20 || len(res.Latency) != 20 || res.RequestsPerSec() <= 0 || res.EventsPerSec() <= 0 {
		t.Fatalf("samples %d/%d, rps %v, eps %v", len(res.TTFB), len(res.Latency), res.RequestsPerSec(), res.EventsPerSec())
	}
	short := Run(context.Background(), Config{Concurrency: 2, Requests: 4, NewRequest: newReq("3"), MinFrames: 10})
	if short.Requests != 0 || short.Errors != 4 || short.FirstErr == nil {
		t.Fatalf("truncated streams: %d ok, %d errors; want 0, 4", short.Requests, short.Errors)
	}
}

func TestRunDuration(t *testing.T) {
	srv := sseServer(t)
	res := Run(context.Background(), Config{
		Concurrency: 2,
		Duration:    100 * time.Millisecond,
		NewRequest: func(int, int) (*http.Request, error) {
			return http.NewRequest(http.MethodGet, srv.URL+"?n=1", nil)
		},
	})
	if res.Requests == 0 || res.Errors != 0 {
		t.Fatalf("%d requests, %d errors (%v)", res.Requests, res.Errors, res.FirstErr)
	}
	if res.Elapsed < 100*time.Millisecond || res.Elapsed > 5*time.Second {
		t.Fatalf("Elapsed = %v", res.Elapsed)
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{50, 50}, {99, 99}, {100, 100}, {0.1, 1}} {
		if got := Percentile(d, c.p); got != c.want {
			t.Errorf("Percentile(%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if Percentile(nil, 50) != 0 {
		t.Error("Percentile of no samples should be 0")
	}
	if got := Percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("one sample: %v", got)
	}
}

func TestRaiseFileLimit(t *testing.T) {
	n, err := RaiseFileLimit()
	if err != nil || n == 0 {
		t.Fatalf("RaiseFileLimit() = %d, %v", n, err)
	}
}
