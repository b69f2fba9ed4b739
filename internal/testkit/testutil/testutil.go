// Package testutil finds what black-box tests need outside Go (Node, npm
// packages, Redis) and captures logs. When something is missing a test
// skips and says why; under CI (CI=true) it fails instead, so CI never
// counts a skipped test as passing.
package testutil

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/r3labs/sse/v2"
)

// CI reports whether the tests run under CI.
func CI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v != "" && v != "0" && v != "false"
}

// Missing skips the test with reason, or fails it under CI.
func Missing(t testing.TB, reason string) {
	t.Helper()
	if CI() {
		t.Fatalf("%s (CI=true: missing dependencies fail)", reason)
	}
	t.Skipf("%s (skipped; under CI this fails)", reason)
}

// Node returns the path of the node binary.
func Node(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		Missing(t, "node not found: install Node.js 20+ to run the JavaScript conformance tests")
	}
	return p
}

// NodeModules checks that dir (a JavaScript package) has its dependencies
// installed.
func NodeModules(t testing.TB, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
		abs, _ := filepath.Abs(dir)
		Missing(t, "no node_modules in "+abs+": run `npm ci` there (make test does)")
	}
}

// LogBuffer collects log output safely from many goroutines.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything logged so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// SSEReader reads server-sent events: the data of each event, in order.
// It splits the stream with r3labs/sse's EventStreamReader.
type SSEReader struct {
	r *sse.EventStreamReader
}

// NewSSEReader reads events from body.
func NewSSEReader(body io.Reader) *SSEReader {
	return &SSEReader{r: sse.NewEventStreamReader(body, 16<<20)}
}

// Next returns the data of the next event (its data lines joined), or
// io.EOF at the end of the stream. Comment-only events are skipped.
func (s *SSEReader) Next() ([]byte, error) {
	for {
		ev, err := s.r.ReadEvent()
		if err != nil {
			return nil, err
		}
		var data [][]byte
		for _, line := range bytes.Split(ev, []byte("\n")) {
			if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				data = append(data, bytes.TrimPrefix(v, []byte(" ")))
			}
		}
		if len(data) > 0 {
			return bytes.Join(data, []byte("\n")), nil
		}
	}
}

// ReadSSE reads every event's data to the end of the stream.
func ReadSSE(t testing.TB, body io.Reader) []string {
	t.Helper()
	var out []string
	r := NewSSEReader(body)
	for {
		data, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("reading the event stream: %v", err)
		}
		out = append(out, string(data))
	}
}

// Eventually waits until cond holds, checking every 10 ms, and fails the
// test with what it waited for after timeout: for conditions that come
// true on another goroutine's time, instead of a fixed sleep.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Logger is a debug-level text logger writing to w.
func Logger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Settle waits up to timeout for the goroutine count to fall to
// goroutines (an HTTP server lingers half a second on each closed
// connection so its last bytes are not lost), then returns the count and
// the live heap after a GC. Settle(0, 0) measures a baseline.
func Settle(goroutines int, timeout time.Duration) (int, uint64) {
	deadline := time.Now().Add(timeout)
	for runtime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // a poll interval: the condition is the count
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), ms.HeapInuse
}

// Must returns v, and panics when err is not nil: for constructors in
// tests, whose configuration is the test's own.
func Must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
