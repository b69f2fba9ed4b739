package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentui/agentui/bench/loadgen"
)

// settings are the sizes of a run; smoke mode shrinks them so CI can check
// that the harness still works in seconds.
type settings struct {
	smoke bool

	rounds   int           // rounds of S1 and S2
	duration time.Duration // length of one S1/S2 round
	warmup   time.Duration // unrecorded load before a contender's first round

	s1N, s1Conc int
	s2N, s2Conc int

	s3Rounds, s3Streams int
	s3Wait, s3Ramp      time.Duration
	// s3History is agentui's -history in S3: the binary's default,
	// memory. Its streams carry no cookie, so each is served without
	// history, as a client that has not loaded the page is; the
	// history's bounds on runs at once would refuse thousands of runs
	// with it.
	s3History string

	s4Runs, s4Rounds, s4Convs, s4Prefill, s4Turns int
	scRounds                                      int
	scDuration                                    time.Duration

	tcCount     int    // runs of each BenchmarkTurnCost size
	tcBenchtime string // go test -benchtime for it
}

// fullSettings are the sizes of `make bench`, chosen to finish in under
// eight minutes on two cores (the limit is ten).
func fullSettings() settings {
	return settings{
		rounds: 8, duration: 1500 * time.Millisecond, warmup: time.Second,
		s1N: 1000, s1Conc: 8, s2N: 20, s2Conc: 64,
		s3Rounds: 3, s3Streams: 5000, s3Wait: 10 * time.Second, s3Ramp: 3 * time.Second, s3History: "memory",
		s4Runs: 3, s4Rounds: 10, s4Convs: 32, s4Prefill: 100, s4Turns: 5,
		scRounds: 3, scDuration: time.Second,
		tcCount: 3, tcBenchtime: "1s",
	}
}

// smokeSettings run every scenario with tiny sizes: about 20 s in all.
func smokeSettings() settings {
	return settings{
		smoke:  true,
		rounds: 1, duration: 500 * time.Millisecond, warmup: 200 * time.Millisecond,
		s1N: 1000, s1Conc: 8, s2N: 20, s2Conc: 64,
		s3Rounds: 1, s3Streams: 200, s3Wait: 2 * time.Second, s3Ramp: 200 * time.Millisecond, s3History: "memory",
		s4Runs: 1, s4Rounds: 1, s4Convs: 8, s4Prefill: 10, s4Turns: 2,
		scRounds: 1, scDuration: 300 * time.Millisecond,
		tcCount: 1, tcBenchtime: "20x",
	}
}

// logf reports progress; main points it at standard error, tests leave it
// silent.
var logf = func(format string, args ...any) {}

// tpRound is one round of a throughput scenario against one contender.
type tpRound struct {
	round int // 1, 2, …; rounds with the same number ran back to back
	res   loadgen.Result
	cpu   float64 // server CPU seconds (user+system) spent during the round
	// client and others are the cores kept busy on average during the
	// round by the load generator and by every other process.
	client, others float64
}

// tpResult is a throughput scenario (S1 or S2).
type tpResult struct {
	id, title string
	n, conc   int
	rounds    map[string][]tpRound // by contender key
}

