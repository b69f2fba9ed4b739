package uiadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/edge"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/limit"
	"github.com/agentui/agentui/runlog"
)

// A run is one reply being produced in a chat with history. It writes its
// events to the handler's run log, and every stream that shows it (the
// request that asked for it, a reloaded tab, another replica) is a reader
// of that log: the request's own stream reads it from the start, a
// resumed one from where its client left off.
//
// A run belongs to the server, not to the request: it goes on when its
// client leaves, until it finishes, is stopped, or its process dies (then
// another replica finishes its log; see recoverDead). Without history,
// nothing can resume a run, so it needs no log: see streamLive.
type run struct {
	h         *Handler
	req       *request
	in        *agent.Input
	sess      *session
	key       history.Key
	header    runlog.Header
	ctx       context.Context
	cancel    context.CancelCauseFunc
	seq       int64
	mirror    *mirror // copies the log to the shared log; nil without one
	done      chan struct{}
	flight    uint64             // its registration with Shutdown
	stopTimer context.CancelFunc // ends the run's time bound

	// The request that started the run paces it: the agent may run at
	// most maxAhead events ahead of what that stream has written, as long
	// as the stream lasts, so a slow client slows a fast agent instead of
	// piling its output up in memory.
	paceMu   sync.Mutex
	readerAt int64
	detached bool
	progress chan struct{} // closed when the reader moves on or leaves
}

// maxAhead is how far a run may get ahead of the stream that started it:
// enough to batch bursts into few writes.
const maxAhead = 1024

// Causes a run is cancelled with.
var (
	errStopped   = errors.New("uiadapter: the run was stopped")
	errLockLost  = errors.New("uiadapter: the run lost its lock")
	errReaderGot = errors.New("uiadapter: the client went away")
)

// runResult is what the producer saw of a run.
type runResult struct {
	rec      *agent.Recorder
	err      error
	finished *agent.RunFinished // the agent finished (held back until the reply is saved)
}

// start starts a run of req and returns it; its events go to the log.
func (h *Handler) start(req *request, in *agent.Input, sess *session) *run {
	rn := &run{h: h, req: req, in: in, sess: sess, key: sess.key, done: make(chan struct{}), progress: make(chan struct{})}
	rn.header = runlog.Header{Run: req.turn.RunID, Protocol: h.proto.Name(), Started: time.Now(),
		Base: len(in.History) + len(sess.plan.Add), Turn: sess.plan.Add, Lock: sess.token}
	if req.turn.Intent == wire.Continue {
		rn.header.Continue = req.turn.MessageID
	}
	rn.ctx, rn.cancel = context.WithCancelCause(h.withRunInfo(req, context.WithoutCancel(req.r.Context())))
	rn.ctx, rn.stopTimer = context.WithTimeoutCause(rn.ctx, h.cfg.runLimits.maxDuration(), errRunTooLong)
	if err := h.local.Begin(rn.ctx, rn.key, rn.header); err != nil {
		req.log.Error("could not begin the run's log", "error", err) // a memory log does not fail
	}
	h.runs.add(rn)
	rn.flight = h.inflight.enterRun(rn.cancel)
	if h.shared != nil {
		rn.mirror = newMirror(h, rn.key, rn.header)
	}
	go rn.main()
	return rn
}

// main produces the run, saves it, and ends its log.
func (rn *run) main() {
	h, sess, log := rn.h, rn.sess, rn.req.log
	defer close(rn.done)
	defer h.inflight.exit(rn.flight)
	defer rn.stopTimer()
	defer h.giveSlot(rn.req)
	sess.commit()
	sess.keepLock(func() { rn.cancel(errLockLost) })
	res := h.produce(rn.ctx, rn.req, rn.in, true, rn.publish, rn.cancel)
	out := outcomeOf(rn.ctx, res, sess.lost.Load())
	w := sess.pending(res, out)
	saveOut, saveErr := sess.save(w)
	out = out.saved(saveOut, saveErr)
	out.log(log, true)
	last := out.entries(rn.next)
	// The shared log ends before the lock is released, so a reader that
	// finds the lock free and the log open knows the run's process died.
	sharedEnded := rn.mirror == nil || rn.mirror.finish(last)
	// Nothing is left to stop: a stop from now on finds the run ended
	// (404), as its readers will once the log ends below.
	h.runs.remove(rn)
	if saveOut == maybeSaved || !sharedEnded {
		if saveOut != maybeSaved {
			w = nil
		}
		var m *mirror
		if !sharedEnded {
			m = rn.mirror
		}
		sess.finishLater(w, m) // keeps the lock until it knows
	} else {
		// Unlock before the client sees the end of the reply: useChat may
		// send the next request (an automatic continuation) the moment it
		// reads finish, and must not find the chat locked.
		sess.release()
	}
	if err := h.local.End(context.Background(), rn.key, rn.header.Run, h.cfg.runRetention, last); err != nil {
		log.Error("could not end the run's log", "error", err)
	}
	rn.cancel(nil)
}

