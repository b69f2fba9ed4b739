package genkitagent

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/firebase/genkit/go/ai"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/ids"
)

// stream turns a generation's model calls (the middleware sees each) and
// streamed chunks into a balanced agentui stream. Genkit calls both from
// the generation's goroutine, in order.
type stream struct {
	yield     func(agent.Event, error) bool
	messageID string // the next step's assistant message
	stopped   bool   // the consumer stopped reading

	step      int // the open step, 0 when none
	stepUsage agent.Usage
	stepModel string
	usage     agent.Usage
	model     string
	modelName string // the configured model's, for each step

	open  *textPart
	calls []*toolCall // the open step's tool requests, in order

	approvals map[string]agent.Resolution // a resumed turn's answers, by call
	answered  map[string]bool             // the paused reply's calls (a resumed turn)
	before    []agent.Event               // results a resumed turn sends first
}

type textPart struct {
	kind agent.PartKind
	id   string
	text strings.Builder
}

type toolCall struct {
	name, ref string
	input     any
	done      bool // its part was sent
}

func (s *stream) emit(ev agent.Event) bool {
	if s.stopped {
		return false
	}
	if !s.yield(ev, nil) {
		s.stopped = true
	}
	return !s.stopped
}

// middleware opens a step for each model call and, when the call is
// done, notes its tool requests, usage and model.
func (s *stream) middleware(next ai.ModelFunc) ai.ModelFunc {
	return func(ctx context.Context, req *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
		s.startStep()
		resp, err := next(ctx, req, cb)
		if err != nil || resp == nil {
			return resp, err
		}
		s.closeText()
		if resp.Message != nil {
			for _, p := range resp.Message.Content {
				if p.IsToolRequest() {
					s.calls = append(s.calls, &toolCall{name: p.ToolRequest.Name, ref: p.ToolRequest.Ref, input: p.ToolRequest.Input})
				}
			}
		}
		s.stepModel = s.modelName
		if u := resp.Usage; u != nil {
			s.stepUsage = agent.Usage{InputTokens: int64(u.InputTokens), OutputTokens: int64(u.OutputTokens), TotalTokens: int64(u.TotalTokens),
				ReasoningTokens: int64(u.ThoughtsTokens), CachedInputTokens: int64(u.CachedContentTokens)}
		}
		if req != nil && resp.Request == nil {
			resp.Request = req // Genkit's History() needs it; some models leave it out
		}
		return resp, nil
	}
}

// chunk streams a model's reasoning and text, and the tools' responses.
func (s *stream) chunk(_ context.Context, c *ai.ModelResponseChunk) error {
	if s.stopped {
		return context.Canceled
	}
	for _, p := range c.Content {
		switch {
		case c.Role == ai.RoleTool && p.IsToolResponse():
			s.result(p.ToolResponse)
		case p.IsReasoning():
			s.delta(agent.PartThinking, p.Text)
		case p.IsText():
			s.delta(agent.PartText, p.Text)
		}
	}
	return nil
}

func (s *stream) delta(kind agent.PartKind, text string) {
	if text == "" {
		return
	}
	if s.step == 0 {
		s.startStep()
	}
	if s.open == nil || s.open.kind != kind {
		s.closeText()
		s.open = &textPart{kind: kind, id: ids.New()}
		s.emit(&agent.PartStarted{Kind: kind, ID: s.open.id})
	}
	s.open.text.WriteString(text)
	s.emit(&agent.PartDelta{Kind: kind, ID: s.open.id, Delta: text})
}

// result passes on a tool's response, after its call.
func (s *stream) result(r *ai.ToolResponse) {
	out, err := json.Marshal(r.Output)
	if err != nil {
		out, _ = json.Marshal(err.Error())
	}
	if s.answered[r.Ref] {
		// A resumed turn's: the approved calls' results and the denials;
		// the calls that ran before the pause have theirs stored.
		a, ok := s.approvals[r.Ref]
		if !ok {
			return
		}
		res := &agent.ToolResult{ToolCallID: r.Ref, ToolName: r.Name, Output: out, MessageID: ids.New()}
		if a.Kind == agent.Approve {
			res.Approved = true
		} else {
			res.Denied, res.IsError, res.Reason = true, true, a.Reason
		}
		s.emit(res)
		return
	}
	c := s.callFor(r.Name, r.Ref)
	id := s.sendCall(c, r.Ref)
	s.emit(&agent.ToolResult{ToolCallID: id, ToolName: r.Name, Output: out, MessageID: ids.New()})
}

