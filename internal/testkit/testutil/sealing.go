package testutil

import (
	"context"
	"encoding/json"
	"iter"
	"strconv"
	"sync"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
)

// SealingAgent answers every run with the same reply of two steps whose
// parts carry provider values (SealedReply), and records the
// conversation each run got: for tests of what a server without history
// sends a client and takes back.
type SealingAgent struct {
	mu     sync.Mutex
	inputs []*agent.Input
}

// SealedReply is the reply of a SealingAgent's run (from 1): its first
// step thinks (signed), has thinking redacted, thinks again, says
// something (with a value on the text) and calls a tool, which the server
// ran; its second step answers (a value on the text).
func SealedReply(run int) (step1, step2 []cmf.Part) {
	o := func(provider, data string) *cmf.Opaque {
		return &cmf.Opaque{Provider: provider, Model: provider + "-model", Data: data}
	}
	step1 = []cmf.Part{
		cmf.Thinking{Text: "The user wants the weather.", Opaque: o("anthropic", "signature-1")},
		cmf.RedactedThinking{Opaque: *o("anthropic", "redacted-1")},
		cmf.Thinking{Text: "Oslo, then.", Opaque: o("anthropic", "signature-2")},
		cmf.Text{Text: "Let me look.", Opaque: o("anthropic", `[{"type":"text","text":"Let me look."}]`)},
		cmf.ToolCall{ToolCallID: "call-" + strconv.Itoa(run), Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`), Opaque: o("gemini", "c2lnbmF0dXJl")},
	}
	step2 = []cmf.Part{cmf.Text{Text: "Sunny in Oslo.", Opaque: o("gemini", "ZW5k")}}
	return step1, step2
}

// Inputs returns the inputs of the runs so far.
func (a *SealingAgent) Inputs() []*agent.Input {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*agent.Input(nil), a.inputs...)
}

// Run streams SealedReply.
func (a *SealingAgent) Run(_ context.Context, in *agent.Input) iter.Seq2[agent.Event, error] {
	a.mu.Lock()
	a.inputs = append(a.inputs, in)
	n := len(a.inputs)
	a.mu.Unlock()
	id := func(s string) string { return s + "-" + strconv.Itoa(n) }
	step1, step2 := SealedReply(n)
	return func(yield func(agent.Event, error) bool) {
		events := []agent.Event{&agent.RunStarted{MessageID: id("step1")}, &agent.StepStarted{Step: 1, MessageID: id("step1")}}
		events = append(events, partEvents(id("step1"), step1)...)
		events = append(events,
			&agent.ToolResult{ToolCallID: id("call"), ToolName: "get_weather", Output: json.RawMessage(`{"forecast":"sunny"}`), MessageID: id("result")},
			&agent.StepFinished{Step: 1, StopReason: cmf.StopCall},
			&agent.StepStarted{Step: 2, MessageID: id("step2")})
		events = append(events, partEvents(id("step2"), step2)...)
		events = append(events, &agent.StepFinished{Step: 2, StopReason: cmf.StopEnd}, &agent.RunFinished{StopReason: cmf.StopEnd})
		for _, ev := range events {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// partEvents streams parts as a model step does.
func partEvents(messageID string, parts []cmf.Part) []agent.Event {
	var out []agent.Event
	for i, p := range parts {
		partID := messageID + "-part" + strconv.Itoa(i)
		switch p := p.(type) {
		case cmf.Thinking:
			out = append(out, &agent.PartStarted{Kind: agent.PartThinking, ID: partID, MessageID: messageID},
				&agent.PartDelta{Kind: agent.PartThinking, ID: partID, Delta: p.Text},
				&agent.PartEnded{Kind: agent.PartThinking, ID: partID, Part: p})
		case cmf.RedactedThinking:
			out = append(out, &agent.PartStarted{Kind: agent.PartRedactedThinking, ID: partID, MessageID: messageID},
				&agent.PartEnded{Kind: agent.PartRedactedThinking, ID: partID, Part: p})
		case cmf.Text:
			out = append(out, &agent.PartStarted{Kind: agent.PartText, ID: partID, MessageID: messageID},
				&agent.PartDelta{Kind: agent.PartText, ID: partID, Delta: p.Text},
				&agent.PartEnded{Kind: agent.PartText, ID: partID, Part: p})
		case cmf.ToolCall:
			out = append(out, &agent.PartStarted{Kind: agent.PartToolCall, ID: p.ToolCallID, ToolName: p.Name, MessageID: messageID},
				&agent.PartDelta{Kind: agent.PartToolCall, ID: p.ToolCallID, Delta: string(p.Arguments)},
				&agent.PartEnded{Kind: agent.PartToolCall, ID: p.ToolCallID, Part: p})
		}
	}
	return out
}

// AssistantParts are the parts of the assistant messages of a
// conversation, in order: a reply as the model will see it, whatever
// messages a protocol split it into.
func AssistantParts(msgs ...[]cmf.Message) []cmf.Part {
	var out []cmf.Part
	for _, m := range msgs {
		for i := range m {
			if m[i].Role == cmf.RoleAssistant {
				out = append(out, m[i].Content...)
			}
		}
	}
	return out
}
