package uiadapter

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/edge"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/ids"
	"github.com/agentui/agentui/internal/run"
	"github.com/agentui/agentui/internal/turn"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/runlog"
)

// The queue: a message sent with busy "queue" while its chat produces a
// reply waits in the chat's queue (history.Queue, kept with the chat in
// the store) and runs as a turn of its own once the chat is free, one at
// a time, in the order they came. Whoever finds the chat free runs the
// queue's head: the replica whose run just ended (drainAfter), or a
// queued request that is waiting for its own turn (serveQueued), on any
// replica, which also outlives a replica that died with the chat's run.
// A queued message is run on behalf of its owner's request: the one that
// queued it, or the ended run's, both of its scope.

// MaxQueued is how many messages a chat's queue holds; one more is
// refused (409).
const MaxQueued = 20

// enqueue queues the turn's new user message behind the chat's running
// reply, once it has passed what a turn's message passes. The request
// is answered by serveQueued (req.queued).
func (req *request) enqueue(key history.Key) error {
	h, t := req.h, req.turn
	if h.cfg.queue == nil {
		return &wire.Error{Status: http.StatusConflict, Message: "a reply is still being produced for this chat, and this server keeps no queue", Code: wire.CodeBusy}
	}
	m, err := req.busyMessage()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(req.r.Context(), h.cfg.storeTimeout)
	defer cancel()
	at, err := h.cfg.queue.Enqueue(ctx, key, history.Queued{Message: m, RunID: t.RunID, Model: req.model, At: time.Now().UTC()}, MaxQueued)
	switch {
	case errors.Is(err, history.ErrQueueFull):
		return wire.Conflict("this chat's queue is full: wait for its replies")
	case err != nil:
		return wire.Unavailable("conversation history is unavailable", err)
	}
	req.log.Info("a message sent while the reply ran was queued", "message", m.ID(), "position", at)
	req.queued = &agent.SendOutcome{Outcome: agent.OutcomeQueued, MessageID: m.ID(), RunID: t.RunID, Position: at}
	return nil
}

// serveQueued answers a request whose message was queued: the outcome
// at once, then nothing (keep-alives) until the message's turn runs, and
// then that turn, as any turn's stream. While it waits, it runs the
// queue's head whenever it finds the chat free, so a queue whose chat's
// run died with its replica goes on. A client that leaves leaves its
// message queued: it runs all the same.
func (h *Handler) serveQueued(w http.ResponseWriter, req *request) {
	t := req.turn
	key := history.Key{Scope: req.who.scope, Chat: t.ChatID}
	if q, ok := w.(queuedRecorder); ok {
		q.setQueued(req.queued.MessageID)
	}
	sse := h.startStream(w, true)
	w.Header().Set(edge.RunHeader, t.RunID)
	w.Header().Set(edge.StreamIDHeader, t.ChatID)
	w.WriteHeader(http.StatusOK)
	h.proto.NewEncoder(sse, t, wire.Trusted{}).Encode(req.queued)
	if sse.Flush() != nil {
		return
	}
	ctx, mine := req.r.Context(), req.queued.MessageID
	quiet := time.Duration(0) // how long the last look found nothing to do
	for ctx.Err() == nil {
		src, err := h.runs.Find(ctx, key)
		switch {
		case err == nil && runsMessage(src.Header, mine):
			// Its turn runs (started by another request or replica).
			h.runs.Follow(ctx, &src, sse, h.proto.NewEncoder(sse, t, h.trustedBefore(ctx, key, src.Header, req.log)), 0, nil)
			return
		case err == nil && !src.Header.Ended:
			// Another reply runs: wait for its end.
			h.runs.Follow(ctx, &src, sse, nopEncoder{}, math.MaxInt64, nil)
			quiet = 0
			continue
		case err != nil && !errors.Is(err, runlog.ErrNoRun):
			req.log.Warn("a queued message's request cannot read its chat's runs", "error", err)
		}
		if h.runs.Closing() {
			// This replica is shutting down: it starts nothing more. The
			// message stays queued, for another replica or the next start.
			enc := h.proto.NewEncoder(sse, t, wire.Trusted{Begun: true})
			enc.Fail(wire.QueuedAtShutdownMessage)
			enc.Close()
			_ = sse.Flush()
			return
		}
		rn, sub, left, err := req.runHead(ctx, key, mine)
		switch {
		case rn != nil && sub.queuedID == mine:
			h.runs.Follow(ctx, rn.Source(), sse, h.proto.NewEncoder(sse, t, wire.Trusted{History: sub.trusted.History, Added: sub.trusted.Added, Begun: true}), 0, rn.Paced)
			rn.Paced(0, true)
			return
		case rn != nil:
			rn.Paced(0, true) // another's: nobody here reads it
			quiet = 0
			continue
		case err == nil && !left:
			// Its message is no longer queued: it ran (its run may have
			// begun and ended since the look above), or its owner
			// removed it.
			if src, err := h.runs.Find(ctx, key); err == nil && runsMessage(src.Header, mine) {
				h.runs.Follow(ctx, &src, sse, h.proto.NewEncoder(sse, t, h.trustedBefore(ctx, key, src.Header, req.log)), 0, nil)
				return
			}
			h.proto.NewEncoder(sse, t, wire.Trusted{Begun: true}).Close()
			_ = sse.Flush()
			return
		case errors.As(err, new(*droppedError)):
			// Its message can never run: its client is told why.
			msg := wire.ErrorMessage
			if e := (*wire.Error)(nil); errors.As(err, &e) {
				msg = e.Message
			}
			enc := h.proto.NewEncoder(sse, t, wire.Trusted{Begun: true})
			enc.Fail(msg)
			enc.Close()
			_ = sse.Flush()
			return
		case err != nil:
			req.log.Warn("the chat's queue could not be run; trying again", "error", err)
		}
		// The chat is busy with a run not yet in its log, or the store did
		// not answer: look again shortly.
		quiet = min(2*quiet+10*time.Millisecond, time.Second)
		select {
		case <-time.After(quiet):
		case <-ctx.Done():
		}
		sse.Comment("queued")
		if sse.Flush() != nil {
			return
		}
	}
}

