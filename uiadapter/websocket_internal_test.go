package uiadapter

import (
	"bytes"
	"errors"
	"net"
	"os"
	"testing"
	"time"
)

// Any bytes a client sends as a frame decode to a frame, an error to
// answer its request with, or nothing to answer; never a panic, and
// never a send or resume that failed its checks.
func FuzzWebSocketFrame(f *testing.F) {
	for _, seed := range []string{
		`{"type":"send","requestId":"r","id":"c","trigger":"submit-message","messages":[],"body":{"busy":"queue"},"headers":{"x":"y"}}`,
		`{"type":"resume","requestId":"r","id":"c","lastSequence":4}`,
		`{"type":"abort","requestId":"r"}`,
		`{"type":"nope","requestId":"r"}`,
		`{"type":"send","requestId":"r","id":1}`,
		`{"requestId":"r","lastSequence":-1}`,
		`not json`, `[]`, `{"requestId":"\u001b"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, err := parseFrame(data)
		if err == nil && fr.Type != "abort" && (fr.ID == nil || fr.check() != nil) {
			t.Fatalf("a frame that fails its checks passed: %s", data)
		}
		if err == nil && fr.RequestID == "" {
			t.Fatalf("a frame without a requestId passed: %s", data)
		}
	})
}

// recordingConn is a net.Conn that records each write to it.
type recordingConn struct {
	net.Conn
	writes [][]byte
}

func (r *recordingConn) Write(p []byte) (int, error) {
	r.writes = append(r.writes, bytes.Clone(p))
	return len(p), nil
}

func (r *recordingConn) SetWriteDeadline(time.Time) error { return nil }

// What bursts write goes out in one write when the last of them ends;
// outside a burst a write goes straight through; past corkMax a burst's
// bytes go out without waiting for its end.
func TestCorkedConnWritesABurstOnce(t *testing.T) {
	rec := &recordingConn{}
	c := &corkedConn{Conn: rec, timeout: time.Second}
	c.cork()
	c.cork() // a second response's burst at the same time
	for _, p := range []string{"a", "b", "c"} {
		if _, err := c.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.uncork(); err != nil || len(rec.writes) != 0 {
		t.Fatalf("after the first burst ended: %v, %q", err, rec.writes)
	}
	if err := c.uncork(); err != nil || len(rec.writes) != 1 || string(rec.writes[0]) != "abc" {
		t.Fatalf("after the last burst ended: %v, %q", err, rec.writes)
	}
	_, _ = c.Write([]byte("ping"))
	if len(rec.writes) != 2 || string(rec.writes[1]) != "ping" {
		t.Fatalf("outside a burst: %q", rec.writes)
	}
	c.cork()
	big := bytes.Repeat([]byte("x"), corkMax)
	_, _ = c.Write(big)
	if len(rec.writes) != 3 || len(rec.writes[2]) != corkMax {
		t.Fatalf("a burst past corkMax was held: %d writes", len(rec.writes))
	}
	if err := c.uncork(); err != nil || len(rec.writes) != 3 {
		t.Fatalf("an empty burst ended with %v, %d writes", err, len(rec.writes))
	}
}

// A peer that stops reading fails the burst's write once the timeout
// has passed, and every later write with it.
func TestCorkedConnCutsAPeerThatStopsReading(t *testing.T) {
	server, client := net.Pipe() // a write waits until the peer reads
	defer client.Close()
	c := &corkedConn{Conn: server, timeout: 50 * time.Millisecond}
	c.cork()
	_, _ = c.Write([]byte("frame"))
	if err := c.uncork(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("uncork: %v, want the deadline exceeded", err)
	}
	if _, err := c.Write([]byte("later")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a later write: %v", err)
	}
}
