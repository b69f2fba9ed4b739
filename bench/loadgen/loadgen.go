// Package loadgen is the load generator of agentui's benchmark harness
// (bench/runner). It drives streaming HTTP endpoints — SSE chat replies —
// at a fixed concurrency over HTTP/1.1 keep-alive connections, reads every
// stream to its end, and measures what a chat user feels: time to the
// first byte of the reply and time to its last byte.
//
// Every contender of a benchmark is driven by the same code, with the same
// client settings, so differences come from the servers and not from the
// clients that measured them.
package loadgen

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// RaiseFileLimit raises the soft RLIMIT_NOFILE of this process to its hard
// limit and returns the new soft limit. Thousands of concurrent streams
// need a descriptor each; the usual soft limit of 1024 would make dials
// fail with EMFILE long before the server is the bottleneck. The Go
// runtime does the same at start-up on Linux, but doing it explicitly
// documents the need, reports the limit that applies, and (because it goes
// through syscall.Setrlimit) makes child processes inherit the raised
// limit too.
func RaiseFileLimit() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return 0, err
		}
	}
	return lim.Cur, nil
}

// NewClient returns an HTTP/1.1 client with one keep-alive connection per
// concurrent stream. HTTP/2 is off (browsers' EventSource and fetch
// streams to a chat backend are HTTP/1.1 on most deployments, and
// multiplexing would make the contenders' connection handling
// incomparable), and so is transparent gzip, which no contender uses for
// SSE.
func NewClient(concurrency int) *http.Client {
	if concurrency < 1 {
		concurrency = 1
	}
	tr := &http.Transport{
		Proxy:               nil, // the servers are on loopback; never a proxy
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        concurrency,
		MaxIdleConnsPerHost: concurrency,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
		// A non-nil, empty map turns HTTP/2 off for good.
		TLSNextProto:    map[string]func(string, *tls.Conn) http.RoundTripper{},
		ReadBufferSize:  32 << 10,
		WriteBufferSize: 32 << 10,
	}
	return &http.Client{Transport: tr}
}

// Sample is one streamed response.
type Sample struct {
	// TTFB is the time from sending the request to the first byte of the
	// response body: for a chat reply, the first SSE frame, which is what a
	// user waits for. (Header arrival is not used: some servers send
	// headers before they have anything to say, some with the first frame.)
	TTFB time.Duration
	// Latency is the time from sending the request to the end of the body.
	Latency time.Duration
	// Frames counts SSE frames: blocks ended by a blank line.
	Frames int
	// Bytes counts body bytes.
	Bytes int64
	// Status is the HTTP status code.
	Status int
	// Header is the response header.
	Header http.Header
}

// ErrStatus is wrapped by the error Stream returns for a non-200 status.
var ErrStatus = errors.New("unexpected HTTP status")

// Stream sends req with c and reads the response to its end, counting SSE
// frames. When keep is not nil the body is appended to it (for callers that
// parse the reply); otherwise it is only scanned. onFirstByte, when not nil,
// is called once, when the first body byte arrives.
//
// A non-200 status is an error wrapping ErrStatus; the sample still has the
// status and timings.
func Stream(c *http.Client, req *http.Request, keep *bytes.Buffer, onFirstByte func()) (Sample, error) {
	var s Sample
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	s.Status, s.Header = resp.StatusCode, resp.Header
	var (
		buf   [32 << 10]byte
		prev  byte // last byte of the previous read, to find "\n\n" across reads
		first = true
	)
	for {
		n, rerr := resp.Body.Read(buf[:])
		if n > 0 {
			if first {
				first = false
				s.TTFB = time.Since(start)
				if onFirstByte != nil {
					onFirstByte()
				}
			}
			chunk := buf[:n]
			if prev == '\n' && chunk[0] == '\n' {
				s.Frames++
			}
			s.Frames += bytes.Count(chunk, []byte("\n\n"))
			prev = chunk[n-1]
			s.Bytes += int64(n)
			if keep != nil {
				keep.Write(chunk)
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			s.Latency = time.Since(start)
			return s, rerr
		}
	}
	s.Latency = time.Since(start)
	if first {
		s.TTFB = s.Latency
	}
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("%w %d", ErrStatus, resp.StatusCode)
	}
	return s, nil
}