// trustedBefore is what an encoder of a stream joining a run it did not
// start gets beside the turn: the conversation the run built on and what
// its turn added (so an AG-UI client's copy is brought in line), with the
// stream's opening frames written already. Without the stored
// conversation it gets neither.
func (h *Handler) trustedBefore(ctx context.Context, key history.Key, hdr runlog.Header, log *slog.Logger) wire.Trusted {
	// The turn's own messages may not be stored yet (its run commits
	// them as it starts): what came before them is.
	n := hdr.Base - len(hdr.Turn)
	before := h.storedBefore(ctx, key, runlog.Header{Base: n}, log)
	if n < 0 || len(before) < n {
		return wire.Trusted{Begun: true}
	}
	return wire.Trusted{History: before, Added: h.shownFiles(key.Scope, hdr.Turn), Begun: true}
}

// runHead runs the head of key's queue if the chat is free: it returns
// the run started, and the request it runs on behalf of (sub.queuedID is
// its message). Messages the chat already holds (they ran, and their end
// was lost with their replica) are dropped on the way. left says whether
// the message mine is still queued; err is a store that did not answer.
// A chat that is busy starts nothing.
func (req *request) runHead(ctx context.Context, key history.Key, mine string) (rn *run.Run, sub *request, left bool, err error) {
	h := req.h
	if h.runs.Closing() {
		return nil, nil, true, nil // shutting down: nothing new starts here
	}
	s, conv, err := h.runs.Open(ctx, key, req.log)
	if run.IsBusy(err) {
		return nil, nil, true, nil
	}
	if err != nil {
		return nil, nil, true, err
	}
	qctx, cancel := context.WithTimeout(ctx, h.cfg.storeTimeout)
	defer cancel()
	qs, err := h.cfg.queue.Queued(qctx, key)
	if err != nil {
		s.Release()
		return nil, nil, true, err
	}
	for len(qs) > 0 && slices.ContainsFunc(conv.Messages, func(m cmf.Message) bool { return m.ID() == qs[0].ID() }) {
		if _, err := h.cfg.queue.Dequeue(qctx, key, qs[0].ID()); err != nil {
			s.Release()
			return nil, nil, true, err
		}
		qs = qs[1:]
	}
	left = slices.ContainsFunc(qs, func(q history.Queued) bool { return q.ID() == mine })
	if len(qs) == 0 {
		s.Release()
		return nil, nil, left, nil
	}
	sub = req.queuedRequest(key, qs[0])
	in, err := sub.planQueued(s, conv)
	if err != nil {
		// It can never run (the chat is at its size limit): it goes, so
		// the rest of the queue does not wait behind it forever.
		sub.log.Warn("a queued message cannot run: dropped from the queue", "error", err)
		s.Release()
		_, _ = h.cfg.queue.Dequeue(qctx, key, qs[0].ID())
		if qs[0].ID() == mine {
			return nil, nil, false, &droppedError{err}
		}
		return nil, nil, left, nil
	}
	if err := sub.fileBytes(in); err != nil {
		s.Release()
		return nil, nil, left, err // the store did not answer: tried again
	}
	if err := h.cfg.runLimits.take(sub.limitKey(), sub.who.addr); err != nil {
		sub.log.Info("a queued message waits: too many runs at once", "error", err)
		s.Release()
		return nil, nil, left, nil
	}
	sub.slot = sub.limitKey()
	sub.log.Info("a queued message runs", "message", sub.queuedID, "run", sub.turn.RunID)
	return sub.start(in, s), sub, left, nil
}

