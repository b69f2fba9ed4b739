package server

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentui/agentui/internal/testkit/testutil"
)

// The server's timeouts, over real sockets: a slow body, a chunked body
// that never ends and an idle keep-alive connection would otherwise stay
// open indefinitely. Each connection must be closed within its bound; the
// margin absorbs a loaded machine.
const (
	bound  = 500 * time.Millisecond
	margin = 3 * time.Second
)

// startTimeoutServer runs the binary's http.Server with short timeouts.
func startTimeoutServer(t *testing.T) string {
	t.Helper()
	s, err := New(Config{Model: "demo", BodyTimeout: bound, WriteTimeout: bound, IdleTimeout: bound, ReadHeaderTimeout: bound})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := s.HTTPServer()
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close(); _ = s.Close() })
	return ln.Addr().String()
}

// closedWithin reads the connection until the server closes it and
// returns what it sent and how long that took from start.
func closedWithin(t *testing.T, c net.Conn, start time.Time) (string, time.Duration) {
	t.Helper()
	_ = c.SetReadDeadline(start.Add(bound + margin))
	got, err := io.ReadAll(c)
	// A reset is a close too: the server closed while the client was
	// still sending (the slow body's writer), so its kernel answered the
	// next bytes with RST.
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("the server did not close the connection within %v: %v (read %q)", bound+margin, err, got)
	}
	return string(got), time.Since(start)
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

const chatHeaders = "POST /api/chat HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"

func TestSlowBodyIsCut(t *testing.T) {
	addr := startTimeoutServer(t)
	c := dial(t, addr)
	start := time.Now()
	if _, err := io.WriteString(c, chatHeaders+"Content-Length: 100000\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	// One byte every 100 ms, until the server stops reading.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	got, took := closedWithin(t, c, start)
	if !strings.HasPrefix(got, "HTTP/1.1 408") || !strings.Contains(got, `{"error":"the request body did not arrive in time"}`) {
		t.Fatalf("response %q", got)
	}
	t.Logf("a body at 10 B/s was cut after %v (bound %v)", took, bound)
}

func TestStalledChunkedBodyIsCut(t *testing.T) {
	addr := startTimeoutServer(t)
	c := dial(t, addr)
	start := time.Now()
	if _, err := io.WriteString(c, chatHeaders+"Transfer-Encoding: chunked\r\n\r\n5\r\n{\"id\"\r\n"); err != nil {
		t.Fatal(err)
	}
	got, took := closedWithin(t, c, start)
	if !strings.HasPrefix(got, "HTTP/1.1 408") {
		t.Fatalf("response %q", got)
	}
	t.Logf("a stalled chunked body was cut after %v (bound %v)", took, bound)
}

func TestIdleKeepAliveIsClosed(t *testing.T) {
	addr := startTimeoutServer(t)
	c := dial(t, addr)
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(bound + margin))
	if n, err := r.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("an idle connection was not closed: %d, %v", n, err)
	}
	t.Logf("an idle keep-alive connection was closed after %v (bound %v)", time.Since(start), bound)
}

func TestHeadersMustArrive(t *testing.T) {
	addr := startTimeoutServer(t)
	c := dial(t, addr)
	start := time.Now()
	if _, err := io.WriteString(c, "POST /api/chat HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	closedWithin(t, c, start)
}

// Many slow bodies at once: every connection is cut, and the server's
// goroutines and heap go back to where they were.
func TestSlowBodiesLeaveNothingBehind(t *testing.T) {
	addr := startTimeoutServer(t)
	baseG, baseHeap := testutil.Settle(0, 0)
	const n = 200
	conns := make([]net.Conn, n)
	for i := range conns {
		conns[i] = dial(t, addr)
		// 1 MB promised, 64 KB sent: the server buffers what came.
		body := chatHeaders + "Content-Length: 1000000\r\n\r\n" + strings.Repeat("x", 64<<10)
		if _, err := io.WriteString(conns[i], body); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	for i, c := range conns {
		if got, _ := closedWithin(t, c, start); !strings.HasPrefix(got, "HTTP/1.1 408") {
			t.Fatalf("connection %d: %q", i, got)
		}
	}
	g, heap := testutil.Settle(baseG+5, 10*time.Second)
	t.Logf("goroutines %d → %d, heap %d → %d KiB", baseG, g, baseHeap>>10, heap>>10)
	if g > baseG+5 || heap > baseHeap+8<<20 {
		t.Fatalf("left behind: goroutines %d → %d, heap %d → %d KiB", baseG, g, baseHeap>>10, heap>>10)
	}
}

// A request that no handler reads still has its body bounded: a refused
// Host, an unknown route, a method a route does not take, a foreign
// origin. net/http reads an unread body to its end before answering, to
// keep the connection, so a client trickling a promised body one byte at
// a time would hold the connection for as long as it went on.
func TestRefusedRequestsBodiesAreBounded(t *testing.T) {
	s, err := New(Config{Model: "demo", BodyTimeout: bound, AllowedHosts: []string{"localhost"}, CORSOrigins: []string{"http://app.example"}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := s.HTTPServer()
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close(); _ = s.Close() })
	for _, c := range []struct{ name, head, status string }{
		{"a Host the check refuses", "POST /api/chat HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\n", "403"},
		{"an unknown route", "POST /nothing/here HTTP/1.1\r\nHost: localhost\r\n", "404"},
		{"a method the route does not take", "PUT /api/chat HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n", "405"},
		{"an origin CORS does not list", "POST /api/chat HTTP/1.1\r\nHost: localhost\r\nOrigin: http://evil.example\r\nContent-Type: application/json\r\n", "403"},
		{"a stop with a body from another site", "POST /api/chat/c1/stop HTTP/1.1\r\nHost: localhost\r\nSec-Fetch-Site: cross-site\r\n", "403"},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn := dial(t, ln.Addr().String())
			start := time.Now()
			if _, err := io.WriteString(conn, c.head+"Content-Length: 100000\r\n\r\n{"); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			defer close(stop)
			go func() { // one byte every 100 ms, until the server stops reading
				tick := time.NewTicker(100 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-stop:
						return
					case <-tick.C:
						if _, err := conn.Write([]byte(" ")); err != nil {
							return
						}
					}
				}
			}()
			got, took := closedWithin(t, conn, start)
			if !strings.HasPrefix(got, "HTTP/1.1 "+c.status) {
				t.Fatalf("response %q", got)
			}
			t.Logf("answered %s and closed after %v (bound %v)", c.status, took, bound)
		})
	}
}
