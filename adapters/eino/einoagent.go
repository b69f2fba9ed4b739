// Package einoagent runs an Eino ADK agent (github.com/cloudwego/eino)
// as an agentui agent, so that useChat and AG-UI clients, history,
// durable runs, resume and stop on any replica, and the chat page work
// with it unchanged.
//
// What the Eino agent streams becomes agentui events: each model turn a
// step, with its reasoning, text and tool calls as parts, its usage and
// finish reason; each tool result a tool result. A tool that interrupts
// (tool.StatefulInterrupt; NeedsApproval wraps a tool so it does) pauses
// the run as an approval request: the checkpoint Eino writes is kept in a
// CheckPointStore under the chat, and the person's signed, single-use
// answer resumes it (Runner.ResumeWithParams), on whichever replica gets
// it when the store is shared (RedisStore).
//
// It is a module of its own: an application that does not use Eino does
// not build it.
package einoagent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/ids"
)

// Agent is an Eino agent as an agentui agent. Its zero value is not
// usable; call New.
type Agent struct {
	eino  adk.Agent
	store adk.CheckPointStore
}

var _ agent.Agent = (*Agent)(nil)

// Option configures an Agent.
type Option func(*Agent)

// WithCheckPointStore keeps the checkpoints of interrupted runs in s
// (default: a MemoryStore, for one process). Replicas that resume each
// other's runs share one: RedisStore.
func WithCheckPointStore(s adk.CheckPointStore) Option { return func(a *Agent) { a.store = s } }

// New returns the agentui agent that runs a. A run needs the chat's id
// (agent.RunInfo, which agentui's handlers put in the context): its
// interrupts are checkpointed under it.
func New(a adk.Agent, opts ...Option) *Agent {
	x := &Agent{eino: a}
	for _, o := range opts {
		o(x)
	}
	if x.store == nil {
		x.store = NewMemoryStore()
	}
	return x
}

// EndsParts: every part a run starts ends whole, however the run ends.
func (a *Agent) EndsParts() bool { return true }

// Run runs one turn: the conversation is given to the Eino agent, or,
// when the turn answers approvals, the interrupted run resumes from its
// checkpoint with the answers.
func (a *Agent) Run(ctx context.Context, in *agent.Input) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		s := &stream{yield: yield, messageID: in.MessageID, approvals: map[string]agent.Resolution{}}
		if s.messageID == "" {
			s.messageID = ids.New()
		}
		if err := a.run(ctx, in, s); err != nil {
			s.closeParts()
			yield(nil, err)
		}
	}
}

func (a *Agent) run(ctx context.Context, in *agent.Input, s *stream) error {
	if len(in.Tools) > 0 || len(in.ClientTools) > 0 {
		return errors.New("einoagent: an Eino agent has its own tools: per-run and client tools are not supported")
	}
	ri, _ := agent.RunInfoFrom(ctx)
	if ri.ChatID == "" {
		return errors.New("einoagent: the run has no chat id (agent.RunInfo): serve it with agentui's handlers and history")
	}
	cp := checkpointID(ri)
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: a.eino, EnableStreaming: true, CheckPointStore: a.store})
	var events *adk.AsyncIterator[*adk.AgentEvent]
	if len(in.Resume) > 0 {
		targets, err := a.targets(ctx, cp, in.Resume)
		if err != nil {
			return err
		}
		for _, r := range in.Resume {
			s.approvals[r.ToolCallID] = r
		}
		if events, err = runner.ResumeWithParams(ctx, cp, &adk.ResumeParams{Targets: targets}, adk.WithCheckPointID(cp)); err != nil {
			return fmt.Errorf("einoagent: resume: %w", err)
		}
	} else {
		msgs, err := toEino(in)
		if err != nil {
			return err
		}
		events = runner.Run(ctx, msgs, adk.WithCheckPointID(cp))
	}
	if !s.emit(&agent.RunStarted{MessageID: s.messageID}) {
		return nil
	}
	for {
		ev, ok := events.Next()
		if !ok {
			break
		}
		if ctx.Err() != nil {
			break
		}
		if ev.Err != nil {
			return fmt.Errorf("einoagent: %w", ev.Err)
		}
		if ev.Action != nil && ev.Action.Interrupted != nil {
			return a.interrupted(ctx, cp, ev.Action.Interrupted, s)
		}
		if ev.Output == nil || ev.Output.MessageOutput == nil {
			continue
		}
		mo := ev.Output.MessageOutput
		var err error
		if mo.Role == schema.Tool {
			err = s.toolResult(mo)
		} else {
			err = s.assistant(ctx, mo)
		}
		if err != nil {
			return err
		}
		if s.stopped {
			return nil
		}
	}
	stop := s.lastStop
	if ctx.Err() != nil {
		stop = cmf.StopAborted
	}
	s.closeParts()
	s.finishStep(stop)
	s.emit(&agent.RunFinished{StopReason: stop, Usage: s.usage, Model: s.model})
	return nil
}

