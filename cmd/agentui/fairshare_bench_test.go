package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentui/agentui/internal/testkit/testutil"
)

// BenchmarkFairShare is the fair share of the process's runs, on the
// binary with its defaults, in memory and on Redis. Every reply is a long
// one ("count to 20000": 20,000 deltas, about 110 KB), read by its client.
//
//   - flood: one client address mints 40 anonymous scopes and starts 8
//     replies on each; it gets its share (flood-accepted), and while its
//     replies run, visitors from 20 other addresses each send a message:
//     how many got their reply (visitors-ok) and their time to the first
//     byte (visitor-ttfb-p50-ms, -p99-ms).
//
//   - bound: the process at its bound, 256 replies at once (8 addresses
//     with 28 each, the last 32 places going to 32 other addresses):
//     the peak of the heap in use meanwhile, sampled every 10 ms from
//     the binary's /debug/vars (peak-heap-MiB).
//
//     go test -run '^$' -bench FairShare -benchtime 1x ./cmd/agentui
func BenchmarkFairShare(b *testing.B) {
	bin := testutil.BuildProgram(b, ".")
	for _, mode := range []string{"memory", "redis"} {
		b.Run(mode, func(b *testing.B) {
			for range b.N {
				args := []string{"-addr", "127.0.0.1:0", "-log-level", "error", "-secret", "fair share benchmark secret, 32 bytes"}
				if mode == "redis" {
					rdb := testutil.Redis(b)
					prefix := testutil.KeyPrefix()
					testutil.DeleteKeysOnCleanup(b, rdb, prefix)
					args = append(args, "-history", testutil.RedisURL(b), "-history-prefix", prefix)
				}
				flood := fairShareFlood(b, bin, args)
				b.ReportMetric(float64(flood.accepted), "flood-accepted")
				b.ReportMetric(float64(flood.visitorsOK), "visitors-ok")
				b.ReportMetric(percentile(flood.ttfb, 50), "visitor-ttfb-p50-ms")
				b.ReportMetric(percentile(flood.ttfb, 99), "visitor-ttfb-p99-ms")
				peak, accepted := atTheBound(b, bin, args)
				b.ReportMetric(float64(accepted), "bound-accepted")
				b.ReportMetric(peak, "peak-heap-MiB")
			}
		})
	}
}

// longReply is what every reply of the benchmark asks for.
const longReply = "count to 20000"

type floodResult struct {
	accepted, visitorsOK int
	ttfb                 []float64 // ms
}

func fairShareFlood(b *testing.B, bin string, args []string) floodResult {
	p := testutil.RunBuilt(b, bin, nil, args...)
	var res floodResult
	flooder := clientFrom(net.IPv4(127, 0, 0, 1))
	var tokens []string
	for range 40 {
		tokens = append(tokens, mintToken(b, flooder, p.URL))
	}
	var mu sync.Mutex
	var started, done sync.WaitGroup
	for i, tok := range tokens {
		for j := range 8 {
			started.Add(1)
			done.Go(func() {
				status, _ := streamReply(flooder, p.URL, fmt.Sprintf("flood-%d-%d", i, j), tok, started.Done)
				if status == http.StatusOK {
					mu.Lock()
					res.accepted++
					mu.Unlock()
				}
			})
		}
	}
	started.Wait() // every flooding request has its answer; the accepted replies run
	var visitors sync.WaitGroup
	for v := range 20 {
		visitors.Go(func() {
			c := clientFrom(net.IPv4(127, 0, 2, byte(v+1)))
			status, ttfb := streamReply(c, p.URL, "visit", mintToken(b, c, p.URL), nil)
			mu.Lock()
			defer mu.Unlock()
			if status == http.StatusOK {
				res.visitorsOK++
				res.ttfb = append(res.ttfb, float64(ttfb.Microseconds())/1000)
			}
		})
	}
	visitors.Wait()
	done.Wait()
	return res
}

// atTheBound fills the process's places with long replies and returns
// the peak heap in use meanwhile, and how many replies ran.
func atTheBound(b *testing.B, bin string, args []string) (peakMiB float64, accepted int) {
	debug := freeAddr(b)
	p := testutil.RunBuilt(b, bin, nil, append(args, "-debug-addr", debug)...)
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			resp, err := http.Get("http://" + debug + "/debug/vars")
			if err != nil {
				continue
			}
			var v struct {
				Memstats struct{ HeapInuse uint64 } `json:"memstats"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&v)
			resp.Body.Close()
			if v.Memstats.HeapInuse > peak.Load() {
				peak.Store(v.Memstats.HeapInuse)
			}
		}
	}()
	var n atomic.Int64
	var started, done sync.WaitGroup
	run := func(c *http.Client, tok, chat string) {
		started.Add(1)
		done.Go(func() {
			if status, _ := streamReply(c, p.URL, chat, tok, started.Done); status == http.StatusOK {
				n.Add(1)
			}
		})
	}
	for a := range 8 {
		c := clientFrom(net.IPv4(127, 0, 3, byte(a+1)))
		for s := range 4 {
			tok := mintToken(b, c, p.URL)
			for r := range 8 {
				run(c, tok, fmt.Sprintf("bound-%d-%d-%d", a, s, r))
			}
		}
	}
	started.Wait()
	for v := range 32 {
		c := clientFrom(net.IPv4(127, 0, 4, byte(v+1)))
		run(c, mintToken(b, c, p.URL), "bound-visit")
	}
	done.Wait()
	close(stop)
	<-sampled
	return float64(peak.Load()) / (1 << 20), int(n.Load())
}

// clientFrom is a client whose connections come from ip, keeping no
// cookies.
func clientFrom(ip net.IP) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 512}}
}

func mintToken(b *testing.B, c *http.Client, url string) string {
	resp, err := c.Post(url+"/api/token", "application/json", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct{ Token string }
	if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&tok) != nil {
		b.Fatalf("POST /api/token: %d", resp.StatusCode)
	}
	return tok.Token
}

// streamReply posts a long reply's request and reads it to its end; it
// returns the status and the time to the first event. answered, when
// set, is called once the status is known.
func streamReply(c *http.Client, url, chat, token string, answered func()) (int, time.Duration) {
	once := sync.OnceFunc(func() {
		if answered != nil {
			answered()
		}
	})
	defer once()
	text := longReply
	if strings.HasPrefix(chat, "visit") {
		text = "hello"
	}
	req, _ := http.NewRequest(http.MethodPost, url+"/api/chat", strings.NewReader(testutil.UserMessage(chat, "u1", text)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, 0
	}
	defer resp.Body.Close()
	once()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, 0
	}
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil {
		return 0, 0
	}
	ttfb := time.Since(start)
	_, _ = io.Copy(io.Discard, br)
	return resp.StatusCode, ttfb
}

func freeAddr(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func percentile(ms []float64, p int) float64 {
	if len(ms) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ms))
	return s[min(len(s)-1, len(s)*p/100)]
}
