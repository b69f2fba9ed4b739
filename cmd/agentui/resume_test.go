package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/uiadapter"
)

// peakRSS is a process's peak resident memory (VmHWM), in MiB.
func peakRSS(t testing.TB, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatalf("VmHWM %q", v)
			}
			return kb >> 10
		}
	}
	t.Fatal("no VmHWM in /proc/<pid>/status")
	return 0
}

// replicaPair is two replicas of the binary on one real Redis, and a
// client (one browser: one scope cookie, which both accept).
type replicaPair struct {
	a, b   *testutil.Program
	client *http.Client
}

// startReplicaPair starts replicas A and B, each with its own extra
// environment.
func startReplicaPair(t testing.TB, envA, envB []string) *replicaPair {
	rdb := testutil.Redis(t)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, rdb, prefix)
	args := []string{"-addr", "127.0.0.1:0", "-history", testutil.RedisURL(t), "-history-prefix", prefix,
		"-secret", "resume test secret, 32 bytes or more", "-demo-delay", "0s", "-log-level", "warn"}
	p := &replicaPair{a: testutil.RunProgram(t, ".", envA, args...), b: testutil.RunProgram(t, ".", envB, args...)}
	jar, _ := cookiejar.New(nil)
	p.client = &http.Client{Jar: jar}
	resp, err := p.client.Get(p.a.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return p
}

// do sends a request; the caller closes the body.
func (p *replicaPair) do(t testing.TB, method, url, body string, header ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := p.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// Resumes on the replica that reads another's run from the shared log:
// 50 at once of a finished 100,000-number reply (B allows 50 a scope:
// AGENTUI_MAX_RESUMES) each get what follows event 1 while that
// replica's memory stays bounded (each holds a page of the log, not the
// log); and one scope may have only so many open (A's default): one more
// gets 429 with Retry-After and a JSON error, the streams it has go on,
// and once one of them ends a retry gets the whole run.
func TestRemoteResumes(t *testing.T) {
	t.Parallel()
	const concurrent = 50
	// The run has ended when the resumes begin: its log must outlast
	// them, which on a loaded machine takes more than the default minute.
	// The replica that ran it sets the shared log's expiry, so both keep
	// it longer.
	p := startReplicaPair(t, []string{"AGENTUI_RUN_RETENTION=10m"}, []string{"AGENTUI_MAX_RESUMES=" + strconv.Itoa(concurrent), "AGENTUI_RUN_RETENTION=10m"})

	t.Run("memory", func(t *testing.T) {
		resp := p.do(t, http.MethodPost, p.a.URL+"/api/chat", testutil.UserMessage("big", "u1", "count to 100000"))
		run := resp.Header.Get("Agentui-Run")
		original, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || err != nil || len(original) < 1_800_000 {
			t.Fatalf("the reply on A: %d, %d bytes, %v", resp.StatusCode, len(original), err)
		}
		// What a client that has event 1 lacks: the frames after it.
		_, want, ok := strings.Cut(string(original), "\n\nid: 2\n")
		if want = "id: 2\n" + want; !ok {
			t.Fatalf("A's reply has no event 2: %.200q", original)
		}
		before := peakRSS(t, p.b.PID())
		var wg sync.WaitGroup
		got := make(chan string, concurrent)
		for range concurrent {
			wg.Go(func() {
				req, _ := http.NewRequest(http.MethodGet, p.b.URL+"/api/chat/big/stream", nil)
				req.Header.Set("Last-Event-ID", run+":1")
				resp, err := p.client.Do(req)
				if err != nil {
					got <- err.Error()
					return
				}
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				switch {
				case resp.StatusCode != http.StatusOK || err != nil:
					got <- resp.Status
				case string(body) != want:
					got <- "a stream of " + strconv.Itoa(len(body)) + " bytes, not the " + strconv.Itoa(len(want)) + " after event 1"
				default:
					got <- ""
				}
			})
		}
		wg.Wait()
		close(got)
		for e := range got {
			if e != "" {
				t.Fatalf("a resume on B: %s", e)
			}
		}
		after := peakRSS(t, p.b.PID())
		t.Logf("B's peak RSS: %d MiB before the resumes, %d MiB after %d at once", before, after, concurrent)
		if after > 256 {
			t.Fatalf("B's peak RSS reached %d MiB (from %d) for %d resumes at once", after, before, concurrent)
		}
	})

	t.Run("bounded per scope", func(t *testing.T) {
		// B runs the reply; A, with the default bound, resumes it.
		resp := p.do(t, http.MethodPost, p.b.URL+"/api/chat", testutil.UserMessage("live", "u1", "think: wait 60000 ms"))
		defer resp.Body.Close()
		original := sseData{bufio.NewReader(resp.Body)}
		var upToPause []string
		for { // up to the pause the text asks for
			d, ok := original.next(t)
			if !ok {
				t.Fatal("B's stream ended early")
			}
			upToPause = append(upToPause, d)
			if strings.Contains(d, `"delta":"ms"`) {
				break
			}
		}
		resume := func() *http.Response { return p.do(t, http.MethodGet, p.a.URL+"/api/chat/live/stream", "") }
		var open []*http.Response
		testutil.Eventually(t, 5*time.Second, "A to see the run", func() bool {
			resp := resume()
			if resp.StatusCode != http.StatusOK {
				resp.Body.Close()
				return false
			}
			open = append(open, resp)
			return true
		})
		for len(open) < uiadapter.DefaultMaxResumes {
			resp := resume()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("resume %d of %d: %s", len(open)+1, uiadapter.DefaultMaxResumes, resp.Status)
			}
			open = append(open, resp)
		}
		readers := make([]sseData, len(open))
		for i, resp := range open {
			defer resp.Body.Close()
			readers[i] = sseData{bufio.NewReader(resp.Body)}
			for range upToPause { // each is at the pause: its slot is held
				readers[i].next(t)
			}
		}

		over := resume()
		var body []byte
		if over.StatusCode == http.StatusTooManyRequests {
			body, _ = io.ReadAll(over.Body)
		}
		over.Body.Close()
		var e struct{ Error string }
		if over.StatusCode != http.StatusTooManyRequests || over.Header.Get("Retry-After") != "1" ||
			!strings.HasPrefix(over.Header.Get("Content-Type"), "application/json") || json.Unmarshal(body, &e) != nil || e.Error == "" {
			t.Fatalf("resume %d: %s, Retry-After %q, body %q; want 429, 1 and a JSON error", uiadapter.DefaultMaxResumes+1, over.Status, over.Header.Get("Retry-After"), body)
		}

		open[0].Body.Close() // its slot frees once A sees it gone
		var retried *http.Response
		testutil.Eventually(t, 5*time.Second, "a slot to free", func() bool {
			resp := resume()
			if resp.StatusCode != http.StatusOK {
				resp.Body.Close()
				return false
			}
			retried = resp
			return true
		})
		defer retried.Body.Close()
		if stop := p.do(t, http.MethodPost, p.a.URL+"/api/chat/live/stop", ""); stop.StatusCode != http.StatusAccepted {
			t.Fatalf("stop on A: %s", stop.Status)
		}
		whole := append(upToPause, original.rest(t)...)
		if whole[len(whole)-1] != "[DONE]" {
			t.Fatalf("B's stream: %q", whole)
		}
		want := strings.Join(whole, "\n")
		if got := strings.Join(sseData{bufio.NewReader(retried.Body)}.rest(t), "\n"); got != want {
			t.Fatalf("the retried resume:\n%s\nwant the whole run:\n%s", got, want)
		}
		for i, r := range readers[1:] {
			if got := strings.Join(append(upToPause, r.rest(t)...), "\n"); got != want {
				t.Fatalf("open resume %d:\n%s\nwant the whole run:\n%s", i+2, got, want)
			}
		}
	})
}