// callFor finds the open step's request a response or an interrupt is
// for: by its ref, else the first of its name not yet sent (a model that
// left refs to Genkit).
func (s *stream) callFor(name, ref string) *toolCall {
	for _, c := range s.calls {
		if ref != "" && c.ref == ref {
			return c
		}
	}
	for _, c := range s.calls {
		if !c.done && c.name == name && c.ref == "" {
			return c
		}
	}
	c := &toolCall{name: name, ref: ref}
	s.calls = append(s.calls, c)
	return c
}

// sendCall sends a call's part once, under ref (Genkit's id of the call)
// when the request had none, and returns its id.
func (s *stream) sendCall(c *toolCall, ref string) string {
	if c.ref == "" {
		c.ref = ref
	}
	if c.ref == "" {
		c.ref = "call_" + ids.New()
	}
	if c.done {
		return c.ref
	}
	c.done = true
	if s.step == 0 {
		s.startStep()
	}
	s.closeText()
	args, err := json.Marshal(c.input)
	if err != nil || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	s.emit(&agent.PartStarted{Kind: agent.PartToolCall, ID: c.ref, ToolName: c.name})
	s.emit(&agent.PartDelta{Kind: agent.PartToolCall, ID: c.ref, Delta: string(args)})
	s.emit(&agent.PartEnded{Kind: agent.PartToolCall, ID: c.ref, Part: cmf.ToolCall{ToolCallID: c.ref, Name: c.name, Arguments: args}})
	return c.ref
}

// interrupted pauses the run: the interrupted calls are approval
// requests; calls that ran beside them keep their results.
func (s *stream) interrupted(resp *ai.ModelResponse) error {
	var pending []agent.PendingCall
	if resp.Message != nil {
		for _, p := range resp.Message.Content {
			if !p.IsToolRequest() {
				continue
			}
			req := p.ToolRequest
			c := s.callFor(req.Name, req.Ref)
			if c.input == nil {
				c.input = req.Input
			}
			id := s.sendCall(c, req.Ref)
			if out, ok := p.Metadata["pendingOutput"]; ok {
				b, _ := json.Marshal(out)
				s.emit(&agent.ToolResult{ToolCallID: id, ToolName: req.Name, Output: b, MessageID: ids.New()})
				continue
			}
			if !p.IsInterrupt() {
				continue
			}
			args, _ := json.Marshal(req.Input)
			approvalID := ids.New()
			s.emit(&agent.ApprovalRequested{ToolCallID: id, ToolName: req.Name, ApprovalID: approvalID, Input: args})
			pending = append(pending, agent.PendingCall{Kind: agent.PendingApproval, ToolCallID: id, ToolName: req.Name, ApprovalID: approvalID, Input: args})
		}
	}
	s.closeParts()
	s.finishStep(cmf.StopCall)
	s.emit(&agent.RunFinished{StopReason: cmf.StopPaused, Usage: s.usage, Model: s.model, Pending: pending})
	return nil
}

// startStep opens a step, finishing the one before.
func (s *stream) startStep() {
	if s.step > 0 {
		s.closeParts()
		s.finishStep(cmf.StopCall)
	}
	s.step++
	id := s.messageID
	s.messageID = ids.New()
	s.calls = nil
	s.emit(&agent.StepStarted{Step: s.step, MessageID: id})
}

func (s *stream) finishStep(stop cmf.StopReason) {
	if s.step == 0 {
		return
	}
	s.emit(&agent.StepFinished{Step: s.step, StopReason: stop, Usage: s.stepUsage, Model: s.stepModel})
	s.usage.Add(s.stepUsage)
	if s.stepModel != "" {
		s.model = s.stepModel
	}
	s.step, s.stepUsage, s.stepModel = 0, agent.Usage{}, ""
}

func (s *stream) closeText() {
	p := s.open
	if p == nil {
		return
	}
	s.open = nil
	var part cmf.Part = cmf.Text{Text: p.text.String()}
	if p.kind == agent.PartThinking {
		part = cmf.Thinking{Text: p.text.String()}
	}
	s.emit(&agent.PartEnded{Kind: p.kind, ID: p.id, Part: part})
}

// closeParts ends the open text and sends the calls not sent yet (a
// stopped or failed generation's).
func (s *stream) closeParts() {
	s.closeText()
	for _, c := range s.calls {
		if !c.done {
			s.sendCall(c, "")
		}
	}
}