// Config is one load run.
type Config struct {
	// Client sends the requests; when nil, Run uses a NewClient(Concurrency)
	// of its own and closes its connections at the end.
	Client *http.Client
	// Concurrency is the number of streams kept in flight (one worker per
	// stream; each worker sends its next request when its stream ends).
	Concurrency int
	// Duration, when positive, stops workers from starting new requests
	// once it has passed; streams in flight are read to the end.
	Duration time.Duration
	// Requests, when positive, is the total number of requests to send
	// (whichever of Duration and Requests is reached first ends the run).
	Requests int
	// RampUp spreads the workers' first requests evenly over this time, so
	// thousands of connections are not dialled in one burst that overflows
	// the server's accept backlog.
	RampUp time.Duration
	// NewRequest builds request number seq (0, 1, …) for worker.
	NewRequest func(worker, seq int) (*http.Request, error)
	// Exchange, when not nil, replaces NewRequest and Stream: it makes
	// request seq of worker over a transport of its own (a WebSocket) and
	// returns its sample, its frames counted as Stream counts SSE frames.
	Exchange func(ctx context.Context, worker, seq int, onFirstByte func()) (Sample, error)
	// MinFrames, when positive, makes a stream with fewer SSE frames an
	// error: a truncated reply must not count as a fast one.
	MinFrames int
	// OnFirstByte, when not nil, is called once per request when the first
	// body byte arrives (from the worker's goroutine).
	OnFirstByte func()
}

// Result is what a run measured.
type Result struct {
	Requests int           // requests that completed without error
	Errors   int           // requests that failed
	FirstErr error         // the first failure, for the report
	Frames   int64         // SSE frames read from successful requests
	Bytes    int64         // body bytes read from successful requests
	Elapsed  time.Duration // from the first request to the end of the last stream
	TTFB     []time.Duration
	Latency  []time.Duration
}

// Run drives the load described by cfg until Duration or Requests is
// reached (or ctx ends) and every stream in flight has been read.
func Run(ctx context.Context, cfg Config) Result {
	if cfg.Concurrency < 1 {
		cfg.Concurrency = 1
	}
	if cfg.Client == nil {
		cfg.Client = NewClient(cfg.Concurrency)
		defer cfg.Client.CloseIdleConnections()
	}
	if cfg.Duration <= 0 && cfg.Requests <= 0 {
		cfg.Requests = cfg.Concurrency
	}
	start := time.Now()
	var deadline time.Time
	if cfg.Duration > 0 {
		deadline = start.Add(cfg.Duration)
	}
	var (
		issued atomic.Int64
		mu     sync.Mutex
		res    Result
		wg     sync.WaitGroup
	)
	// take reserves the next request number, or reports that the run is over.
	take := func() (int, bool) {
		if ctx.Err() != nil || (!deadline.IsZero() && time.Now().After(deadline)) {
			return 0, false
		}
		n := int(issued.Add(1)) - 1
		if cfg.Requests > 0 && n >= cfg.Requests {
			return 0, false
		}
		return n, true
	}
	for w := 0; w < cfg.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if cfg.RampUp > 0 {
				delay := cfg.RampUp * time.Duration(w) / time.Duration(cfg.Concurrency)
				select {
				case <-time.After(delay):
				case <-ctx.Done():
					return
				}
			}
			// Each worker collects its own samples and merges them once,
			// so the lock is not contended while measuring.
			var (
				ttfb, lat      []time.Duration
				ok, bad        int
				frames, nbytes int64
				firstErr       error
			)
			for {
				n, more := take()
				if !more {
					break
				}
				var (
					s   Sample
					err error
				)
				if cfg.Exchange != nil {
					s, err = cfg.Exchange(ctx, w, n, cfg.OnFirstByte)
				} else {
					var req *http.Request
					if req, err = cfg.NewRequest(w, n); err == nil {
						s, err = Stream(cfg.Client, req.WithContext(ctx), nil, cfg.OnFirstByte)
					}
				}
				if err == nil && cfg.MinFrames > 0 && s.Frames < cfg.MinFrames {
					err = fmt.Errorf("stream ended after %d frames, want at least %d", s.Frames, cfg.MinFrames)
				}
				if err == nil {
					ok++
					frames += int64(s.Frames)
					nbytes += s.Bytes
					ttfb = append(ttfb, s.TTFB)
					lat = append(lat, s.Latency)
					continue
				}
				bad++
				if firstErr == nil {
					firstErr = err
				}
			}
			mu.Lock()
			defer mu.Unlock()
			res.Requests += ok
			res.Errors += bad
			res.Frames += frames
			res.Bytes += nbytes
			res.TTFB = append(res.TTFB, ttfb...)
			res.Latency = append(res.Latency, lat...)
			if res.FirstErr == nil {
				res.FirstErr = firstErr
			}
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	slices.Sort(res.TTFB)
	slices.Sort(res.Latency)
	return res
}

// RequestsPerSec is completed requests per second of wall time.
func (r Result) RequestsPerSec() float64 { return perSec(float64(r.Requests), r.Elapsed) }

// EventsPerSec is SSE frames read per second of wall time.
func (r Result) EventsPerSec() float64 { return perSec(float64(r.Frames), r.Elapsed) }

func perSec(n float64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return n / d.Seconds()
}

// Percentile returns the p-th percentile (0 < p ≤ 100) of sorted by the
// nearest-rank method, or 0 for no samples. Nearest rank never invents a
// value that was not measured, which matters for small sample counts.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	rank = max(0, min(rank, len(sorted)-1))
	return sorted[rank]
}