func (rn *run) next() int64 { rn.seq++; return rn.seq }

// withRunInfo is parent carrying the run's RunInfo.
func (h *Handler) withRunInfo(req *request, parent context.Context) context.Context {
	return agent.WithRunInfo(parent, agent.RunInfo{Protocol: h.proto.Name(), Scope: req.scope, ChatID: req.turn.ChatID, RunID: req.turn.RunID})
}

// publish appends one event to the log, first waiting for the stream
// that started the run when it is maxAhead behind.
func (rn *run) publish(ev agent.Event) {
	e := runlog.EventEntry(rn.next(), ev)
	for {
		rn.paceMu.Lock()
		wait, progress := !rn.detached && e.Seq-rn.readerAt > maxAhead, rn.progress
		rn.paceMu.Unlock()
		if !wait {
			break
		}
		select {
		case <-progress:
		case <-rn.ctx.Done():
			wait = false
		}
		if !wait {
			break
		}
	}
	if err := rn.h.local.Append(rn.ctx, rn.key, rn.header.Run, e); err != nil {
		rn.req.log.Error("could not log the run's event", "error", err)
	}
}

// paced reports that the stream that started the run has written up to
// seq; leave says it has ended.
func (rn *run) paced(seq int64, leave bool) {
	rn.paceMu.Lock()
	defer rn.paceMu.Unlock()
	if rn.detached {
		return
	}
	rn.readerAt, rn.detached = seq, leave
	close(rn.progress)
	rn.progress = make(chan struct{})
	if leave {
		// Nothing paces the run now: its log merges the deltas nobody
		// reads, so it holds about its text.
		rn.h.local.Coalesce(rn.key, rn.header.Run)
	}
}

// produce runs the agent, keeps its stream balanced (agent.Balancer),
// signs its approval requests, records every event when record is set
// (the reply will be stored), and hands each to emit, except RunFinished,
// which it returns: it is written once the reply is saved, so that a
// reply that could not be saved ends with the protocol's error event
// instead of a normal finish.
//
// With a limiter, each step's tokens are spent as it finishes, and a run
// whose scope has no tokens left is stopped (stop).
func (h *Handler) produce(ctx context.Context, req *request, in *agent.Input, record bool, emit func(agent.Event), stop context.CancelCauseFunc) (res runResult) {
	if record {
		res.rec = agent.NewRecorder()
		res.rec.Stamp(in.Extensions, lastID(in.History, in.Messages))
		res.rec.BaseState(in.State, stateChanged(in.State, in.History))
	}
	ender, _ := h.agent.(agent.PartsEnder)
	bal := agent.Balancer{NoText: !record || ender != nil && ender.EndsParts()}
	maxOutput, output := h.cfg.runLimits.maxOutput(), int64(0)
	sink := func(ev agent.Event) {
		if d, ok := ev.(*agent.PartDelta); ok {
			if output += int64(len(d.Delta)); output > maxOutput {
				stop(errRunTooLarge)
				return
			}
		}
		if e, ok := ev.(*agent.StepFinished); ok && (h.cfg.limiter != nil || h.cfg.addrLimiter != nil) {
			h.spend(ctx, req, e, stop)
		}
		if e, ok := ev.(*agent.ApprovalRequested); ok {
			e.Signature = h.cfg.signer.Sign(h.signedCall(req, e.ToolCallID, e.ToolName, e.Input), time.Now().Add(h.cfg.approvalTTL))
		}
		f, finished := ev.(*agent.RunFinished)
		if finished && h.cfg.metadata != nil {
			f.Metadata = h.appMetadata(req, f)
		}
		if record {
			res.rec.Add(ev)
		}
		if finished {
			res.finished = f
			return
		}
		emit(ev)
	}
	defer func() {
		if p := recover(); p != nil {
			res.err = fmt.Errorf("agent panicked: %v", p)
		}
		bal.End(sink) // a run that stopped early: close what it left open
	}()
	for ev, err := range h.agent.Run(ctx, in) {
		if err != nil {
			res.err = err
			continue
		}
		bal.Add(ev, sink)
	}
	return res
}