// runThroughput drives every live contender with conc concurrent
// "count to n" chats for st.duration per round, contenders interleaved
// within each round (A B C, A B C, …) so slow drift of the machine (thermal
// state, other tenants, page cache) spreads over all of them alike.
func runThroughput(ctx context.Context, st settings, e *env, id, title string, n, conc int, cs []*contender) tpResult {
	r := tpResult{id: id, title: title, n: n, conc: conc, rounds: map[string][]tpRound{}}
	text := "count to " + strconv.Itoa(n)
	clients := map[string]*http.Client{}
	for _, c := range cs {
		clients[c.key] = loadgen.NewClient(conc)
	}
	run := func(c *contender, d time.Duration, round int) (tpRound, error) {
		client := clients[c.key]
		// Every round dials fresh connections: servers close idle ones on
		// their own schedules (Node after 5 s) while other contenders run,
		// and a request racing such a close would count as an error.
		defer client.CloseIdleConnections()
		meter, err := startCPUMeter(c.srv.pid())
		if err != nil {
			return tpRound{}, err
		}
		cfg := loadgen.Config{
			Client: client, Concurrency: conc, Duration: d,
			NewRequest: c.countRequests(fmt.Sprintf("%s-%s-%d", id, c.key, round), text),
			MinFrames:  minFrames(c.proto, n),
		}
		if c.proto == vercelWS {
			ws := newWSChats(c.srv.addr, c.path)
			defer ws.close()
			cfg.Exchange = ws.exchange(fmt.Sprintf("%s-%s-%d", id, c.key, round), text)
		}
		res := loadgen.Run(ctx, cfg)
		if !c.srv.alive() {
			return tpRound{}, errServerGone
		}
		use, err := meter.stop()
		if err != nil {
			return tpRound{}, err
		}
		return tpRound{round: round, res: res, cpu: use.server, client: use.client, others: use.others}, nil
	}
	// measure runs a round, and when the server died under it (on a shared
	// machine something may kill it from outside), restarts the server,
	// warms it up and runs the round again.
	measure := func(c *contender, d time.Duration, round int) (tpRound, error) {
		for {
			tr, err := run(c, d, round)
			if !errors.Is(err, errServerGone) && c.srv.alive() {
				return tr, err
			}
			if err := c.restart(ctx, e); err != nil {
				return tpRound{}, err
			}
			if _, err := run(c, st.warmup, -1); err != nil && !errors.Is(err, errServerGone) {
				return tpRound{}, err
			}
		}
	}
	for _, c := range cs {
		if _, err := measure(c, st.warmup, -1); err != nil {
			c.markFailed(err)
		}
	}
	for round := 1; round <= st.rounds && ctx.Err() == nil; round++ {
		for _, c := range cs {
			if c.skip != "" {
				continue
			}
			tr, err := measure(c, st.duration, round)
			if err != nil {
				c.markFailed(err)
				continue
			}
			r.rounds[c.key] = append(r.rounds[c.key], tr)
			logf("%s round %d/%d %-22s %9.0f req/s %10.0f events/s  TTFB p50 %-9v p99 %-9v cores: server %.2f client %.2f others %.2f  errors %d%s",
				id, round, st.rounds, c.label, tr.res.RequestsPerSec(), tr.res.EventsPerSec(),
				loadgen.Percentile(tr.res.TTFB, 50).Round(time.Microsecond),
				loadgen.Percentile(tr.res.TTFB, 99).Round(time.Microsecond),
				tr.cpu/tr.res.Elapsed.Seconds(), tr.client, tr.others, tr.res.Errors, errNote(tr.res.FirstErr))
		}
	}
	return r
}

// errServerGone reports that a contender's server exited during a round.
var errServerGone = errors.New("the server exited during the round")

// maxRestarts bounds how often a contender's server is restarted after
// dying during a run; a server that keeps dying is broken, not unlucky.
const maxRestarts = 3

// restart replaces a server that exited. The report lists restarts: the
// rounds it ran before are kept (they measured a healthy server), the
// interrupted one is run again.
func (c *contender) restart(ctx context.Context, e *env) error {
	why := c.srv.exitReason()
	if c.restarts >= maxRestarts {
		return fmt.Errorf("server exited %d times, last: %s", c.restarts+1, why)
	}
	c.restarts++
	c.restartWhy = why
	logf("%s: server exited (%s); restarting it (%d of at most %d)", c.label, why, c.restarts, maxRestarts)
	c.srv.stop()
	srv, err := c.launch(ctx, e)
	if err != nil {
		return err
	}
	c.srv = srv
	return nil
}

func errNote(err error) string {
	if err == nil {
		return ""
	}
	return " (first: " + err.Error() + ")"
}