// processCPU is a process's CPU time (user and system) so far, from
// /proc/<pid>/stat (clock ticks of 10 ms).
func processCPU(t testing.TB, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the command's closing parenthesis; utime and
	// stime are the 12th and 13th of them.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// BenchmarkReplicaResumeCPU: a finished 100,000-number reply resumed with
// Last-Event-ID 1, from the binary: on the replica that ran it (local),
// on another that reads the shared Redis log (remote), and there 50 at
// once (remote-50: an op is 50 resumes). cpu-ms/resume is that
// replica's CPU per resume, read from /proc (the client's, in this
// process, is not counted; nor is Redis's); peak-rss-MiB the replica's
// peak resident memory after the sub-benchmark. The reply's log is kept
// for the default retention, a minute: keep to -benchtime 20x or less.
func BenchmarkReplicaResumeCPU(b *testing.B) {
	p := startReplicaPair(b, nil, []string{"AGENTUI_MAX_RESUMES=50"})
	resp := p.do(b, http.MethodPost, p.a.URL+"/api/chat", testutil.UserMessage("big", "u1", "count to 100000"))
	run := resp.Header.Get("Agentui-Run")
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || err != nil || n < 1_800_000 {
		b.Fatalf("the reply on A: %d, %d bytes, %v", resp.StatusCode, n, err)
	}
	resume := func(b *testing.B, srv *testutil.Program) error {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/chat/big/stream", nil)
		req.Header.Set("Last-Event-ID", run+":1")
		resp, err := p.client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if n, err := io.Copy(io.Discard, resp.Body); resp.StatusCode != http.StatusOK || err != nil || n < 1_800_000 {
			return fmt.Errorf("resume: %s, %d bytes, %v", resp.Status, n, err)
		}
		return nil
	}
	for _, c := range []struct {
		name string
		srv  *testutil.Program
		at   int // resumes at once
	}{{"local", p.a, 1}, {"remote", p.b, 1}, {"remote-50", p.b, 50}} {
		b.Run(c.name, func(b *testing.B) {
			cpu := processCPU(b, c.srv.PID())
			for b.Loop() {
				errs := make(chan error, c.at)
				for range c.at {
					go func() { errs <- resume(b, c.srv) }()
				}
				for range c.at {
					if err := <-errs; err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64((processCPU(b, c.srv.PID())-cpu).Microseconds())/1000/float64(b.N*c.at), "cpu-ms/resume")
			b.ReportMetric(float64(peakRSS(b, c.srv.PID())), "peak-rss-MiB")
		})
	}
}
