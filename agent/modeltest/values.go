package modeltest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
)

// providers are the tags of the values agentui's own models keep; the
// suite puts theirs, and values of a provider no model knows, in the
// histories it sends. (They are written out, not imported, so that a
// provider's tests need no other provider's SDK.)
var providers = []string{"anthropic", "openai.responses", "gemini", "acme.unknown"}

// value is a value in a conversation, and what is known of it.
type value struct {
	value *cmf.Opaque
	where string // its origin and part, for the report
	// decoded is what a value the suite made decodes to, and what its id
	// carries (a model might decode a value before it sends it, or send
	// its id alone); "" for a model's own.
	decoded string
	// thinking is the reasoning text of the part it came on, for a value
	// the suite put on a Thinking part.
	thinking string
}

// foreignValues: a history with values of other providers, of another
// model of this provider and of unknown origin sends none of them, nor the
// reasoning they came with; the text and tool calls of those steps still
// go.
func (s *suite) foreignValues(t *testing.T) {
	s.needs(t, Scripted)
	type origin struct{ provider, model string }
	var origins []origin
	for _, p := range providers {
		if p != s.h.Provider {
			origins = append(origins, origin{p, "their-model-1"})
		}
	}
	if s.h.Provider != "" && s.h.OtherModel != "" {
		origins = append(origins, origin{s.h.Provider, s.h.OtherModel})
	}
	origins = append(origins, origin{"", ""}) // a value of unknown origin

	// steps builds one assistant step per origin, each with a value on
	// every part that can carry one, and its tool result.
	steps := func(turn string) ([]cmf.Message, []value, []string) {
		var msgs []cmf.Message
		var values []value
		var visible []string
		for i, o := range origins {
			// val is a value of this origin for a part of kind; reasoning
			// is the part's text, when it is a Thinking part.
			val := func(kind, reasoning string) *cmf.Opaque {
				marker := fmt.Sprintf("modeltest-foreign-%s-%d-%s", turn, i, kind)
				v := &cmf.Opaque{Provider: o.provider, Model: o.model, ID: "rs_" + marker, Data: base64.StdEncoding.EncodeToString([]byte(marker))}
				values = append(values, value{value: v, where: fmt.Sprintf("%s of %q/%q", kind, o.provider, o.model), decoded: marker, thinking: reasoning})
				return v
			}
			id := fmt.Sprintf("call_%s_%d", turn, i)
			say := fmt.Sprintf("modeltest-visible-%s-%d", turn, i)
			visible = append(visible, say)
			reasoning := fmt.Sprintf("modeltest reasoning of step %s %d", turn, i)
			msgs = append(msgs,
				cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant, Content: []cmf.Part{
					cmf.Thinking{Text: reasoning, Opaque: val("thinking", reasoning)},
					cmf.RedactedThinking{Opaque: *val("redacted", "")},
					cmf.Text{Text: say, Opaque: val("text", "")},
					cmf.ToolCall{ToolCallID: id, Name: "lookup", Arguments: json.RawMessage(lookupArgs), Opaque: val("call", "")},
				}},
				cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleTool, Content: []cmf.Part{
					cmf.ToolResult{ToolCallID: id, ToolName: "lookup", Content: json.RawMessage(`{"forecast":"sunny"}`)},
				}},
			)
		}
		return msgs, values, visible
	}

	t.Run("in earlier turns", func(t *testing.T) {
		b := s.start(t)
		m := s.model(t, b, Config{})
		msgs, values, visible := steps("earlier")
		history := append([]cmf.Message{user("What is the weather in Oslo?")}, msgs...)
		history = append(history, cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant, Content: []cmf.Part{cmf.Text{Text: "It is sunny in Oslo."}}})
		b.Script(Answer{Text: "Sunny again tomorrow."})
		req := &agent.Request{History: history, Messages: []cmf.Message{user("And tomorrow?")}, Tools: []agent.ToolSpec{lookupSpec}}
		s.sendsNone(t, b, m, s.h.Model, req, values, visible)
	})
	t.Run("in the current turn", func(t *testing.T) {
		// A turn another model began (a call answered after the user
		// switched model): this model goes on from its tool results.
		b := s.start(t)
		m := s.model(t, b, Config{})
		msgs, values, visible := steps("current")
		req := &agent.Request{History: []cmf.Message{user("What is the weather in Oslo?")}, Messages: msgs, Tools: []agent.ToolSpec{lookupSpec}}
		b.Script(Answer{Text: "It is sunny in Oslo."})
		s.sendsNone(t, b, m, s.h.Model, req, values, visible)
	})
	t.Run("after a switch between turns", func(t *testing.T) {
		s.needs(t, ProviderValues)
		b := s.start(t)
		first := s.model(t, b, Config{Model: s.h.Model})
		conv, produced := s.produce(t, b, first)
		other := s.model(t, b, Config{Model: s.h.OtherModel})
		b.Script(Answer{Text: "Sunny again tomorrow."})
		req := &agent.Request{History: conv, Messages: []cmf.Message{user("And tomorrow?")}, Tools: []agent.ToolSpec{lookupSpec}}
		s.sendsNone(t, b, other, s.h.OtherModel, req, produced, nil)
	})
	t.Run("after a switch within a turn", func(t *testing.T) {
		// The first model calls a tool the client runs; its output comes
		// back in a run on the other model.
		s.needs(t, ProviderValues)
		b := s.start(t)
		first, err := agent.New(s.model(t, b, Config{Model: s.h.Model}))
		if err != nil {
			t.Fatal(err)
		}
		other, err := agent.New(s.model(t, b, Config{Model: s.h.OtherModel}))
		if err != nil {
			t.Fatal(err)
		}
		b.Script(Answer{Reasoning: "I should look the weather up.", Call: &Call{Name: "lookup", Args: lookupArgs}})
		ask := user("What is the weather in Oslo?")
		client := []agent.ToolSpec{lookupSpec}
		msgs, fin, err := runTurn(t, first, &agent.Input{Messages: []cmf.Message{ask}, ClientTools: client})
		if err != nil || fin == nil || fin.StopReason != cmf.StopPaused || len(fin.Pending) != 1 {
			t.Fatalf("the first model's run: %v, %+v; want it paused for the client's tool", err, fin)
		}
		produced := s.values(t, append([]cmf.Message{ask}, msgs...), s.h.Model)
		if len(produced) == 0 {
			t.Fatal("the first model produced no value: nothing to keep from the other")
		}
		before := len(b.Requests())
		b.Script(Answer{Text: "It is sunny in Oslo."})
		_, fin, err = runTurn(t, other, &agent.Input{History: append([]cmf.Message{ask}, msgs...), ClientTools: client,
			Resume: []agent.Resolution{{ToolCallID: fin.Pending[0].ToolCallID, Kind: agent.ClientOutput, Output: json.RawMessage(`{"forecast":"sunny"}`)}}})
		if err != nil || fin == nil || fin.StopReason != cmf.StopEnd {
			t.Fatalf("the other model's run: %v, %+v", err, fin)
		}
		bodies := b.Requests()[before:]
		if len(bodies) == 0 {
			t.Fatal("the other model sent no request")
		}
		for _, f := range produced {
			for _, body := range bodies {
				if carries(body, f) {
					t.Errorf("the other model's request carries the first model's value on %s", f.where)
				}
			}
		}
	})
}

