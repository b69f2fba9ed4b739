package modeltest

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
)

// usage: the finish chunk reports what the API billed, counted as
// docs/models.md says (and [checkFinish] holds every finish chunk to).
func (s *suite) usage(t *testing.T) {
	t.Run("any reply", func(t *testing.T) {
		b := s.start(t)
		m := s.model(t, b, Config{})
		if !s.lacks(Scripted) {
			b.Script(Answer{Reasoning: "The user greets me.", Text: "Hello! How can I help?"})
		}
		r := s.call(t, context.Background(), m, s.h.Model, ask("Hello"))
		if r.err != nil {
			t.Fatalf("the call failed: %v", r.err)
		}
		if r.finish.Usage.IsZero() {
			t.Error("the finish chunk reports no usage")
		}
	})
	for _, tc := range []struct {
		name string
		caps []Capability
		bill Usage
	}{
		{"as billed", []Capability{Scripted}, Usage{Input: 1200, CachedInput: 1000, Output: 300, Reasoning: 120}},
		{"as billed with cache writes", []Capability{Scripted, CacheWrites}, Usage{Input: 1200, CachedInput: 900, CacheWrite: 250, Output: 300, Reasoning: 120}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.needs(t, tc.caps...)
			b := s.start(t)
			m := s.model(t, b, Config{})
			b.Script(Answer{Reasoning: "The user greets me.", Text: "Hello! How can I help?", Usage: &tc.bill})
			r := s.call(t, context.Background(), m, s.h.Model, ask("Hello"))
			if r.err != nil {
				t.Fatalf("the call failed: %v", r.err)
			}
			u := tc.bill
			want := agent.Usage{InputTokens: u.Input, OutputTokens: u.Output, ReasoningTokens: u.Reasoning,
				CachedInputTokens: u.CachedInput, CacheWriteTokens: u.CacheWrite, TotalTokens: u.Input + u.Output}
			if got := r.finish.Usage; got != want {
				t.Errorf("the API billed %+v; the finish chunk reports %+v, want %+v", u, got, want)
			}
		})
	}
}

// stopReasons: each way an API ends a reply comes out as the stop reason
// docs/models.md names for it.
func (s *suite) stopReasons(t *testing.T) {
	s.needs(t, Scripted)
	for _, tc := range []struct {
		name   string
		answer Answer
		want   cmf.StopReason
	}{
		{"end of turn", Answer{Text: "It is sunny in Oslo."}, cmf.StopEnd},
		{"tool call", Answer{Text: "Let me look.", Call: &Call{Name: "lookup", Args: lookupArgs}}, cmf.StopCall},
		{"output limit", Answer{Text: "It is sunny in", Stop: MaxTokens}, cmf.StopMaxTokens},
		{"content filter", Answer{Text: "I cannot help with that.", Stop: ContentFilter}, cmf.StopRefusal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := s.start(t)
			m := s.model(t, b, Config{})
			b.Script(tc.answer)
			req := ask("What is the weather in Oslo?")
			req.Tools = []agent.ToolSpec{lookupSpec}
			r := s.call(t, context.Background(), m, s.h.Model, req)
			if r.err != nil {
				t.Fatalf("the call failed: %v", r.err)
			}
			if r.finish.StopReason != tc.want {
				t.Errorf("stop reason %q, want %q", r.finish.StopReason, tc.want)
			}
			if got := r.text(); got != tc.answer.Text {
				t.Errorf("the text is %q, want %q", got, tc.answer.Text)
			}
			if tc.answer.Call != nil {
				checkCall(t, r.chunks, *tc.answer.Call)
			}
		})
	}
}

// checkCall: the chunks hold one call, named and with the arguments
// scripted.
func checkCall(t *testing.T, chunks []agent.Chunk, want Call) {
	t.Helper()
	var id, name string
	var args bytes.Buffer
	for _, c := range chunks {
		if c.Kind != agent.ChunkToolCall {
			continue
		}
		if id == "" {
			id, name = c.ToolCallID, c.ToolName
		}
		if c.ToolCallID != id {
			t.Fatalf("two calls (%q, %q) where one was scripted", id, c.ToolCallID)
		}
		args.WriteString(c.Delta)
	}
	if id == "" || name != want.Name {
		t.Fatalf("the call has id %q, name %q; want an id, and name %q", id, name, want.Name)
	}
	var got, exp any
	if json.Unmarshal(args.Bytes(), &got) != nil || json.Unmarshal([]byte(want.Args), &exp) != nil || !jsonEqual(got, exp) {
		t.Errorf("the call's arguments are %s, want %s", args.Bytes(), want.Args)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
