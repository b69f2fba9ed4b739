package testutil

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"
)

// InMemoryServer starts an httptest.Server for h whose connections are
// in memory instead of sockets, for a test inside a testing/synctest
// bubble: the real net/http server and client then wait on channels and
// the bubble's timers, so the bubble's clock moves only once the server,
// the client and the runs all wait. A connection buffers what is written
// to it, as a socket's buffers do, so a handler streams on while the test
// does something else. Reach the server through its Client
// (http.DefaultClient dials sockets). It is closed when the test ends.
func InMemoryServer(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	l := &memListener{conns: make(chan net.Conn), closed: make(chan struct{})}
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: h}}
	srv.Start()
	srv.Client().Transport.(*http.Transport).DialContext = l.dial
	t.Cleanup(srv.Close)
	return srv
}

// memListener hands the server one end of a new in-memory connection per
// dial.
type memListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *memListener) Addr() net.Addr { return memAddr("in-memory.test:80") }

func (l *memListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := memPipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type memAddr string

func (memAddr) Network() string  { return "memory" }
func (a memAddr) String() string { return string(a) }

// memPipe returns the two ends of an in-memory connection.
func memPipe() (*memConn, *memConn) {
	a, b := newInbox(), newInbox()
	return &memConn{in: a, out: b, local: "client", remote: "in-memory.test:80"},
		&memConn{in: b, out: a, local: "in-memory.test:80", remote: "client"}
}

// inbox holds what one end has been sent and not yet read. Every change
// closes wake, so that a reader waiting on it (a channel, which a
// synctest bubble counts as durably blocked) looks again.
type inbox struct {
	mu       sync.Mutex
	buf      []byte
	eof      bool // the sender closed its end
	gone     bool // the receiver closed its end
	deadline time.Time
	wake     chan struct{}
}

func newInbox() *inbox { return &inbox{wake: make(chan struct{})} }

// changed wakes the reader; the caller holds mu.
func (b *inbox) changed() {
	close(b.wake)
	b.wake = make(chan struct{})
}

func (b *inbox) read(p []byte) (int, error) {
	for {
		b.mu.Lock()
		switch {
		case b.gone:
			b.mu.Unlock()
			return 0, net.ErrClosed
		case len(b.buf) > 0:
			n := copy(p, b.buf)
			b.buf = b.buf[n:]
			b.mu.Unlock()
			return n, nil
		case b.eof:
			b.mu.Unlock()
			return 0, io.EOF
		case !b.deadline.IsZero() && !time.Now().Before(b.deadline):
			b.mu.Unlock()
			return 0, os.ErrDeadlineExceeded
		}
		wake, deadline := b.wake, b.deadline
		b.mu.Unlock()
		if deadline.IsZero() {
			<-wake
			continue
		}
		timer := time.NewTimer(time.Until(deadline))
		select {
		case <-wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// memConn is one end of an in-memory connection: it reads its inbox and
// writes to the other end's. A write never waits.
type memConn struct {
	in, out       *inbox
	local, remote memAddr

	mu            sync.Mutex
	writeDeadline time.Time
}

func (c *memConn) Read(p []byte) (int, error) { return c.in.read(p) }

func (c *memConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	deadline := c.writeDeadline
	c.mu.Unlock()
	if !deadline.IsZero() && !time.Now().Before(deadline) {
		return 0, os.ErrDeadlineExceeded
	}
	c.out.mu.Lock()
	defer c.out.mu.Unlock()
	if c.out.gone || c.out.eof {
		return 0, net.ErrClosed
	}
	c.out.buf = append(c.out.buf, p...)
	c.out.changed()
	return len(p), nil
}

// Close ends both directions: the other end reads EOF once it has read
// what was sent, and its writes fail.
func (c *memConn) Close() error {
	for _, b := range []*inbox{c.in, c.out} {
		b.mu.Lock()
		if b == c.in {
			b.gone = true
		} else {
			b.eof = true
		}
		b.changed()
		b.mu.Unlock()
	}
	return nil
}

func (c *memConn) LocalAddr() net.Addr  { return c.local }
func (c *memConn) RemoteAddr() net.Addr { return c.remote }

func (c *memConn) SetDeadline(t time.Time) error {
	_ = c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

func (c *memConn) SetReadDeadline(t time.Time) error {
	c.in.mu.Lock()
	c.in.deadline = t
	c.in.changed()
	c.in.mu.Unlock()
	return nil
}

func (c *memConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.writeDeadline = t
	c.mu.Unlock()
	return nil
}
