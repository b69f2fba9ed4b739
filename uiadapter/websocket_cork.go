package uiadapter

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"time"
)

// The WebSocket library writes and flushes each message on its own: one
// system call per chunk, where the SSE stream writes a burst of events
// in one. A corked socket holds what the library flushes while a burst
// is being framed and writes it in one call when the burst ends; outside
// a burst (pings, the close handshake) writes go straight through. Every
// write to the connection has wsSendTimeout: a client that stops reading
// is cut.

// corkedConn is the hijacked connection under the library.
type corkedConn struct {
	net.Conn
	timeout time.Duration // for each write (wsSendTimeout)
	mu      sync.Mutex
	holders int    // bursts being framed
	held    []byte // what they flushed
	err     error  // the first failed write: every later one fails alike
}

const (
	// corkMax bounds what bursts hold: past it, what they hold goes out.
	corkMax = 64 << 10
	// corkKeep is the largest buffer a socket keeps between bursts.
	corkKeep = 4 << 10
)

func (c *corkedConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	if c.holders == 0 {
		return c.writeWithin(p)
	}
	c.held = append(c.held, p...)
	if len(c.held) >= corkMax {
		return len(p), c.flushLocked()
	}
	return len(p), nil
}

// writeWithin writes p to the connection within the timeout; a failure
// stays the connection's.
func (c *corkedConn) writeWithin(p []byte) (int, error) {
	_ = c.Conn.SetWriteDeadline(time.Now().Add(c.timeout))
	n, err := c.Conn.Write(p)
	_ = c.Conn.SetWriteDeadline(time.Time{})
	c.err = err
	return n, err
}

// cork starts a burst: writes are held until its uncork.
func (c *corkedConn) cork() {
	c.mu.Lock()
	c.holders++
	c.mu.Unlock()
}

// uncork ends a burst; the last burst to end writes what was held.
func (c *corkedConn) uncork() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holders--
	if c.holders > 0 || len(c.held) == 0 || c.err != nil {
		return c.err
	}
	return c.flushLocked()
}

func (c *corkedConn) flushLocked() error {
	_, err := c.writeWithin(c.held)
	if cap(c.held) > corkKeep {
		c.held = nil // an idle socket holds no large buffer
	} else {
		c.held = c.held[:0]
	}
	return err
}

// corkingWriter is the handshake's ResponseWriter as the library sees
// it: its Hijack hands over a corkedConn.
type corkingWriter struct {
	http.ResponseWriter
	conn *corkedConn
}

func (w *corkingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if err := brw.Writer.Flush(); err != nil {
		nc.Close()
		return nil, nil, err
	}
	w.conn = &corkedConn{Conn: nc, timeout: wsSendTimeout}
	return w.conn, bufio.NewReadWriter(brw.Reader, bufio.NewWriterSize(w.conn, 4<<10)), nil
}

// WriteHeaderNow writes the 101 through a writer (gin's) that holds the
// status until told to: the library asks for it by this method.
func (w *corkingWriter) WriteHeaderNow() {
	if g, ok := w.ResponseWriter.(interface{ WriteHeaderNow() }); ok {
		g.WriteHeaderNow()
	}
}

func (w *corkingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
