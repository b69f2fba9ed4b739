package wire

import (
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// SSEWriter writes server-sent events to a response. Frames are buffered
// and reach the client on Flush; the handler flushes once per burst of
// events, and at once when the stream goes quiet.
//
// It works through any writer that implements http.Flusher directly or
// via Unwrap (gin's writer, chi's and most middleware), by way of
// [http.ResponseController], and clears the server's write deadline so
// long streams are not cut off by http.Server.WriteTimeout.
type SSEWriter struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	buf    []byte  // nil between flushes: an idle stream holds no buffer
	pooled *[]byte // where buf came from
	err    error
	// WriteTimeout bounds each write; 0: none.
	WriteTimeout time.Duration

	// IDs says frames carry the id of the log entry they come from.
	IDs bool
	id  []byte // that id
	// Mute drops frames (replaying what a resumed client has).
	Mute bool
	mark int // where the frame being built starts in buf

	now     int64 // Unix ms of the burst being written, once read
	clocked bool  // now was read since the last flush
	// held says another goroutine writes the frames (see live): End
	// never writes, however much is buffered.
	held bool
}

// Millis is the time (Unix ms) to stamp the frames of the burst being
// written with: the clock is read at the burst's first stamp and again
// after a flush, since a burst's frames are written within microseconds
// of each other (reading it per frame cost a twentieth of an AG-UI
// reply's CPU).
func (s *SSEWriter) Millis() int64 {
	if !s.clocked {
		s.now, s.clocked = time.Now().UnixMilli(), true
	}
	return s.now
}

// SetID sets the SSE id of the frames that follow: the sequence number of
// the log entry they encode.
func (s *SSEWriter) SetID(seq int64) {
	if s.IDs {
		s.id = strconv.AppendInt(s.id[:0], seq, 10)
	}
}

// flushThreshold bounds the buffer: a burst larger than this is written
// (without an explicit flush) as it grows.
const flushThreshold = 32 << 10

// bufPool lends frame buffers from the first frame of a burst to its
// flush, so thousands of quiet streams share a few buffers rather than
// holding 4 KiB each.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func (s *SSEWriter) buffer() []byte {
	if s.buf == nil {
		s.pooled = bufPool.Get().(*[]byte)
		s.buf = (*s.pooled)[:0]
	}
	return s.buf
}

// putBuffer returns a buffer to the pool; one that grew past the flush
// threshold is left to the GC, so the pool never pins a rare huge burst.
func putBuffer(buf []byte, pooled *[]byte) {
	if pooled != nil && cap(buf) <= 2*flushThreshold {
		*pooled = buf[:0]
		bufPool.Put(pooled)
	}
}

// take hands the frames buffered so far to a writer on another goroutine
// (send), leaving this one empty: the next frame starts a new burst.
func (s *SSEWriter) take() (buf []byte, pooled *[]byte) {
	buf, pooled = s.buf, s.pooled
	s.buf, s.pooled, s.clocked = nil, nil, false
	return buf, pooled
}

// send writes and flushes frames take handed over and returns their
// buffer to the pool: Flush's work, and the live writer's. It touches
// none of the state take's caller guards, so the live writer runs it
// outside that lock, alongside the next burst's encoding.
func (s *SSEWriter) send(buf []byte, pooled *[]byte) error {
	defer putBuffer(buf, pooled)
	s.deadline()
	if len(buf) > 0 {
		if _, err := s.w.Write(buf); err != nil {
			return err
		}
	}
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// buffered is how many bytes wait to be written.
func (s *SSEWriter) buffered() int { return len(s.buf) }

// NewSSEWriter wraps w.
func NewSSEWriter(w http.ResponseWriter) *SSEWriter {
	rc := http.NewResponseController(w)
	// Not every writer supports deadlines (httptest's recorder doesn't);
	// then the server's own deadline, if any, stays.
	_ = rc.SetWriteDeadline(time.Time{})
	return &SSEWriter{w: w, rc: rc}
}

// Start begins a data frame and returns the buffer to append the frame's
// payload (one line of JSON) to; pass the result to End.
func (s *SSEWriter) Start() []byte {
	b := s.buffer()
	s.mark = len(b)
	if s.IDs && len(s.id) > 0 {
		b = append(append(append(b, "id: "...), s.id...), '\n')
	}
	return append(b, "data: "...)
}

// End finishes the frame Start began.
func (s *SSEWriter) End(b []byte) {
	if s.Mute {
		s.buf = b[:s.mark]
		return
	}
	s.buf = append(b, '\n', '\n')
	if len(s.buf) >= flushThreshold && !s.held {
		s.write()
	}
}

// Data writes one data frame.
func (s *SSEWriter) Data(payload []byte) { s.End(append(s.Start(), payload...)) }

// Comment writes an SSE comment line (ignored by clients; keeps a quiet
// connection alive through proxies).
func (s *SSEWriter) Comment(text string) {
	s.buf = append(append(append(s.buffer(), ": "...), text...), '\n', '\n')
}

func (s *SSEWriter) write() {
	if s.err == nil && len(s.buf) > 0 {
		s.deadline()
		_, s.err = s.w.Write(s.buf)
	}
	s.buf = s.buf[:0]
}

// deadline bounds the next write: a client that stops reading fills the
// connection's buffers, and a write that cannot finish in time fails.
func (s *SSEWriter) deadline() {
	if s.WriteTimeout > 0 {
		_ = s.rc.SetWriteDeadline(time.Now().Add(s.WriteTimeout))
	}
}

// Flush sends the buffered frames to the client. It returns the first
// write error (the client went away, or stopped reading for longer than
// the write timeout), and keeps returning it.
func (s *SSEWriter) Flush() error {
	buf, pooled := s.take()
	if s.err != nil {
		putBuffer(buf, pooled)
		return s.err
	}
	s.err = s.send(buf, pooled)
	return s.err
}

// Err is the first write error, if any.
func (s *SSEWriter) Err() error { return s.err }