// stateChanged reports whether the client changed the shared state: it
// sent one other than the snapshot history last recorded (compared
// compacted). An empty one is no news: a client that has not reconnected
// sends {}.
func stateChanged(state json.RawMessage, history []cmf.Message) bool {
	got := compactState(state)
	if string(got) == "{}" {
		return false
	}
	st := cmf.LastState(history)
	return st == nil || len(st.Patches) > 0 || !bytes.Equal(got, compactState(st.Snapshot))
}

// compactState is state compacted, {} for none (invalid JSON stays as it
// is: it differs from any valid state).
func compactState(state json.RawMessage) []byte {
	var b bytes.Buffer
	switch {
	case len(bytes.TrimSpace(state)) == 0:
		return []byte(`{}`)
	case json.Compact(&b, state) != nil:
		return state
	case b.String() == "null":
		return []byte(`{}`)
	}
	return b.Bytes()
}

// spend charges a finished step's tokens to the request's limit key and
// its address, and stops the run when either has none left.
func (h *Handler) spend(ctx context.Context, req *request, step *agent.StepFinished, stop context.CancelCauseFunc) {
	tokens := step.Usage.InputTokens + step.Usage.OutputTokens
	if tokens <= 0 {
		return
	}
	type account struct {
		l   limit.Limiter
		key string
	}
	accounts := [2]account{{h.cfg.limiter, limitKey(req)}, {}}
	if req.scope != "" {
		accounts[1] = account{h.cfg.addrLimiter, "addr:" + req.addr}
	}
	for _, a := range accounts {
		if a.l == nil {
			continue
		}
		left, err := a.l.Spend(ctx, a.key, tokens)
		switch {
		case err != nil:
			req.log.Warn("the limiter failed: the run goes on unlimited", "error", err)
		case !left:
			req.log.Info("the token budget is used up: run stopped", "tokens", tokens, "key", a.key)
			stop(errBudget)
		}
	}
}

// errBudget stops a run whose scope has no tokens left.
var errBudget = errors.New("the token budget is used up")

// appMetadata calls the application's metadata function and marshals
// what it returns, leaving out (and logging) a value that does not
// marshal.
func (h *Handler) appMetadata(req *request, fin *agent.RunFinished) map[string]json.RawMessage {
	md := h.cfg.metadata(req.r, fin)
	if len(md) == 0 {
		return nil
	}
	out := make(map[string]json.RawMessage, len(md))
	for k, v := range md {
		b, err := json.Marshal(v)
		if err != nil {
			req.log.Error("a metadata value does not marshal: left out", "key", k, "error", err)
			continue
		}
		out[k] = b
	}
	return out
}

// stream answers a chat request: it starts the run and follows its log.
func (h *Handler) stream(w http.ResponseWriter, req *request, in *agent.Input, sess *session) {
	log := req.log
	sse := h.startStream(w, sess != nil)
	if sess != nil {
		w.Header().Set(edge.RunHeader, req.turn.RunID)
		w.Header().Set(edge.StreamIDHeader, req.turn.ChatID)
	}
	w.WriteHeader(http.StatusOK)
	enc := h.proto.NewEncoder(sse, req.turn, req.trusted)
	if sess == nil {
		h.streamLive(req, in, sse, enc)
		return
	}
	if sess.plan.Refusal != "" {
		log.Info("run refused", "reason", sess.plan.Refusal)
		sess.release()
		h.giveSlot(req) // nothing runs
		enc.Fail(sess.plan.Refusal)
		enc.Close()
		_ = sse.Flush()
		return
	}
	rn := h.start(req, in, sess)
	h.follow(req.r, sse, enc, h.local, rn.key, rn.header.Run, 0, false, rn.paced)
	rn.paced(0, true)
}

// streamLive runs a request's run without history, which nothing can
// resume: on the request's goroutine, its events written as they come
// (see live), stopped when its client leaves.
func (h *Handler) streamLive(req *request, in *agent.Input, sse *wire.SSEWriter, enc wire.Encoder) {
	ctx, stop := context.WithTimeoutCause(h.withRunInfo(req, req.r.Context()), h.cfg.runLimits.maxDuration(), errRunTooLong)
	defer stop()
	l := wire.NewLive(sse, enc, h.cfg.keepAlive, func() { req.cancel(errReaderGot) })
	res := h.produce(ctx, req, in, false, l.Emit, req.cancel)
	out := outcomeOf(ctx, res, false)
	out.log(req.log, false)
	l.End()
	defer l.Finish()
	out.encode(enc)
	_ = sse.Flush()
}

