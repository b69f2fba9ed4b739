package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/agentui/agentui/bench/loadgen"
)

// wsChats sends chats over the AI SDK 7's WebSocket transport: one socket
// per worker, kept across its requests as WebSocketChatTransport keeps
// one per page, each request a send frame answered by chunk frames and
// end. A request's frames (its chunks and end) count as an SSE reply's
// (its data frames and [DONE]), so events/s compare across transports.
type wsChats struct {
	url   string
	mu    sync.Mutex
	conns map[int]*websocket.Conn
}

func newWSChats(addr, path string) *wsChats {
	return &wsChats{url: "ws://" + addr + path, conns: map[int]*websocket.Conn{}}
}

// conn is worker's socket, dialled on first use.
func (w *wsChats) conn(ctx context.Context, worker int) (*websocket.Conn, error) {
	w.mu.Lock()
	c := w.conns[worker]
	w.mu.Unlock()
	if c != nil {
		return c, nil
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(dctx, w.url, nil)
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(1 << 20)
	w.mu.Lock()
	w.conns[worker] = c
	w.mu.Unlock()
	return c, nil
}

// drop closes worker's socket after a failure; the next request dials
// again.
func (w *wsChats) drop(worker int) {
	w.mu.Lock()
	c := w.conns[worker]
	delete(w.conns, worker)
	w.mu.Unlock()
	if c != nil {
		c.CloseNow()
	}
}

// close closes every socket, as a round ends.
func (w *wsChats) close() {
	w.mu.Lock()
	conns := w.conns
	w.conns = map[int]*websocket.Conn{}
	w.mu.Unlock()
	for _, c := range conns {
		_ = c.Close(websocket.StatusNormalClosure, "")
	}
}

// exchange returns a loadgen Exchange sending "text" in a fresh chat per
// request (ids from prefix).
func (w *wsChats) exchange(prefix, text string) func(ctx context.Context, worker, seq int, onFirstByte func()) (loadgen.Sample, error) {
	return func(ctx context.Context, worker, seq int, onFirstByte func()) (loadgen.Sample, error) {
		s, _, err := w.chat(ctx, worker, prefix+"-"+strconv.Itoa(seq), text, false, onFirstByte)
		if err != nil {
			w.drop(worker)
		}
		return s, err
	}
}

// wsFrame is a server frame of the transport.
type wsFrame struct {
	Type      string          `json:"type"`
	RequestID string          `json:"requestId"`
	Sequence  int             `json:"sequence"`
	Chunk     json.RawMessage `json:"chunk"`
	ErrorText string          `json:"errorText"`
}

// chat sends one chat request on worker's socket and reads its frames to
// end; with keep it returns the chunk frames.
func (w *wsChats) chat(ctx context.Context, worker int, id, text string, keep bool, onFirstByte func()) (loadgen.Sample, []json.RawMessage, error) {
	var s loadgen.Sample
	c, err := w.conn(ctx, worker)
	if err != nil {
		return s, nil, err
	}
	frame := bodyFor(vercel, id, text)
	frame = append([]byte(`{"type":"send","requestId":"`+id+`",`), frame[1:]...)
	// One watchdog per request, not a timer per frame (the library starts
	// one for each read given a context that can end).
	stop := context.AfterFunc(ctx, func() { c.CloseNow() })
	defer stop()
	start := time.Now()
	if err := c.Write(context.Background(), websocket.MessageText, frame); err != nil {
		return s, nil, err
	}
	var (
		chunks []json.RawMessage
		buf    bytes.Buffer // one buffer for every frame: the client's cost stays small
	)
	for {
		_, r, err := c.Reader(context.Background())
		if err == nil {
			buf.Reset()
			_, err = buf.ReadFrom(r)
		}
		if err != nil {
			return s, nil, err
		}
		b := buf.Bytes()
		if s.Frames == 0 {
			s.TTFB = time.Since(start)
			if onFirstByte != nil {
				onFirstByte()
			}
		}
		s.Frames++
		s.Bytes += int64(len(b))
		// The type comes first in every frame the server writes; only
		// the last frame is decoded whole.
		if bytes.HasPrefix(b, []byte(`{"type":"chunk"`)) {
			if keep {
				chunks = append(chunks, bytes.Clone(b))
			}
			continue
		}
		var f wsFrame
		if err := json.Unmarshal(b, &f); err != nil {
			return s, nil, fmt.Errorf("a frame that is not JSON: %.200s", b)
		}
		if f.RequestID != id {
			return s, nil, fmt.Errorf("a frame for request %q while %q ran", f.RequestID, id)
		}
		s.Latency = time.Since(start)
		switch f.Type {
		case "end":
			s.Status = 200
			return s, chunks, nil
		case "error":
			return s, nil, fmt.Errorf("error frame: %s", f.ErrorText)
		default:
			return s, nil, fmt.Errorf("frame type %q", f.Type)
		}
	}
}

// verifyWebSocket sends "count to 3" over the transport and checks the
// reply chunk by chunk, numbered from 0, as verify does over SSE.
func (w *wsChats) verify(ctx context.Context) error {
	defer w.close()
	_, raw, err := w.chat(ctx, 0, "verify", "count to 3", true, nil)
	if err != nil {
		return err
	}
	var types []string
	var text strings.Builder
	for i, b := range raw {
		var f wsFrame
		if err := json.Unmarshal(b, &f); err != nil {
			return err
		}
		if f.Sequence != i {
			return fmt.Errorf("chunk %d numbered %d", i, f.Sequence)
		}
		var ch frame
		if err := json.Unmarshal(f.Chunk, &ch); err != nil {
			return err
		}
		types = append(types, ch.Type)
		if ch.Type == "text-delta" {
			text.WriteString(ch.Delta)
		}
	}
	want := []string{"start", "start-step", "text-start", "text-delta", "text-delta", "text-delta", "text-end", "finish-step", "finish"}
	if !slices.Equal(types, want) {
		return fmt.Errorf("chunks %v, want %v", types, want)
	}
	if text.String() != "1 2 3 " {
		return errors.New("text " + strconv.Quote(text.String()) + `, want "1 2 3 "`)
	}
	return nil
}