// checkpointID names a chat's checkpoint: one per chat, since a chat
// runs one turn at a time and a turn that does not resume abandons an
// interrupt (its next interrupt overwrites it). The scope is hashed in,
// so two users' chats of one id never share one.
func checkpointID(ri agent.RunInfo) string {
	sum := sha256.Sum256([]byte(ri.Scope + "\x00" + ri.ChatID))
	return "agentui:" + hex.EncodeToString(sum[:16])
}

// interruptsKey is where the store keeps which interrupt each paused
// tool call is, to address the answers to them on resume.
func interruptsKey(cp string) string { return cp + ":interrupts" }

// interrupted pauses the run: each interrupted tool call is an approval
// request, and the calls' interrupt ids are kept beside the checkpoint.
func (a *Agent) interrupted(ctx context.Context, cp string, info *adk.InterruptInfo, s *stream) error {
	byCall := map[string]string{}
	var pending []agent.PendingCall
	for _, ic := range info.InterruptContexts {
		callID := toolCallOf(ic)
		call, ok := s.calls[callID]
		if callID == "" || !ok {
			return fmt.Errorf("einoagent: an interrupt at %s is not a tool call of this run: only tool interrupts map to approvals", ic.Address.String())
		}
		byCall[callID] = ic.ID
		approvalID := ids.New()
		if !s.emit(&agent.ApprovalRequested{ToolCallID: callID, ToolName: call.name, ApprovalID: approvalID, Input: call.args()}) {
			return nil
		}
		pending = append(pending, agent.PendingCall{Kind: agent.PendingApproval, ToolCallID: callID, ToolName: call.name, ApprovalID: approvalID, Input: call.args()})
	}
	b, err := json.Marshal(byCall)
	if err != nil {
		return err
	}
	if err := a.store.Set(ctx, interruptsKey(cp), b); err != nil {
		return fmt.Errorf("einoagent: keeping the interrupt: %w", err)
	}
	s.closeParts()
	s.finishStep(cmf.StopCall)
	s.emit(&agent.RunFinished{StopReason: cmf.StopPaused, Usage: s.usage, Model: s.model, Pending: pending})
	return nil
}

// toolCallOf is the tool call an interrupt happened in, from its address.
func toolCallOf(ic *adk.InterruptCtx) string {
	for i := len(ic.Address) - 1; i >= 0; i-- {
		if seg := ic.Address[i]; seg.Type == "tool" && seg.SubID != "" {
			return seg.SubID
		}
	}
	return ""
}

// targets addresses each answer to the interrupt of its call.
func (a *Agent) targets(ctx context.Context, cp string, answers []agent.Resolution) (map[string]any, error) {
	raw, ok, err := a.store.Get(ctx, interruptsKey(cp))
	if err != nil {
		return nil, fmt.Errorf("einoagent: reading the interrupt: %w", err)
	}
	if !ok {
		return nil, errors.New("einoagent: no interrupted run of this chat to resume: its checkpoint is gone (another store, or it expired)")
	}
	var byCall map[string]string
	if err := json.Unmarshal(raw, &byCall); err != nil {
		return nil, fmt.Errorf("einoagent: reading the interrupt: %w", err)
	}
	targets := map[string]any{}
	for _, r := range answers {
		id, ok := byCall[r.ToolCallID]
		if !ok {
			return nil, fmt.Errorf("einoagent: tool call %s was not interrupted", r.ToolCallID)
		}
		d := &Decision{Approved: r.Kind == agent.Approve, Reason: r.Reason}
		if r.Kind == agent.Approve && len(r.EditedArgs) > 0 {
			d.EditedArguments = string(r.EditedArgs)
		}
		targets[id] = d
	}
	return targets, nil
}

// stream turns Eino's events into a balanced agentui stream.
type stream struct {
	yield     func(agent.Event, error) bool
	messageID string // the next step's assistant message
	stopped   bool   // the consumer stopped reading

	step      int // the open step, 0 when none
	stepUsage agent.Usage
	stepModel string
	lastStop  cmf.StopReason
	usage     agent.Usage
	model     string

	open      *textPart
	calls     map[string]*toolCall // this run's calls, by id
	approvals map[string]agent.Resolution
}

type textPart struct {
	kind agent.PartKind
	id   string
	text strings.Builder
}

type toolCall struct {
	id, name string
	argJSON  strings.Builder
	ended    bool
}