// markFailed takes a contender out of the rest of the run.
func (c *contender) markFailed(err error) {
	if c.skip == "" {
		c.skip, c.fail = "failed: "+err.Error(), true
		logf("%s: %s", c.label, c.skip)
	}
}

// s3Round is one round of the idle-stream scenario.
type s3Round struct {
	streams, opened int // streams started; streams open when measured
	res             loadgen.Result
	rss0, rss1      int64 // VmRSS KiB before the streams and while they are open
	g0, g1          int   // goroutines before and while open
	mem0, mem1      memStats
	err             error
	died            bool // the server exited during the round
}

// s3Result is the idle-stream scenario.
type s3Result struct {
	streams int
	wait    time.Duration
	rounds  map[string][]s3Round // by contender key
}

// runIdle holds st.s3Streams "wait N ms" streams open at once against a
// fresh process of each contender per round, the contenders in turn, and
// measures what each open stream costs the server: resident memory and
// goroutines. A fresh process makes "before" the footprint of a warmed-up
// idle server rather than whatever the previous round left in the Go heap.
func runIdle(ctx context.Context, st settings, e *env, cs []*contender) s3Result {
	out := s3Result{streams: st.s3Streams, wait: st.s3Wait, rounds: map[string][]s3Round{}}
	for round := 1; round <= st.s3Rounds && ctx.Err() == nil; round++ {
		for _, c := range cs {
			r := idleRound(ctx, st, e, c, round)
			if r.died {
				// A server killed from outside gets one more try.
				logf("S3 %s round %d/%d: %v; running it again", c.label, round, st.s3Rounds, r.err)
				r = idleRound(ctx, st, e, c, round)
			}
			if r.err != nil {
				logf("S3 %s round %d/%d: %v", c.label, round, st.s3Rounds, r.err)
			} else {
				logf("S3 %s round %d/%d %d streams open: RSS %d → %d KiB (%.1f KiB/stream), goroutines %d → %d, errors %d%s",
					c.label, round, st.s3Rounds, r.opened, r.rss0, r.rss1, r.kbPerStream(), r.g0, r.g1, r.res.Errors, errNote(r.res.FirstErr))
			}
			out.rounds[c.key] = append(out.rounds[c.key], r)
		}
	}
	return out
}

// idleRound is one S3 round against a fresh server of c.
func idleRound(ctx context.Context, st settings, e *env, c *contender, round int) (r s3Round) {
	r.streams = st.s3Streams
	text := fmt.Sprintf("wait %d ms", st.s3Wait.Milliseconds())
	launch := c.launch
	if c.idleLaunch != nil {
		launch = func(ctx context.Context, e *env) (*server, error) { return c.idleLaunch(ctx, e, st.s3History) }
	}
	srv, err := launch(ctx, e)
	if err != nil {
		r.err = err
		return r
	}
	defer srv.stop()
	probe := &contender{key: c.key, proto: c.proto, path: c.path, srv: srv}
	// Warm up: the first requests allocate the server's steady state (HTTP
	// machinery, encoder pools, the demo model).
	warm := loadgen.Run(ctx, loadgen.Config{Concurrency: 4, Requests: 40,
		NewRequest: probe.countRequests(fmt.Sprintf("s3warm-%d", round), "count to 10"), MinFrames: minFrames(c.proto, 10)})
	if warm.Errors > 0 {
		r.err = fmt.Errorf("warm-up: %w", warm.FirstErr)
		return r
	}
	time.Sleep(300 * time.Millisecond)
	if r.rss0, r.g0, r.mem0, err = snapshot(srv); err != nil {
		r.err = err
		return r
	}
	var opened atomic.Int64
	done := make(chan loadgen.Result, 1)
	// Its 5,000 connections are closed after the round, not left to the
	// idle timeout: rounds of them would approach the descriptor limit.
	client := loadgen.NewClient(st.s3Streams)
	defer client.CloseIdleConnections()
	go func() {
		done <- loadgen.Run(ctx, loadgen.Config{
			Client: client, Concurrency: st.s3Streams, Requests: st.s3Streams,
			RampUp: st.s3Ramp, NewRequest: probe.countRequests(fmt.Sprintf("s3-%d", round), text),
			MinFrames: minFrames(c.proto, 1), OnFirstByte: func() { opened.Add(1) },
		})
	}()
	// Measure once every stream has its first frame, with time to spare
	// before the first ones end.
	limit := time.Now().Add(st.s3Ramp + (st.s3Wait-st.s3Ramp)/2)
	for opened.Load() < int64(st.s3Streams) && time.Now().Before(limit) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(min(500*time.Millisecond, st.s3Wait/10))
	r.opened = int(opened.Load())
	rss1, g1, mem1, serr := snapshot(srv)
	r.rss1, r.g1, r.mem1 = rss1, g1, mem1
	r.res = <-done
	if serr != nil {
		r.err = serr
	}
	if !srv.alive() {
		r.died = true
		r.err = fmt.Errorf("the server exited during the round (%s)", srv.exitReason())
	}
	return r
}