// sendsNone makes the call and checks its one request: none of values,
// all of visible.
func (s *suite) sendsNone(t *testing.T, b Backend, m agent.Model, name string, req *agent.Request, values []value, visible []string) {
	t.Helper()
	before := len(b.Requests())
	r := s.call(t, t.Context(), m, name, req)
	after := b.Requests()
	if len(after) <= before {
		t.Fatalf("the model sent no request (the call: %v)", r.err)
	}
	body := after[len(after)-1]
	for _, f := range values {
		if carries(body, f) {
			t.Errorf("the request carries the value on the %s", f.where)
		}
		if f.thinking != "" && contains(body, f.thinking) {
			t.Errorf("the request carries the reasoning text of the %s", f.where)
		}
	}
	for _, v := range visible {
		if !contains(body, v) {
			t.Errorf("the request leaves out the text %q of a step with another model's values: only the values stay behind", v)
		}
	}
	if r.err != nil {
		t.Fatalf("the call failed: %v", r.err)
	}
}

// carries reports whether a request body holds a value, as it is or as
// what it decodes to.
func carries(body []byte, v value) bool {
	return contains(body, v.value.Data) || v.decoded != "" && contains(body, v.decoded)
}

// produce has model m (Harness.Model) answer a turn of two steps, each
// with reasoning (a tool call, then text), through the agent loop, and
// returns the conversation as a server stores it and the values m
// produced in it.
func (s *suite) produce(t *testing.T, b Backend, m agent.Model) ([]cmf.Message, []value) {
	t.Helper()
	loop, err := agent.New(m, agent.WithTools(lookup))
	if err != nil {
		t.Fatal(err)
	}
	b.Script(
		Answer{Reasoning: "I should look the weather up.", Call: &Call{Name: "lookup", Args: lookupArgs}},
		Answer{Reasoning: "The tool says sunny.", Text: "It is sunny in Oslo."},
	)
	ask := user("What is the weather in Oslo?")
	msgs, fin, err := runTurn(t, loop, &agent.Input{Messages: []cmf.Message{ask}})
	if err != nil || fin == nil || fin.StopReason != cmf.StopEnd {
		t.Fatalf("the turn: %v, %+v", err, fin)
	}
	conv := append([]cmf.Message{ask}, msgs...)
	produced := s.values(t, conv, s.h.Model)
	if len(produced) == 0 {
		t.Fatal("the model produced no value in a turn with reasoning")
	}
	return conv, produced
}

