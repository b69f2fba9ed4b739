package uiadapter

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/edge"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/ids"
	"github.com/agentui/agentui/internal/run"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/runlog"
)

// pathID reads the chat id from the ServeMux path value "id".
func pathID(r *http.Request) string { return r.PathValue("id") }

// historyRequest checks what every route over stored chats checks: the
// method (one of allow, as the Allow header lists them: "GET, HEAD"),
// the cross-site rule (edge.CheckCrossSite) for a request that changes state,
// that history is kept, and the scope.
func (h *Handler) historyRequest(w http.ResponseWriter, r *http.Request, allow string) (string, *slog.Logger, bool) {
	log := h.log
	if r.ContentLength != 0 && h.cfg.bodyTimeout > 0 {
		// A refusal below leaves the body unread, and net/http reads it
		// before answering: bounded, like every body.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(h.cfg.bodyTimeout))
	}
	if methods := strings.Split(allow, ", "); !slices.Contains(methods, r.Method) {
		w.Header().Set("Allow", allow)
		wire.WriteError(w, log, &wire.Error{Status: http.StatusMethodNotAllowed, Message: "method not allowed: use " + methods[0]})
		return "", log, false
	}
	if err := edge.CheckCrossSite(r); err != nil {
		wire.WriteError(w, log, err)
		return "", log, false
	}
	if h.cfg.store == nil {
		wire.WriteError(w, log, &wire.Error{Status: http.StatusNotFound, Message: "this server keeps no conversations"})
		return "", log, false
	}
	scope, err := h.cfg.scope(r)
	if err = scopeError(err); err != nil {
		wire.WriteError(w, log, err)
		return "", log, false
	}
	return scope, log, true
}

// chatRequest checks what historyRequest checks, and the chat id
// (chatID(r); nil reads the ServeMux path value "id").
func (h *Handler) chatRequest(w http.ResponseWriter, r *http.Request, allow string, chatID func(*http.Request) string) (history.Key, *slog.Logger, bool) {
	scope, log, ok := h.historyRequest(w, r, allow)
	if !ok {
		return history.Key{}, log, false
	}
	if chatID == nil {
		chatID = pathID
	}
	id := chatID(r)
	if err := wire.CheckChatID(id); err != nil {
		wire.WriteError(w, log, err)
		return history.Key{}, log, false
	}
	return history.Key{Scope: scope, Chat: id}, log.With("chat", id), true
}

// lastEventID parses Last-Event-ID: "<sequence>", or "<run>:<sequence>"
// to name the run (RunHeader). Anything else is a 400.
func lastEventID(r *http.Request) (run string, seq int64, err error) {
	run, seq, ok := parseLastEventID(r)
	if !ok {
		return "", 0, wire.BadRequest("Last-Event-ID must be <sequence> or <run>:<sequence>")
	}
	if err := wire.CheckID("the run id of Last-Event-ID", run); err != nil {
		return "", 0, err
	}
	return run, seq, nil
}

func parseLastEventID(r *http.Request) (run string, seq int64, ok bool) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		return "", 0, true
	}
	if i := strings.LastIndexByte(v, ':'); i >= 0 {
		run, v = v[:i], v[i+1:]
	}
	seq, err := strconv.ParseInt(v, 10, 64)
	return run, seq, err == nil && seq >= 0
}

// ResumeHandler serves GET {api}/{id}/stream, where useChat({resume:
// true}) asks for a reply still being produced when the page loads: 204
// when the chat has no active run, else its whole stream from the start
// (what useChat expects: resumeStreamIsReplay) and then live, until it
// ends. Any replica serves it when the handler has a shared run log
// (WithRunLog). With Last-Event-ID the stream starts right after that
// event, also for a run that has ended but whose log is still kept. The
// chat id is chatID(r); nil reads the ServeMux path value "id". Another
// scope's chat has no run (204).
func (h *Handler) ResumeHandler(chatID func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, log, ok := h.chatRequest(w, r, http.MethodGet, chatID)
		if !ok {
			return
		}
		run, after, err := lastEventID(r)
		if err != nil {
			wire.WriteError(w, log, err)
			return
		}
		src, err := h.runs.Find(r.Context(), key)
		hdr := src.Header
		switch {
		case errors.Is(err, runlog.ErrNoRun),
			err == nil && run != "" && hdr.Run != run,
			err == nil && after == 0 && hdr.Ended && !replaysEnded(r.Context()):
			w.WriteHeader(http.StatusNoContent)
			return
		case err != nil:
			wire.WriteError(w, log, wire.Unavailable("the run log is unavailable", err))
			return
		}
		if wantsDeltas(r.Context()) {
			src = src.AsLogged()
		}
		t := &wire.Turn{ChatID: key.Chat, RunID: hdr.Run, Intent: wire.Submit}
		var tr wire.Trusted
		if hdr.Continue != "" {
			t.Intent, t.MessageID = wire.Continue, hdr.Continue
			if after == 0 {
				// The reader replays from the start but may not hold the
				// message the run continues (useChat starts a resumed
				// message empty): the encoder gets the conversation the
				// run built on, to send that message first.
				tr.History = h.storedBefore(r.Context(), key, hdr, log)
			}
		}
		h.replay(w, r, t, tr, src, after)
	})
}

