package testutil

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/uiadapter"
)

// Encode runs events through a protocol's encoder as the handler does
// (balanced by agent.Balancer, Encode each, Close, Flush) and returns the
// SSE body.
func Encode(p wire.Protocol, turn *wire.Turn, events ...agent.Event) string {
	return EncodeTrusted(p, turn, wire.Trusted{}, events...)
}

// EncodeTrusted is Encode with what the server gives the encoder beside
// the turn (the trusted conversation, a sealer).
func EncodeTrusted(p wire.Protocol, turn *wire.Turn, tr wire.Trusted, events ...agent.Event) string {
	rec := httptest.NewRecorder()
	w := wire.NewSSEWriter(rec)
	enc := p.NewEncoder(w, turn, tr)
	for _, ev := range agent.Balance(events, true) {
		enc.Encode(ev)
	}
	enc.Close()
	_ = w.Flush()
	return rec.Body.String()
}

// EventsWith is a run whose every string is s and every JSON value raw:
// ids, names, text, reasoning, tool input and output, state, data and
// denial reasons, progress and metadata, through an approval, a client
// call and an error result.
// The encoders' fuzz targets feed it to check their framing.
func EventsWith(s string, raw json.RawMessage) []agent.Event {
	return []agent.Event{
		&agent.RunStarted{MessageID: s},
		&agent.StepStarted{Step: 1, MessageID: s},
		&agent.PartStarted{Kind: agent.PartThinking, ID: s + "r", MessageID: s},
		&agent.PartDelta{Kind: agent.PartThinking, ID: s + "r", Delta: s},
		&agent.PartEnded{Kind: agent.PartThinking, ID: s + "r", Part: cmf.Thinking{Text: s}},
		&agent.PartStarted{Kind: agent.PartText, ID: s + "t", MessageID: s},
		&agent.PartDelta{Kind: agent.PartText, ID: s + "t", Delta: s},
		&agent.PartEnded{Kind: agent.PartText, ID: s + "t", Part: cmf.Text{Text: s}},
		&agent.PartStarted{Kind: agent.PartToolCall, ID: s + "c", ToolName: s, MessageID: s},
		&agent.PartDelta{Kind: agent.PartToolCall, ID: s + "c", Delta: string(raw)},
		&agent.PartEnded{Kind: agent.PartToolCall, ID: s + "c", Part: cmf.ToolCall{ToolCallID: s + "c", Name: s, Arguments: raw}},
		&agent.ToolProgress{ToolCallID: s + "c", ToolName: s, Output: raw},
		&agent.Source{ID: s, URL: s, Title: s},
		&agent.ToolResult{ToolCallID: s + "c", ToolName: s, Output: raw, MessageID: s},
		&agent.PartStarted{Kind: agent.PartToolCall, ID: s + "e", ToolName: s, MessageID: s},
		&agent.PartEnded{Kind: agent.PartToolCall, ID: s + "e", Part: cmf.ToolCall{ToolCallID: s + "e", Name: s, Arguments: raw}, InputError: s},
		&agent.ToolResult{ToolCallID: s + "e", ToolName: s, Output: raw, IsError: true, Denied: true, Reason: s, ApprovalID: s},
		&agent.StateSnapshot{State: raw},
		&agent.StateDelta{Patch: raw},
		&agent.Data{Name: s, ID: s, Value: raw},
		&agent.PartStarted{Kind: agent.PartToolCall, ID: s + "a", ToolName: s, MessageID: s},
		&agent.PartEnded{Kind: agent.PartToolCall, ID: s + "a", Part: cmf.ToolCall{ToolCallID: s + "a", Name: s, Arguments: raw}},
		&agent.ApprovalRequested{ToolCallID: s + "a", ToolName: s, ApprovalID: s, Input: raw, Signature: s},
		&agent.ClientToolCall{ToolCallID: s + "a", ToolName: s, Input: raw},
		&agent.StepFinished{Step: 1, StopReason: cmf.StopCall},
		&agent.RunFinished{StopReason: cmf.StopCall, Metadata: map[string]json.RawMessage{s: raw}, Pending: []agent.PendingCall{{Kind: agent.PendingApproval, ToolCallID: s + "a", ToolName: s, ApprovalID: s, Input: raw}}},
	}
}

// CheckFrames fails the test unless body is SSE frames of exactly one
// "data: " line each, holding JSON (or [DONE]), with no CR anywhere.
func CheckFrames(t testing.TB, body string) {
	t.Helper()
	if strings.ContainsRune(body, '\r') || !strings.HasSuffix(body, "\n\n") {
		t.Fatalf("bad framing: %q", body)
	}
	for _, frame := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		data, ok := strings.CutPrefix(frame, "data: ")
		if !ok || strings.ContainsAny(data, "\n\u2028\u2029") {
			t.Fatalf("not one data line: %q", frame)
		}
		if data != "[DONE]" && !json.Valid([]byte(data)) {
			t.Fatalf("not JSON: %q", data)
		}
	}
}

// FuzzFraming runs whole runs through p's encoder with arbitrary strings
// and JSON values in every field (EventsWith): each event must stay one
// data line of JSON (CheckFrames).
func FuzzFraming(f *testing.F, p wire.Protocol) {
	f.Add("x", []byte(`{"a":1}`))
	f.Add("line\nbreak\r\n\u2028", []byte("{\n  \"city\":\r\n \"Ber\\nlin\u2028\"\n}"))
	f.Add("data: [DONE]\n\n", []byte("[1,\n2]"))
	f.Add("\x00\x1f\"\\", []byte("\"\u2029\""))
	f.Fuzz(func(t *testing.T, s string, raw []byte) {
		if !json.Valid(raw) {
			return // the agent hands encoders only valid JSON
		}
		CheckFrames(t, Encode(p, &wire.Turn{ChatID: s, RunID: s}, EventsWith(s, raw)...))
	})
}

// ShutdownNow cuts the handlers' runs and waits for them, so that a test
// leaves no run behind (runs with history outlive their requests).
func ShutdownNow(hs ...*uiadapter.Handler) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, h := range hs {
		_ = h.Shutdown(ctx)
	}
}
