package testutil

import (
	"bufio"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// StreamS1 is the S1 scenario in-process: 8 clients (4 per core on 2
// cores) post `count to 1000` to url, each on a chat of its own, read the
// 1,007 frames of each reply, and b reports events/s: frames per second
// over all clients.
func StreamS1(b *testing.B, url string) { StreamS1Frames(b, url, 1007) }

// s1Chats numbers StreamS1's chats across calls: a benchmark runs its
// function more than once (b.N 1, then the rest), and a chat used again
// may still be held by its last run, whose end the client need not wait
// for.
var s1Chats atomic.Int64

// StreamS1Frames is StreamS1 for a server whose replies have want frames
// (a guard that holds text back sends it in one): it reports replies/s
// too, the measure that compares such servers.
func StreamS1Frames(b *testing.B, url string, want int64) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true}}
	var frames, replies atomic.Int64
	b.SetParallelism(4)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Post(url, "application/json", strings.NewReader(UserMessage(fmt.Sprint("c", s1Chats.Add(1)), "u1", "count to 1000")))
			if err != nil {
				b.Error(err)
				return
			}
			n := int64(0)
			var other string // what is not a frame, for the error
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "data: ") {
					n++
				} else if len(other) < 200 {
					other += sc.Text()
				}
			}
			resp.Body.Close()
			if n != want {
				b.Errorf("%d frames, want %d (status %d: %.200s)", n, want, resp.StatusCode, other)
			}
			frames.Add(n)
			replies.Add(1)
		}
	})
	elapsed := time.Since(start).Seconds()
	b.ReportMetric(float64(frames.Load())/elapsed, "events/s")
	b.ReportMetric(float64(replies.Load())/elapsed, "replies/s")
}
