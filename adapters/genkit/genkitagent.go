// Package genkitagent runs Genkit Go's tool-calling generation
// (github.com/firebase/genkit/go: a model, its tools, a system prompt) as
// an agentui agent, so that useChat and AG-UI clients, history, durable
// runs, resume and stop on any replica, and the chat page work with it
// unchanged.
//
// Each model call is a step: its reasoning and text stream as parts, its
// tool requests become tool calls, the tools' responses their results,
// and its usage the step's. A tool that interrupts (Approval asks the
// person; ai.ToolContext.Interrupt is the general form) pauses the run as
// an approval request. Nothing is checkpointed: the person's signed answer
// resumes the generation from the stored conversation, the approved calls
// restarted (their tool sees Approved) and the denied ones answered with
// agentui's denial, as Genkit's resume directives do, on whichever replica
// gets it.
//
// It is a module of its own: an application that does not use Genkit
// does not build it.
package genkitagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/ids"
)

// Config is what a run generates with.
type Config struct {
	// Model answers (required).
	Model ai.ModelArg
	// Tools are the tools it may call: registered with genkit.DefineTool.
	Tools []ai.ToolRef
	// System is the system prompt; the server's instructions
	// (uiadapter.WithInstructions) come after it.
	System string
	// MaxTurns bounds the model calls a run makes (Genkit's default, 5,
	// when zero).
	MaxTurns int
	// ModelConfig is the model's configuration (ai.WithConfig), or nil.
	ModelConfig any
}

// Agent is Genkit generation as an agentui agent. Its zero value is not
// usable; call New.
type Agent struct {
	g   *genkit.Genkit
	cfg Config
}

var _ agent.Agent = (*Agent)(nil)

// New returns the agent that generates with cfg on g.
func New(g *genkit.Genkit, cfg Config) (*Agent, error) {
	if g == nil || cfg.Model == nil {
		return nil, errors.New("genkitagent: a Genkit instance and a model are required")
	}
	return &Agent{g: g, cfg: cfg}, nil
}

// EndsParts: every part a run starts ends whole, however the run ends.
func (a *Agent) EndsParts() bool { return true }

// Run runs one turn.
func (a *Agent) Run(ctx context.Context, in *agent.Input) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		s := newStream(yield, in.MessageID)
		if err := a.run(ctx, in, s); err != nil {
			s.closeParts()
			if ctx.Err() != nil && !s.stopped { // a stop, not a failure
				s.finishStep(cmf.StopAborted)
				s.emit(&agent.RunFinished{StopReason: cmf.StopAborted, Usage: s.usage, Model: s.model})
				return
			}
			yield(nil, err)
		}
	}
}

func (a *Agent) run(ctx context.Context, in *agent.Input, s *stream) error {
	if len(in.Tools) > 0 || len(in.ClientTools) > 0 {
		return errors.New("genkitagent: Genkit's tools are its own: per-run and client tools are not supported")
	}
	s.modelName = a.cfg.Model.Name()
	msgs, restarts, err := a.conversation(in, s)
	if err != nil {
		return err
	}
	opts := []ai.GenerateOption{ai.WithModel(a.cfg.Model), ai.WithMessages(msgs...),
		ai.WithMiddleware(s.middleware), ai.WithStreaming(s.chunk)}
	if len(a.cfg.Tools) > 0 {
		opts = append(opts, ai.WithTools(a.cfg.Tools...))
	}
	if a.cfg.MaxTurns > 0 {
		opts = append(opts, ai.WithMaxTurns(a.cfg.MaxTurns))
	}
	if a.cfg.ModelConfig != nil {
		opts = append(opts, ai.WithConfig(a.cfg.ModelConfig))
	}
	if len(restarts) > 0 {
		opts = append(opts, ai.WithToolRestarts(restarts...))
	}
	if !s.emit(&agent.RunStarted{MessageID: s.messageID}) {
		return nil
	}
	for _, r := range s.before {
		if !s.emit(r) {
			return nil
		}
	}
	resp, err := genkit.Generate(ctx, a.g, opts...)
	if s.stopped {
		return nil
	}
	if err != nil {
		return fmt.Errorf("genkitagent: %w", err)
	}
	if resp.FinishReason == ai.FinishReasonInterrupted {
		return s.interrupted(resp)
	}
	stop := stopReason(resp.FinishReason)
	if ctx.Err() != nil {
		stop = cmf.StopAborted
	}
	s.closeParts()
	s.finishStep(stop)
	s.emit(&agent.RunFinished{StopReason: stop, Usage: s.usage, Model: s.model})
	return nil
}