// snapshot reads a server's memory and goroutine count.
func snapshot(s *server) (rss int64, g int, m memStats, err error) {
	if rss, err = rssKB(s.pid()); err != nil {
		return
	}
	if g, err = goroutines(s.debugAddr); err != nil {
		return
	}
	m, err = readMemStats(s.debugAddr)
	return
}

func (r s3Round) kbPerStream() float64 {
	if r.opened == 0 {
		return 0
	}
	return float64(r.rss1-r.rss0) / float64(r.opened)
}

func (r s3Round) goroutinesPerStream() float64 {
	if r.opened == 0 {
		return 0
	}
	return float64(r.g1-r.g0) / float64(r.opened)
}

// s4Result is the history scenario: the same turns against agentui keeping
// history in Redis and keeping none.
type s4Result struct {
	convs, prefill, turns int
	label                 string // how the report names the store compared with none
	skip                  string
	fail                  bool
	rounds                map[string][]tpRound // by mode: "none", "redis"
}

// s4Modes are the histories compared, in the order they run in each round:
// none, and the store under test ("redis" stands for env.s4History).
var s4Modes = []string{"none", "redis"}

// runHistory measures the time to first byte of a turn on a conversation
// that already holds st.s4Prefill turns (two messages each), with history
// in Redis and without history. Both servers get identical requests: the
// whole conversation so far, as useChat sends it by default, so the
// difference is what loading and appending the stored history costs.
func runHistory(ctx context.Context, st settings, e *env) s4Result {
	out := s4Result{convs: st.s4Convs, prefill: st.s4Prefill, turns: st.s4Turns, rounds: map[string][]tpRound{}}
	out.label = "redis"
	if !strings.HasPrefix(e.s4History, "redis://") {
		out.label = e.s4History
	} else if err := redisPing(e.s4History); err != nil {
		out.skip = "Redis not reachable at " + e.s4History + ": " + err.Error()
		return out
	}
	servers := map[string]*server{}
	defer func() {
		for _, s := range servers {
			s.stop()
		}
		// The conversations' keys contain their chat ids, which contain
		// this run's id and nothing else does.
		if out.label == "redis" && servers["redis"] != nil {
			n, err := redisDeleteMatching(e.s4History, "*s4-"+runID+"-*")
			if err != nil {
				logf("S4: removing this run's conversations from Redis: %v", err)
			} else {
				logf("S4: removed this run's %d keys from Redis", n)
			}
		}
	}()
	for _, mode := range s4Modes {
		history := mode
		if mode == "redis" {
			history = e.s4History
		}
		s, err := startAgentui(ctx, e, "agentui (history "+mode+")", history)
		if err != nil {
			out.skip = "agentui -history " + history + " did not start: " + err.Error()
			// Today's binary has no Redis history and says so; anything
			// else is a real failure.
			out.fail = !strings.Contains(err.Error(), "-history")
			return out
		}
		servers[mode] = s
	}
	convs := map[string][]*conversation{}
	for _, mode := range s4Modes {
		start := time.Now()
		cs, err := prefill(ctx, servers[mode].addr, st, mode != "none")
		if err != nil {
			out.skip, out.fail = fmt.Sprintf("pre-filling conversations (history %s): %v", mode, err), true
			return out
		}
		convs[mode] = cs
		logf("S4 pre-filled %d conversations × %d turns (history %s) in %v", st.s4Convs, st.s4Prefill, mode, time.Since(start).Round(time.Millisecond))
	}
	for round := 1; round <= st.s4Rounds && ctx.Err() == nil; round++ {
		for _, mode := range s4Modes {
			srv := servers[mode]
			meter, err := startCPUMeter(srv.pid())
			if err != nil {
				out.skip, out.fail = err.Error(), true
				return out
			}
			res := turns(ctx, srv.addr, convs[mode], st.s4Turns, true)
			use, err := meter.stop()
			if err != nil {
				out.skip, out.fail = err.Error(), true
				return out
			}
			out.rounds[mode] = append(out.rounds[mode], tpRound{round: round, res: res, cpu: use.server, client: use.client, others: use.others})
			label := mode
			if mode == "redis" {
				label = out.label
			}
			logf("S4 round %d/%d history %-5s TTFB p50 %-9v p99 %-9v errors %d%s", round, st.s4Rounds, label,
				loadgen.Percentile(res.TTFB, 50).Round(time.Microsecond), loadgen.Percentile(res.TTFB, 99).Round(time.Microsecond),
				res.Errors, errNote(res.FirstErr))
		}
	}
	return out
}

