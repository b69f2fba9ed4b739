package uiadapter_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agentui/agentui/history"
)

// benchSocket dials srv's WebSocket route.
func benchSocket(b *testing.B, url string) *websocket.Conn {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+"/api/chat", nil)
	if err != nil {
		b.Fatal(err)
	}
	c.SetReadLimit(1 << 20)
	b.Cleanup(func() { c.CloseNow() })
	return c
}

// readFrames reads a socket's frames until the end of request id,
// calling first at the first frame of it; it returns how many chunks
// it got.
func readFrames(b *testing.B, c *websocket.Conn, id string, first func()) int {
	chunks := 0
	// A chunk of id is known by its start, as the SSE side counts frames
	// without decoding them: the client's cost stays out of the ratio.
	chunk := []byte(`{"type":"chunk","requestId":` + strconv.Quote(id) + `,`)
	for {
		_, data, err := c.Read(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if bytes.HasPrefix(data, chunk) {
			if first != nil {
				first()
				first = nil
			}
			chunks++
			continue
		}
		var f struct{ Type, RequestID string }
		if err := json.Unmarshal(data, &f); err != nil || f.RequestID != id {
			continue
		}
		if first != nil {
			first()
			first = nil
		}
		switch f.Type {
		case "chunk":
			chunks++
		case "end":
			return chunks
		case "error", "no-active":
			b.Fatalf("request %s: %s", id, data)
		}
	}
}

// BenchmarkReplyTransport: a reply of 1,000 events (count to 996) with
// history, over SSE (POST, the whole body read) and over the WebSocket
// transport (a send frame on an open socket, read to its end), side by
// side: ns/op is a reply; chunks/op what the client got.
func BenchmarkReplyTransport(b *testing.B) {
	srv := runLogServer(b, history.NewMemory(), nil)
	b.Run("sse", func(b *testing.B) {
		n := 0
		for b.Loop() {
			n++
			resp, err := http.Post(srv.URL, "application/json", strings.NewReader(userBody("sse-"+strconv.Itoa(n), "count to 996")))
			if err != nil {
				b.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if frames := strings.Count(string(body), "\n\n"); frames < 1000 {
				b.Fatalf("%d frames", frames)
			}
		}
	})
	b.Run("websocket", func(b *testing.B) {
		c := benchSocket(b, srv.URL)
		n := 0
		for b.Loop() {
			n++
			id := "ws-" + strconv.Itoa(n)
			frame, _ := json.Marshal(wsSend(id, id, "count to 996"))
			if err := c.Write(context.Background(), websocket.MessageText, frame); err != nil {
				b.Fatal(err)
			}
			if chunks := readFrames(b, c, id, nil); chunks < 1000 {
				b.Fatalf("%d chunks", chunks)
			}
		}
	})
}

// BenchmarkResumeTTFBOverWebSocket: BenchmarkResumeTTFB's finished run
// of 1,000 events resumed over a WebSocket (resume with lastSequence 0,
// so an ended run is replayed), on the replica that ran it (local) and
// on another one that reads the shared Redis log: the time from the
// resume frame to the first frame back (start), p50 and p99. The target
// is SSE's: at most 10 ms on loopback.
func BenchmarkResumeTTFBOverWebSocket(b *testing.B) {
	for _, rl := range runLogs {
		b.Run(rl.name, func(b *testing.B) {
			owner, reader := runLogReplicas(b, rl.open)
			resp, err := http.Post(owner.URL, "application/json", strings.NewReader(userBody("r", "count to 996")))
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, bufio.NewReader(resp.Body))
			resp.Body.Close()
			c := benchSocket(b, reader.URL)
			var ttfbs []time.Duration
			n := 0
			for b.Loop() {
				n++
				id := "r-" + strconv.Itoa(n)
				frame, _ := json.Marshal(map[string]any{"type": "resume", "requestId": id, "id": "r", "lastSequence": 0})
				start := time.Now()
				if err := c.Write(context.Background(), websocket.MessageText, frame); err != nil {
					b.Fatal(err)
				}
				if chunks := readFrames(b, c, id, func() { ttfbs = append(ttfbs, time.Since(start)) }); chunks < 990 {
					b.Fatalf("resumed %d chunks", chunks)
				}
			}
			slices.Sort(ttfbs)
			b.ReportMetric(float64(ttfbs[len(ttfbs)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(ttfbs[len(ttfbs)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