// conversation is the run's messages as Genkit's. A turn that answers
// approvals ends with the paused model message: each of its tool requests
// is then restarted (approved), or carries its output (the calls that ran
// before the pause, the denied ones), as Genkit's resume wants it.
func (a *Agent) conversation(in *agent.Input, s *stream) (msgs []*ai.Message, restarts []*ai.Part, err error) {
	system := a.cfg.System
	if in.Instructions != "" {
		if system != "" {
			system += "\n\n"
		}
		system += in.Instructions
	}
	if system != "" {
		msgs = append(msgs, ai.NewSystemTextMessage(system))
	}
	all := make([]*cmf.Message, 0, len(in.History)+len(in.Messages))
	for _, part := range [][]cmf.Message{in.History, in.Messages} {
		for i := range part {
			all = append(all, &part[i])
		}
	}
	if len(in.Resume) == 0 {
		for _, m := range all {
			msgs = appendMessage(msgs, m)
		}
		return msgs, nil, nil
	}
	// The paused turn: its last assistant message, and the results
	// stored after it (calls that ran before the pause).
	last := -1
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Role == cmf.RoleAssistant {
			last = i
			break
		}
	}
	if last < 0 {
		return nil, nil, errors.New("genkitagent: nothing to resume: the conversation has no paused reply")
	}
	for _, m := range all[:last] {
		msgs = appendMessage(msgs, m)
	}
	done := map[string]json.RawMessage{}
	for _, m := range all[last+1:] {
		for _, p := range m.Content {
			if r, ok := p.(cmf.ToolResult); ok {
				done[r.ToolCallID] = r.Content
			}
		}
	}
	answers := map[string]agent.Resolution{}
	for _, r := range in.Resume {
		answers[r.ToolCallID] = r
		s.approvals[r.ToolCallID] = r
	}
	model := modelMessage(all[last])
	var tail []*ai.Part // the tool message when nothing restarts
	for _, p := range model.Content {
		if !p.IsToolRequest() {
			continue
		}
		req := p.ToolRequest
		s.answered[req.Ref] = true
		if out, ok := done[req.Ref]; ok {
			setPending(p, out)
			tail = append(tail, response(req, out))
			continue
		}
		ans, ok := answers[req.Ref]
		if !ok {
			return nil, nil, fmt.Errorf("genkitagent: tool call %s of the paused reply has no answer", req.Ref)
		}
		if ans.Kind != agent.Approve {
			out, _ := json.Marshal(denied(ans.Reason))
			setPending(p, out)
			tail = append(tail, response(req, out))
			continue
		}
		restart := &ai.ToolRequest{Name: req.Name, Ref: req.Ref, Input: req.Input}
		meta := map[string]any{"resumed": map[string]any{"approved": true}}
		if len(ans.EditedArgs) > 0 {
			var edited any
			if err := json.Unmarshal(ans.EditedArgs, &edited); err != nil {
				return nil, nil, fmt.Errorf("genkitagent: edited arguments: %w", err)
			}
			restart.Input, meta["replacedInput"] = edited, req.Input
		}
		rp := ai.NewToolRequestPart(restart)
		rp.Metadata = meta
		restarts = append(restarts, rp)
	}
	msgs = append(msgs, model)
	if len(restarts) == 0 {
		// Every call has its output: the model goes on from them, and
		// Genkit, resuming nothing, streams none of them.
		for _, p := range model.Content {
			delete(p.Metadata, "pendingOutput")
		}
		msgs = append(msgs, ai.NewMessage(ai.RoleTool, nil, tail...))
		for _, part := range tail {
			r := part.ToolResponse
			if a, ok := answers[r.Ref]; ok && a.Kind != agent.Approve {
				out, _ := json.Marshal(r.Output)
				s.before = append(s.before, &agent.ToolResult{ToolCallID: r.Ref, ToolName: r.Name, Output: out, IsError: true,
					Denied: true, Reason: a.Reason, MessageID: ids.New()})
			}
		}
	}
	return msgs, restarts, nil
}

func setPending(p *ai.Part, out json.RawMessage) {
	if p.Metadata == nil {
		p.Metadata = map[string]any{}
	}
	var v any
	_ = json.Unmarshal(out, &v)
	p.Metadata["pendingOutput"] = v
}

func response(req *ai.ToolRequest, out json.RawMessage) *ai.Part {
	var v any
	_ = json.Unmarshal(out, &v)
	return ai.NewToolResponsePart(&ai.ToolResponse{Name: req.Name, Ref: req.Ref, Output: v})
}

// Approval is what a tool that needs the person's approval calls first:
// on the call's first run it interrupts (return its error), and the run
// pauses for the person; once approved, the call runs again and Approval
// returns nil. A denied call is not run again: the model is told it was
// denied.
//
//	func(tc *ai.ToolContext, in DeleteInput) (Deleted, error) {
//		if err := genkitagent.Approval(tc); err != nil {
//			return Deleted{}, err
//		}
//		…
//	}
func Approval(tc *ai.ToolContext) error {
	if ok, _ := ai.ResumedValue[bool](tc, "approved"); ok {
		return nil
	}
	return tc.Interrupt(&ai.InterruptOptions{Metadata: map[string]any{"agentui": "approval"}})
}

// deniedText is what the model is told of a denied call: the agent loop's
// words.
const deniedText = "The user denied this tool call."

func denied(reason string) string {
	if reason != "" {
		return deniedText + " Reason: " + reason
	}
	return deniedText
}

func stopReason(r ai.FinishReason) cmf.StopReason {
	switch r {
	case ai.FinishReasonLength:
		return cmf.StopMaxTokens
	case ai.FinishReasonBlocked:
		return cmf.StopGuardrail
	}
	return cmf.StopEnd
}

// newStream starts a run's stream.
func newStream(yield func(agent.Event, error) bool, messageID string) *stream {
	if messageID == "" {
		messageID = ids.New()
	}
	return &stream{yield: yield, messageID: messageID, approvals: map[string]agent.Resolution{},
		answered: map[string]bool{}}
}