// conversation is one chat as a useChat client keeps it: its id, its own
// cookie jar (agentui scopes stored history to an anonymous cookie it sets
// on the first reply and requires back) and every message so far.
type conversation struct {
	id     string
	client *http.Client
	msgs   []json.RawMessage
	n      int // user messages sent
	// wantScope: the server keeps history, so the page must set the
	// scope cookie and every reply must be served with history.
	wantScope bool
}

var runID = strconv.FormatInt(time.Now().UnixNano(), 36)

func newConversations(n int, tr http.RoundTripper, prefix string) ([]*conversation, error) {
	out := make([]*conversation, n)
	for i := range out {
		jar, err := cookiejar.New(nil)
		if err != nil {
			return nil, err
		}
		out[i] = &conversation{id: fmt.Sprintf("s4-%s-%s-%d", runID, prefix, i), client: &http.Client{Transport: tr, Jar: jar}}
	}
	return out, nil
}

// turn sends one user message with the whole conversation and appends the
// user message and the assistant's reply to it.
func (cv *conversation) turn(ctx context.Context, addr, text string) (loadgen.Sample, error) {
	if cv.n == 0 {
		// The scope cookie comes with the page, as in a browser: without
		// it the server would keep no history for this conversation.
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
		if err != nil {
			return loadgen.Sample{}, err
		}
		resp, err := cv.client.Do(req)
		if err != nil {
			return loadgen.Sample{}, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		// Without its cookie the conversation would be measured without
		// history while counted as one with it.
		if resp.StatusCode != http.StatusOK {
			return loadgen.Sample{}, fmt.Errorf("the page: %s", resp.Status)
		}
		if cv.wantScope && len(cv.client.Jar.Cookies(req.URL)) == 0 {
			return loadgen.Sample{}, errors.New("the page set no scope cookie: the conversation would have no history")
		}
	}
	cv.n++
	t, _ := json.Marshal(text)
	user := json.RawMessage(`{"id":"u` + strconv.Itoa(cv.n) + `","role":"user","parts":[{"type":"text","text":` + string(t) + `}]}`)
	msgs := append(cv.msgs, user)
	var body bytes.Buffer
	body.WriteString(`{"id":"` + cv.id + `","messages":[`)
	for i, m := range msgs {
		if i > 0 {
			body.WriteByte(',')
		}
		body.Write(m)
	}
	body.WriteString(`],"trigger":"submit-message"}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/api/chat", &body)
	if err != nil {
		return loadgen.Sample{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	var reply bytes.Buffer
	s, err := loadgen.Stream(cv.client, req, &reply, nil)
	if err != nil {
		return s, fmt.Errorf("%w: %.200s", err, reply.String())
	}
	// agentui names the run of a reply it serves with history (and only
	// then): what S4 compares is what it measured.
	if served := s.Header.Get("Agentui-Run") != ""; served != cv.wantScope {
		return s, fmt.Errorf("a reply served with history: %v, want %v", served, cv.wantScope)
	}
	frames, err := parseFrames(reply.Bytes())
	if err != nil {
		return s, err
	}
	var id string
	var out strings.Builder
	finished := false
	for _, f := range frames {
		switch f.Type {
		case "start":
			id = f.MessageID
		case "text-delta":
			out.WriteString(f.Delta)
		case "finish":
			finished = true
		}
	}
	if !finished || id == "" {
		return s, errors.New("reply has no start message id or no finish")
	}
	a, _ := json.Marshal(map[string]any{"id": id, "role": "assistant", "parts": []any{
		map[string]string{"type": "step-start"},
		map[string]string{"type": "text", "text": out.String(), "state": "done"},
	}})
	cv.msgs = append(msgs, a)
	return s, nil
}

// s4Text is the user message of every history turn: a short reply, so the
// time measured is the request's and the history's, not the model's.
const s4Text = "count to 5"

// prefill creates st.s4Convs conversations with st.s4Prefill turns each
// through the real endpoint, one goroutine per conversation.
// With wantScope (the server keeps history) each must get its scope cookie.
func prefill(ctx context.Context, addr string, st settings, wantScope bool) ([]*conversation, error) {
	convs, err := newConversations(st.s4Convs, loadgen.NewClient(st.s4Convs).Transport, addr)
	if err != nil {
		return nil, err
	}
	for _, cv := range convs {
		cv.wantScope = wantScope
	}
	res := turns(ctx, addr, convs, st.s4Prefill, false)
	if res.Errors > 0 {
		return nil, fmt.Errorf("%d of %d turns failed, first: %w", res.Errors, res.Errors+res.Requests, res.FirstErr)
	}
	return convs, nil
}

// turns runs n turns on each conversation, all conversations at once,
// and collects the samples. In lockstep every round of turns starts
// together and waits for the slowest (32 users pressing Enter at the same
// moment, n times over): the TTFB percentiles then measure one burst of
// concurrent turns, the same burst for both stores, instead of the
// self-reinforcing queue of a saturated closed loop, whose p99 wanders by
// tens of milliseconds from round to round on two cores and would hide a
// 5 ms difference. Otherwise each conversation sends its next turn as soon
// as its last one ends (pre-filling, where only speed matters).
func turns(ctx context.Context, addr string, convs []*conversation, n int, lockstep bool) loadgen.Result {
	var (
		mu  sync.Mutex
		res loadgen.Result
	)
	record := func(s loadgen.Sample, err error) bool {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			res.Errors++
			if res.FirstErr == nil {
				res.FirstErr = err
			}
			return false
		}
		res.Requests++
		res.Frames += int64(s.Frames)
		res.TTFB = append(res.TTFB, s.TTFB)
		res.Latency = append(res.Latency, s.Latency)
		return true
	}
	// A conversation whose turn failed is out of step with the server and
	// takes no further turns.
	broken := make([]bool, len(convs))
	start := time.Now()
	var wg sync.WaitGroup
	if lockstep {
		for range n {
			for i, cv := range convs {
				if broken[i] {
					continue
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					broken[i] = !record(cv.turn(ctx, addr, s4Text))
				}()
			}
			wg.Wait()
		}
	} else {
		for i, cv := range convs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range n {
					if !record(cv.turn(ctx, addr, s4Text)) {
						broken[i] = true
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	res.Elapsed = time.Since(start)
	slices.Sort(res.TTFB)
	slices.Sort(res.Latency)
	return res
}