// replay streams a run's log to a reader that did not start it, after
// the events of first, holding one of the scope's resume slots
// (WithMaxResumes) while it lasts: 429 when none is free.
func (h *Handler) replay(w http.ResponseWriter, r *http.Request, turn *wire.Turn, tr wire.Trusted, src run.Source, after int64, first ...agent.Event) {
	key := src.Key
	if !h.cfg.resumes.take(key.Scope) {
		wire.WriteError(w, h.log.With("chat", key.Chat), tooManyResumes(w))
		return
	}
	defer h.cfg.resumes.release(key.Scope)
	sse := h.startStream(w, true)
	w.Header().Set(edge.RunHeader, src.Header.Run)
	w.WriteHeader(http.StatusOK)
	enc := h.proto.NewEncoder(sse, turn, tr)
	for _, ev := range first {
		enc.Encode(ev)
	}
	h.runs.Follow(r.Context(), &src, sse, enc, after, nil)
}

// StopHandler serves POST {api}/{id}/stop: it stops the chat's active run
// on whichever replica runs it (202), or says there is none (404, also
// for another scope's chat). The run stores what it produced (stop reason
// aborted) and every stream that shows it ends with the protocol's
// terminal frames. The chat id is chatID(r); nil reads the ServeMux path
// value "id".
func (h *Handler) StopHandler(chatID func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, log, ok := h.chatRequest(w, r, http.MethodPost, chatID)
		if !ok {
			return
		}
		if err := h.runs.Stop(r.Context(), key); err != nil {
			wire.WriteError(w, log, err)
			return
		}
		log.Info("stop requested")
		w.WriteHeader(http.StatusAccepted)
	})
}

// ConnectHandler serves a reconnecting client (AG-UI's connect, POST with
// the protocol's request body; the chat is the body's thread): the stored
// conversation and shared state, and then the chat's active run from its
// start, live, or, when none is running, what the conversation waits for
// (pending approvals and client tool calls, as the protocol's end of a
// paused run). Nothing runs the agent. With Last-Event-ID the stream is
// the active run's, right after that event.
func (h *Handler) ConnectHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log := h.log
		body, err := h.cfg.postBody(w, r)
		if err != nil {
			wire.WriteError(w, log, err)
			return
		}
		turn, err := h.proto.Decode(r, body)
		if err != nil {
			wire.WriteError(w, log, err)
			return
		}
		key, log, ok := h.chatRequest(w, r, http.MethodPost, func(*http.Request) string { return turn.ChatID })
		if !ok {
			return
		}
		run, after, err := lastEventID(r)
		if err != nil {
			wire.WriteError(w, log, err)
			return
		}
		src, err := h.runs.Find(r.Context(), key)
		hdr := src.Header
		if err != nil && !errors.Is(err, runlog.ErrNoRun) {
			wire.WriteError(w, log, wire.Unavailable("the run log is unavailable", err))
			return
		}
		active := err == nil && (!hdr.Ended || after > 0) && (run == "" || run == hdr.Run)
		ctx, cancel := context.WithTimeout(r.Context(), h.cfg.storeTimeout)
		conv, err := h.cfg.store.Load(ctx, key)
		cancel()
		if err != nil {
			wire.WriteError(w, log, wire.Unavailable("conversation history is unavailable", err))
			return
		}
		if active {
			// The snapshot is the conversation before the run's reply; the
			// replay adds the reply, so no message shows twice. The run's
			// own turn comes from its header: its store may not be done.
			before := min(max(hdr.Base-len(hdr.Turn), 0), len(conv.Messages))
			t := &wire.Turn{ChatID: key.Chat, RunID: hdr.Run, Intent: wire.Submit, ProtocolVersion: turn.ProtocolVersion, Messages: turn.Messages}
			tr := wire.Trusted{History: h.shownFiles(key.Scope, append(conv.Messages[:before:before], hdr.Turn...)), Added: []cmf.Message{}}
			var state []agent.Event
			if after == 0 { // a reader that resumes holds the state it saw
				state = storedState(conv.Messages[:before])
			}
			h.replay(w, r, t, tr, src, after, state...)
			return
		}
		t := &wire.Turn{ChatID: key.Chat, RunID: ids.New(), Intent: wire.Submit, ProtocolVersion: turn.ProtocolVersion, Messages: turn.Messages}
		tr := wire.Trusted{History: h.shownFiles(key.Scope, conv.Messages), Added: []cmf.Message{}}
		sse := h.startStream(w, false)
		w.WriteHeader(http.StatusOK)
		enc := h.proto.NewEncoder(sse, t, tr)
		req := &request{h: h, r: r, turn: t, trusted: tr, who: caller{scope: key.Scope}, log: log}
		for _, ev := range req.waitingFor(conv.Messages) {
			enc.Encode(ev)
		}
		enc.Close()
		_ = sse.Flush()
	})
}