// args is the call's arguments as JSON (an object when the model sent
// none).
func (c *toolCall) args() json.RawMessage {
	if c.argJSON.Len() == 0 {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(c.argJSON.String())
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

// startStep opens a step for an assistant turn, finishing the one before.
func (s *stream) startStep() {
	if s.step > 0 {
		s.closeParts()
		s.finishStep(cmf.StopCall)
	}
	s.step++
	id := s.messageID
	s.messageID = ids.New()
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

// part makes kind the open text or thinking part.
func (s *stream) part(kind agent.PartKind) *textPart {
	if s.open != nil && s.open.kind == kind {
		return s.open
	}
	s.closeText()
	s.open = &textPart{kind: kind, id: ids.New()}
	s.emit(&agent.PartStarted{Kind: kind, ID: s.open.id})
	return s.open
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

// closeParts ends the open text and every call not ended yet.
func (s *stream) closeParts() {
	s.closeText()
	for _, c := range s.calls {
		s.endCall(c)
	}
}

func (s *stream) endCall(c *toolCall) {
	if c.ended {
		return
	}
	c.ended = true
	args := c.args()
	ended := &agent.PartEnded{Kind: agent.PartToolCall, ID: c.id}
	if !json.Valid(args) {
		ended.InputError = "the arguments are not valid JSON"
		args, _ = json.Marshal(string(args))
	}
	ended.Part = cmf.ToolCall{ToolCallID: c.id, Name: c.name, Arguments: args}
	s.emit(ended)
}

// assistant streams one model turn.
func (s *stream) assistant(ctx context.Context, mo *adk.MessageVariant) error {
	s.startStep()
	byIndex := map[int]*toolCall{}
	var order []*toolCall
	chunk := func(m *schema.Message) {
		if m.ReasoningContent != "" {
			p := s.part(agent.PartThinking)
			p.text.WriteString(m.ReasoningContent)
			s.emit(&agent.PartDelta{Kind: agent.PartThinking, ID: p.id, Delta: m.ReasoningContent})
		}
		if m.Content != "" {
			p := s.part(agent.PartText)
			p.text.WriteString(m.Content)
			s.emit(&agent.PartDelta{Kind: agent.PartText, ID: p.id, Delta: m.Content})
		}
		for i, tc := range m.ToolCalls {
			index := i
			if tc.Index != nil {
				index = *tc.Index
			}
			c, ok := byIndex[index]
			if !ok {
				s.closeText()
				id := tc.ID
				if id == "" {
					id = "call_" + ids.New()
				}
				c = &toolCall{id: id, name: tc.Function.Name}
				byIndex[index] = c
				order = append(order, c)
				if s.calls == nil {
					s.calls = map[string]*toolCall{}
				}
				s.calls[id] = c
				s.emit(&agent.PartStarted{Kind: agent.PartToolCall, ID: id, ToolName: c.name})
			}
			if tc.Function.Arguments != "" {
				c.argJSON.WriteString(tc.Function.Arguments)
				s.emit(&agent.PartDelta{Kind: agent.PartToolCall, ID: c.id, Delta: tc.Function.Arguments})
			}
		}
		if rm := m.ResponseMeta; rm != nil {
			if rm.Usage != nil {
				u := rm.Usage
				s.stepUsage = agent.Usage{InputTokens: int64(u.PromptTokens), OutputTokens: int64(u.CompletionTokens), TotalTokens: int64(u.TotalTokens),
					CachedInputTokens: int64(u.PromptTokenDetails.CachedTokens), ReasoningTokens: int64(u.CompletionTokensDetails.ReasoningTokens)}
			}
			s.lastStop = stopReason(rm.FinishReason)
		}
	}
	if !mo.IsStreaming {
		if mo.Message != nil {
			chunk(mo.Message)
		}
	} else {
		defer mo.MessageStream.Close()
		for !s.stopped {
			m, err := mo.MessageStream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("einoagent: the model's stream: %w", err)
			}
			chunk(m)
		}
	}
	s.closeText()
	for _, c := range order {
		s.endCall(c)
	}
	if len(order) > 0 {
		s.lastStop = cmf.StopCall
	}
	return nil
}

// toolResult passes on a tool's result; an answered approval's says how
// it was answered.
func (s *stream) toolResult(mo *adk.MessageVariant) error {
	m, err := mo.GetMessage()
	if err != nil {
		return fmt.Errorf("einoagent: a tool's result: %w", err)
	}
	// A resumed call's result comes before any step, as the loop's do.
	s.closeText()
	if c, ok := s.calls[m.ToolCallID]; ok {
		s.endCall(c)
	}
	res := &agent.ToolResult{ToolCallID: m.ToolCallID, ToolName: mo.ToolName, Output: outputJSON(m.Content), MessageID: ids.New()}
	if a, ok := s.approvals[m.ToolCallID]; ok {
		if a.Kind == agent.Approve {
			res.Approved = true
		} else {
			res.Denied, res.IsError, res.Reason = true, true, a.Reason
		}
	}
	s.emit(res)
	return nil
}

// outputJSON is a tool's text output as JSON: itself when it is JSON,
// else a JSON string.
func outputJSON(text string) json.RawMessage {
	if t := strings.TrimSpace(text); t != "" && json.Valid([]byte(t)) && (t[0] == '{' || t[0] == '[' || t[0] == '"') {
		return json.RawMessage(t)
	}
	b, _ := json.Marshal(text)
	return b
}

func stopReason(finish string) cmf.StopReason {
	switch finish {
	case "tool_calls", "function_call":
		return cmf.StopCall
	case "length", "max_tokens":
		return cmf.StopMaxTokens
	case "content_filter":
		return cmf.StopGuardrail
	}
	return cmf.StopEnd
}