// startStream sets the stream's headers and returns its writer. Frames of
// a stream that can be resumed carry SSE ids.
func (h *Handler) startStream(w http.ResponseWriter, resumable bool) *wire.SSEWriter {
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	h.proto.SetHeaders(hdr)
	sse := wire.NewSSEWriter(w)
	sse.WriteTimeout = h.cfg.writeTimeout
	sse.IDs = resumable
	return sse
}

// follow writes a run's log to a stream until the log ends, the client
// goes away, or the log is lost, a page at a time (runlog.Cursor: a
// remote log's reader holds one page, not the run). Entries up to mute are
// encoded but not written: a stream resumed after an event needs the
// encoder in the state that event left it in. remote says the log is
// another process's run: then a run that goes quiet for long is checked
// for a dead process (recoverDead).
//
// pace, when set, hears how far the stream has got.
func (h *Handler) follow(r *http.Request, sse *wire.SSEWriter, enc wire.Encoder, l runlog.Log, key history.Key, run string, mute int64, remote bool, pace func(seq int64, leave bool)) {
	ctx := r.Context()
	wait := h.cfg.keepAlive
	if wait <= 0 {
		wait = time.Minute
	}
	if remote {
		wait = min(wait, h.cfg.lockTTL/10)
	}
	var after int64
	var failing time.Time // since when the shared log has not answered
	cur := runlog.NewCursor(l, key, run, 0)
	for {
		es, err := cur.Next(ctx, wait)
		if remote && err != nil && ctx.Err() == nil && !errors.Is(err, runlog.ErrNoRun) {
			// The shared store may be back soon (a failover, a pause): the
			// run goes on meanwhile, so its reader waits too, for as long
			// as the run's lock would last without it.
			if failing.IsZero() {
				failing = time.Now()
				h.log.Warn("the shared run log does not answer; waiting for it", "chat", key.Chat, "run", run, "error", err)
			}
			if time.Since(failing) < h.cfg.lockTTL {
				select {
				case <-time.After(min(time.Since(failing)/4+50*time.Millisecond, time.Second)):
				case <-ctx.Done():
				}
				continue
			}
		}
		failing = time.Time{}
		switch {
		case err != nil && ctx.Err() != nil && shuttingDown(r):
			// Shutdown cuts the run too: follow it to its end, which
			// tells the client why.
			ctx = context.WithoutCancel(ctx)
			continue
		case err != nil && ctx.Err() != nil:
			return
		case err != nil:
			req := h.log.With("chat", key.Chat, "run", run)
			req.Warn("the run's log could not be read", "error", err)
			enc.Fail(wire.ErrorMessage)
			enc.Close()
			_ = sse.Flush()
			return
		}
		if len(es) == 0 {
			if remote && h.recoverDead(key, run) {
				continue
			}
			if h.cfg.keepAlive > 0 {
				sse.Comment("keep-alive")
			}
		}
		for i := range es {
			e := &es[i]
			after = e.Seq
			sse.Mute = e.Seq <= mute
			sse.SetID(e.Seq)
			switch {
			case e.Event != nil:
				enc.Encode(e.Event)
			case e.Type == runlog.TypeFailed:
				enc.Fail(e.Failed())
			case e.Type == runlog.TypeEnded:
				enc.Close()
				sse.Mute = false
				_ = sse.Flush()
				return
			}
		}
		if sse.Flush() != nil {
			return
		}
		if pace != nil && len(es) > 0 {
			pace(after, false)
		}
	}
}

// runs are the runs of this handler that are alive, by chat.
type runs struct {
	mu   sync.Mutex
	live map[history.Key]*run
}

func (rs *runs) add(rn *run) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.live == nil {
		rs.live = map[history.Key]*run{}
	}
	rs.live[rn.key] = rn
}

func (rs *runs) remove(rn *run) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.live[rn.key] == rn {
		delete(rs.live, rn.key)
	}
}

// stop stops key's run if it is alive here (and is run, when run is set).
func (rs *runs) stop(key history.Key, run string) bool {
	rs.mu.Lock()
	rn := rs.live[key]
	rs.mu.Unlock()
	if rn == nil || run != "" && rn.header.Run != run {
		return false
	}
	rn.cancel(errStopped)
	return true
}