// waitingFor is a run that only shows a stored conversation's state: the
// shared state it recorded last, then a paused run's end for what it
// waits for: its pending approval requests (signed, as the run signed
// them) and client tool calls.
func (req *request) waitingFor(msgs []cmf.Message) []agent.Event {
	h := req.h
	evs := append([]agent.Event{&agent.RunStarted{}}, storedState(msgs)...)
	fin := &agent.RunFinished{StopReason: cmf.StopEnd}
	for _, p := range cmf.PendingToolCalls(msgs) {
		c := p.Call
		switch p.Status() {
		case cmf.CallAwaitingApproval:
			sig := h.cfg.signer.Sign(req.signedCall(c.ToolCallID, c.Name, c.Arguments), time.Now().Add(h.cfg.approvalTTL))
			evs = append(evs, &agent.ApprovalRequested{ToolCallID: c.ToolCallID, ToolName: c.Name, ApprovalID: p.ApprovalID, Input: c.Arguments, Signature: sig})
			fin.Pending = append(fin.Pending, agent.PendingCall{Kind: agent.PendingApproval, ToolCallID: c.ToolCallID, ToolName: c.Name, ApprovalID: p.ApprovalID, Input: c.Arguments})
		case cmf.CallAwaitingClient:
			evs = append(evs, &agent.ClientToolCall{ToolCallID: c.ToolCallID, ToolName: c.Name, Input: c.Arguments})
			fin.Pending = append(fin.Pending, agent.PendingCall{Kind: agent.PendingClient, ToolCallID: c.ToolCallID, ToolName: c.Name, Input: c.Arguments})
		}
	}
	if len(fin.Pending) > 0 {
		fin.StopReason = cmf.StopPaused
	}
	return append(evs, fin)
}

// storedState is the shared state msgs recorded last (cmf.LastState), as
// the events that set it; none when no run recorded one.
func storedState(msgs []cmf.Message) []agent.Event {
	st := cmf.LastState(msgs)
	if st == nil {
		return nil
	}
	evs := []agent.Event{&agent.StateSnapshot{State: st.Snapshot}}
	for _, p := range st.Patches {
		evs = append(evs, &agent.StateDelta{Patch: p})
	}
	return evs
}

// storedBefore returns the stored conversation a run built on (its first
// hdr.Base messages), nil when the store cannot say: the stream then
// goes without it.
func (h *Handler) storedBefore(ctx context.Context, key history.Key, hdr runlog.Header, log *slog.Logger) []cmf.Message {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.storeTimeout)
	defer cancel()
	conv, err := h.cfg.store.Load(ctx, key)
	if err != nil {
		log.Warn("could not load the conversation for a resumed continuation; the stream shows only what the run adds", "error", err)
		return nil
	}
	n := min(hdr.Base, len(conv.Messages))
	return h.shownFiles(key.Scope, conv.Messages[:n:n])
}