// values collects the values in msgs, holding each to its tag.
func (s *suite) values(t *testing.T, msgs []cmf.Message, model string) []value {
	t.Helper()
	var out []value
	for i, m := range msgs {
		for j, p := range m.Content {
			var o *cmf.Opaque
			switch p := p.(type) {
			case cmf.Thinking:
				o = p.Opaque
			case cmf.RedactedThinking:
				o = &p.Opaque
			case cmf.Text:
				o = p.Opaque
			case cmf.ToolCall:
				o = p.Opaque
			}
			if o == nil {
				continue
			}
			where := fmt.Sprintf("the %s (part %d of message %d)", p.ContentType(), j, i)
			s.checkTag(t, o, model, where)
			out = append(out, value{value: o, where: where})
		}
	}
	return out
}

// ownValues: each value the model produces is tagged with its provider
// and model, on the part of the step it belongs to; the model's next
// request, within the turn and in the next one, carries every one of
// them byte-exact, and the backend (a validating fake refuses a value
// altered or moved) takes it. After a turn on another model, they still
// go back to their own.
func (s *suite) ownValues(t *testing.T) {
	s.needs(t, Scripted, ProviderValues)
	b := s.start(t)
	m := s.model(t, b, Config{Model: s.h.Model})
	conv, produced := s.produce(t, b, m)

	// Each step said what it was scripted to say; its values sit on
	// those parts only.
	steps := [][]cmf.ContentType{
		{cmf.ContentThinking, cmf.ContentRedactedThinking, cmf.ContentToolCall},
		{cmf.ContentThinking, cmf.ContentRedactedThinking, cmf.ContentText},
	}
	step := 0
	for _, msg := range conv {
		if msg.Role != cmf.RoleAssistant || step >= len(steps) {
			continue
		}
		for _, p := range msg.Content {
			if !hasValue(p) {
				continue
			}
			if !slices.Contains(steps[step], p.ContentType()) {
				t.Errorf("step %d's value is on a %s part, which the step did not have", step+1, p.ContentType())
			}
		}
		step++
	}

	bodies := b.Requests()
	if len(bodies) != 2 {
		t.Fatalf("the turn of two steps sent %d requests", len(bodies))
	}
	firstStep := s.values(t, conv[:2], s.h.Model) // the question and the step that called the tool
	for _, v := range firstStep {
		if !contains(bodies[1], v.value.Data) {
			t.Errorf("the turn's second request leaves out, or alters, the value on %s", v.where)
		}
	}

	next := func(t *testing.T, m agent.Model, name string, conv []cmf.Message, text string) []cmf.Message {
		t.Helper()
		b.Script(Answer{Text: "Sunny again."})
		before := len(b.Requests())
		r := s.call(t, t.Context(), m, name, &agent.Request{History: conv, Messages: []cmf.Message{user(text)}, Tools: []agent.ToolSpec{lookupSpec}})
		if r.err != nil {
			t.Fatalf("the next turn failed: %v", r.err)
		}
		if name == s.h.Model {
			body := b.Requests()[before]
			for _, v := range produced {
				if !contains(body, v.value.Data) {
					t.Errorf("the next turn's request leaves out, or alters, the value on %s", v.where)
				}
			}
		}
		return append(conv, user(text), cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant, Content: []cmf.Part{cmf.Text{Text: r.text()}}})
	}
	t.Run("in the next turn", func(t *testing.T) {
		next(t, m, s.h.Model, conv, "And tomorrow?")
	})
	t.Run("back from another model", func(t *testing.T) {
		other := s.model(t, b, Config{Model: s.h.OtherModel})
		conv := next(t, other, s.h.OtherModel, conv, "And tomorrow?")
		next(t, m, s.h.Model, conv, "And the day after?")
	})
}

func hasValue(p cmf.Part) bool {
	switch p := p.(type) {
	case cmf.Thinking:
		return p.Opaque != nil
	case cmf.RedactedThinking:
		return true
	case cmf.Text:
		return p.Opaque != nil
	case cmf.ToolCall:
		return p.Opaque != nil
	}
	return false
}