// runsMessage reports whether hdr's run is the turn of the queued
// message id (its turn's last message): a retried request of the same
// message finds it whatever run id it asked for.
func runsMessage(hdr runlog.Header, id string) bool {
	n := len(hdr.Turn)
	return n > 0 && hdr.Turn[n-1].ID() == id
}

// droppedError: the waiting request's own message was dropped from the
// queue, as it can never run (err says why).
type droppedError struct{ err error }

func (d *droppedError) Error() string { return "a queued message cannot run: " + d.err.Error() }
func (d *droppedError) Unwrap() error { return d.err }

// queuedRequest is the request a queued message runs as: req's caller
// and context (its owner's), and a turn of that one message.
func (req *request) queuedRequest(key history.Key, q history.Queued) *request {
	runID := q.RunID
	if runID == "" {
		runID = ids.New()
	}
	t := &wire.Turn{ChatID: key.Chat, RunID: runID, Intent: wire.Submit, Messages: []cmf.Message{q.Message}}
	return &request{h: req.h, r: req.r, cancel: req.cancel, log: req.h.log.With("chat", key.Chat, "intent", "queued"),
		turn: t, who: req.who, model: q.Model, queuedID: q.ID()}
}

// planQueued plans a queued message's turn on the conversation s holds.
// The message passed the input policies when it was queued.
func (req *request) planQueued(s *run.Session, conv history.Conversation) (*agent.Input, error) {
	h := req.h
	size := turn.ChatSize{Messages: len(conv.Messages), Bytes: conv.Bytes, MaxMessages: h.cfg.maxChatMessages, MaxBytes: h.cfg.maxChatBytes, AtLimitCheck: true}
	p, findings, err := turn.PlanStored(conv.Messages, req.turn, size, &h.cfg.policy)
	findings.Log(req.log)
	if err != nil {
		return nil, err
	}
	s.Plan = p
	kept := conv.Messages[:p.Keep:p.Keep]
	req.trusted = wire.Trusted{History: h.shownFiles(req.who.scope, kept), Added: h.shownFiles(req.who.scope, p.Add)}
	return h.withLedger(req.input(kept, p.Add, p.Resume), history.Key{Scope: req.who.scope, Chat: req.turn.ChatID}), nil
}

// drainAfter runs the head of the chat's queue once req's run has ended
// and let go of the chat, on the replica that ran it; that run's end
// drains the next. A chat someone else took first starts nothing here.
func (req *request) drainAfter() {
	h := req.h
	key := history.Key{Scope: req.who.scope, Chat: req.turn.ChatID}
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(req.r.Context()))
	defer cancel(nil)
	id, ok := h.runs.Enter(cancel)
	if !ok {
		return // shutting down: the queue waits for another replica or the next start
	}
	defer h.runs.Exit(id)
	qctx, qcancel := context.WithTimeout(ctx, h.cfg.storeTimeout)
	qs, err := h.cfg.queue.Queued(qctx, key)
	qcancel()
	if err != nil || len(qs) == 0 {
		if err != nil {
			req.log.Warn("the chat's queue could not be read after its run", "error", err)
		}
		return
	}
	rn, _, _, err := req.runHead(ctx, key, "")
	if err != nil {
		req.log.Warn("the chat's queue could not be run after its run", "error", err)
	}
	if rn != nil {
		rn.Paced(0, true) // its readers resume it
	}
}

// ended is a run's end, once it has let go of what it held: its place
// under RunLimits goes back, a queued message that ran leaves the queue,
// and the queue's next message runs.
func (req *request) ended() {
	req.giveSlot()
	h := req.h
	if h.cfg.queue == nil {
		return
	}
	if req.queuedID != "" {
		key := history.Key{Scope: req.who.scope, Chat: req.turn.ChatID}
		ctx, cancel := context.WithTimeout(context.Background(), h.cfg.storeTimeout)
		if _, err := h.cfg.queue.Dequeue(ctx, key, req.queuedID); err != nil {
			// The next to run drops it: the chat holds it now.
			req.log.Warn("a queued message that ran could not leave the queue", "error", err)
		}
		cancel()
	}
	go req.drainAfter()
}

// nopEncoder encodes nothing: for a stream that waits out a run it does
// not show.
type nopEncoder struct{}

func (nopEncoder) Encode(agent.Event) {}
func (nopEncoder) Fail(string)        {}
func (nopEncoder) Close()             {}

// QueuedMessage is a queued message as QueueHandler lists it.
type QueuedMessage struct {
	ID       string    `json:"id"`
	Text     string    `json:"text"`
	Position int       `json:"position"` // 1: the next to run
	QueuedAt time.Time `json:"queuedAt"`
}

// QueueHandler serves a chat's queue (the messages sent with busy
// "queue" while its reply ran): GET {api}/chat/{id}/queue lists it as
// {"queued": [QueuedMessage…]}, the next to run first; DELETE
// {api}/chat/{id}/queue/{message} removes one that has not begun to run
// (204; 404 when it is not queued). Another scope's chat has an empty
// queue. A listing that finds the chat free and its queue waiting (the
// replica that ran it died, and no client waits) runs the queue's head.
// The chat id is chatID(r); nil reads the ServeMux path value "id"; the
// message is the path value "message".
func (h *Handler) QueueHandler(chatID func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, log, ok := h.chatRequest(w, r, "GET, HEAD, DELETE", chatID)
		if !ok {
			return
		}
		if h.cfg.queue == nil {
			wire.WriteError(w, log, &wire.Error{Status: http.StatusNotFound, Message: "this server keeps no queue"})
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), h.cfg.storeTimeout)
		defer cancel()
		if r.Method == http.MethodDelete {
			id := r.PathValue("message")
			if err := wire.CheckID("message id", id); err != nil {
				wire.WriteError(w, log, err)
				return
			}
			h.dequeue(ctx, w, key, id, log)
			return
		}
		qs, err := h.cfg.queue.Queued(ctx, key)
		if err != nil {
			wire.WriteError(w, log, wire.Unavailable("conversation history is unavailable", err))
			return
		}
		out := struct {
			Queued []QueuedMessage `json:"queued"`
		}{Queued: make([]QueuedMessage, 0, len(qs))}
		running := ""
		if src, err := h.runs.Find(ctx, key); err == nil && !src.Header.Ended && len(src.Header.Turn) > 0 {
			running = src.Header.Turn[len(src.Header.Turn)-1].ID()
		} else if len(qs) > 0 {
			req := &request{h: h, r: r, log: log, who: caller{scope: key.Scope, addr: h.cfg.clientAddr(r)}, turn: &wire.Turn{ChatID: key.Chat}}
			go req.drainAfter()
		}
		for _, q := range qs {
			if q.ID() == running {
				continue // it has begun: no longer waiting
			}
			out.Queued = append(out.Queued, QueuedMessage{ID: q.ID(), Text: q.Message.Text(), Position: len(out.Queued) + 1, QueuedAt: q.At})
		}
		writeJSON(w, http.StatusOK, out)
	})
}

// dequeue removes a queued message for its owner, unless it has begun to
// run (409).
func (h *Handler) dequeue(ctx context.Context, w http.ResponseWriter, key history.Key, id string, log *slog.Logger) {
	if src, err := h.runs.Find(ctx, key); err == nil && !src.Header.Ended && slices.ContainsFunc(src.Header.Turn, func(m cmf.Message) bool { return m.ID() == id }) {
		wire.WriteError(w, log, &wire.Error{Status: http.StatusConflict, Message: "this message is being answered: stop the reply instead", Code: wire.CodeBusy})
		return
	}
	switch gone, err := h.cfg.queue.Dequeue(ctx, key, id); {
	case err != nil:
		wire.WriteError(w, log, wire.Unavailable("conversation history is unavailable", err))
	case !gone:
		wire.WriteError(w, log, &wire.Error{Status: http.StatusNotFound, Message: "no such queued message"})
	default:
		log.Info("a queued message was removed", "message", id)
		w.WriteHeader(http.StatusNoContent)
	}
}
