package agent

import (
	"time"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/ids"
)

// A run's messages are recorded as CMF: one assistant message per step
// (thinking, text and tool calls, in order), one tool message per tool
// result. What CMF's parts do not say (that a call waited for approval,
// was for the client, how the approval was answered, the UI data a step
// produced, the shared state the run left) goes into the typed UI
// extension ([cmf.UIExtension]), so that a stored conversation carries on
// and shows again exactly as it streamed.

// Recorder folds a run's balanced events (see [Balancer]) into CMF
// messages: what the run added to the conversation. The loop uses it to
// know the conversation so far; a handler uses it to store the run's
// output. It keeps what parts end with; deltas are the Balancer's.
type Recorder struct {
	msgs    []cmf.Message
	step    int       // index of the current step's assistant message, or -1
	started time.Time // the run's start
	context *cmf.Extensions
	parent  string // the id of the message before the next one
	state   *cmf.StateRecord
	base    []byte // the shared state the run started from
	keep    bool   // record base even if the run leaves it alone
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{step: -1} }

// Stamp gives every message recorded from now on the run's context (the
// request, agent and subject of ext, shared: they are immutable) and its
// provenance: its id, its source ("model", "tool" or "client") and the
// id of the message before it, parent for the first.
func (r *Recorder) Stamp(ext *cmf.Extensions, parent string) {
	r.context, r.parent = ext, parent
}

// BaseState says which shared state the run started from (the client's):
// a run that patches it without replacing it records it with its
// patches. With keep, a run that leaves it alone records it too, on its
// last message: the client changed it since the conversation last
// recorded one.
func (r *Recorder) BaseState(state []byte, keep bool) { r.base, r.keep = state, keep }

// stamp sets m's context extensions, as Stamp asked.
func (r *Recorder) stamp(m *cmf.Message, source string) {
	if r.context == nil {
		return
	}
	e := &cmf.Extensions{Request: r.context.Request, Agent: r.context.Agent,
		Provenance: &cmf.ProvenanceExtension{Source: source, MessageID: m.ID(), ParentID: r.parent}}
	if s := r.context.Security; s != nil && s.Subject != nil {
		e.Security = &cmf.SecurityExtension{Subject: s.Subject}
	}
	m.Extensions = e
	r.parent = m.ID()
}

// Add folds one event in.
func (r *Recorder) Add(ev Event) {
	switch e := ev.(type) {
	case *RunStarted:
		r.started = e.Time
	case *StepStarted:
		r.startStep(e.MessageID)
	case *PartEnded:
		if e.Part != nil {
			m := r.current()
			m.Content = append(m.Content, e.Part)
			m.AddLabels(e.Labels...)
		}
	case *ApprovalRequested:
		if m := r.holder(e.ToolCallID); m != nil {
			m.SetCallRecord(e.ToolCallID, cmf.CallRecord{ApprovalID: e.ApprovalID})
		}
	case *ClientToolCall:
		if m := r.holder(e.ToolCallID); m != nil {
			m.SetCallRecord(e.ToolCallID, cmf.CallRecord{Client: true})
		}
	case *ToolResult:
		r.addResult(e)
	case *Source:
		m := r.current()
		m.Content = append(m.Content, cmf.ResourceRef{ResourceRequestID: e.ID, URI: e.URL, Name: e.Title, ResourceType: cmf.ResourceURI})
	case *StateSnapshot:
		r.setState(cmf.StateRecord{Snapshot: orEmptyObject(e.State)})
	case *StateDelta:
		st := cmf.StateRecord{Snapshot: orEmptyObject(r.base)}
		if r.state != nil {
			st = *r.state
		}
		st.Patches = append(st.Patches[:len(st.Patches):len(st.Patches)], e.Patch)
		r.setState(st)
	case *Data:
		if e.Transient {
			return
		}
		m := r.current()
		m.AddData(cmf.DataRecord{Name: e.Name, ID: e.ID, Value: e.Value, Index: len(m.Content)})
	case *Steered:
		r.msgs = append(r.msgs, e.Message)
	case *StepFinished:
		if r.step >= 0 {
			setCompletion(&r.msgs[r.step], e, r.started)
		}
	case *RunFinished:
		if e.StopReason == cmf.StopPaused || e.StopReason == cmf.StopAborted || e.StopReason == cmf.StopMaxTurns {
			r.markLast(e.StopReason)
		}
		r.keepBase()
		if len(e.Metadata) > 0 {
			if m := r.lastAssistant(); m != nil {
				m.SetMetadata(e.Metadata)
			}
		}
	}
}

// Interrupt records that the run ended early (reason is [cmf.StopAborted]
// or [cmf.StopError]) on the last assistant message. What was open was
// closed by the [Balancer] (text and thinking as they stood; a tool call
// cut off mid-arguments has no part, and is not recorded).
func (r *Recorder) Interrupt(reason cmf.StopReason) {
	r.markLast(reason)
	r.keepBase()
}

// keepBase records the state the run started from, at its end, when
// BaseState asked to and the run set none.
func (r *Recorder) keepBase() {
	if !r.keep || r.state != nil {
		return
	}
	if m := r.lastAssistant(); m != nil {
		st := cmf.StateRecord{Snapshot: orEmptyObject(r.base)}
		r.state = &st
		m.SetState(st)
	}
}

// Messages returns the messages recorded so far. The slice is the
// recorder's own: read it, don't change it.
func (r *Recorder) Messages() []cmf.Message { return r.msgs }

// setState records the shared state as it now stands on the current step.
func (r *Recorder) setState(st cmf.StateRecord) {
	r.state = &st
	r.current().SetState(st)
}

// orEmptyObject is state, or {} when there is none.
func orEmptyObject(state []byte) []byte {
	if len(state) == 0 || string(state) == "null" {
		return []byte("{}")
	}
	return state
}

func (r *Recorder) startStep(id string) {
	if id == "" {
		id = ids.New()
	}
	m := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant}
	m.SetID(id)
	r.stamp(&m, "model")
	r.msgs = append(r.msgs, m)
	r.step = len(r.msgs) - 1
}

// current returns the assistant message parts go to, starting one when an
// agent sends parts outside a step.
func (r *Recorder) current() *cmf.Message {
	if r.step < 0 {
		r.startStep("")
	}
	return &r.msgs[r.step]
}

// holder finds the recorded assistant message that holds a tool call.
func (r *Recorder) holder(toolCallID string) *cmf.Message {
	for i := len(r.msgs) - 1; i >= 0; i-- {
		for _, p := range r.msgs[i].Content {
			if tc, ok := p.(cmf.ToolCall); ok && tc.ToolCallID == toolCallID {
				return &r.msgs[i]
			}
		}
	}
	return nil
}

func (r *Recorder) addResult(e *ToolResult) {
	id := e.MessageID
	if id == "" {
		id = ids.New()
	}
	m := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleTool, Content: []cmf.Part{
		cmf.ToolResult{ToolCallID: e.ToolCallID, ToolName: e.ToolName, Content: e.Output, IsError: e.IsError},
	}}
	m.SetID(id)
	source := "tool"
	if e.FromClient {
		source = "client"
	}
	r.stamp(&m, source)
	m.AddLabels(e.Labels...)
	switch {
	case e.Denied:
		m.SetCallRecord(e.ToolCallID, cmf.CallRecord{Decision: &cmf.Decision{Approved: false, Reason: e.Reason}})
	case e.Approved:
		m.SetCallRecord(e.ToolCallID, cmf.CallRecord{Decision: &cmf.Decision{Approved: true, EditedArguments: e.EditedInput}})
	case e.FromClient:
		m.SetCallRecord(e.ToolCallID, cmf.CallRecord{Client: true})
	}
	r.msgs = append(r.msgs, m)
}

// markLast records reason on the last assistant message.
func (r *Recorder) markLast(reason cmf.StopReason) {
	m := r.lastAssistant()
	switch {
	case m == nil:
	case completionOf(m) != nil:
		completionOf(m).StopReason = reason
	default:
		setCompletion(m, &StepFinished{StopReason: reason}, r.started)
	}
}

func (r *Recorder) lastAssistant() *cmf.Message {
	for i := len(r.msgs) - 1; i >= 0; i-- {
		if r.msgs[i].Role == cmf.RoleAssistant {
			return &r.msgs[i]
		}
	}
	return nil
}

func completionOf(m *cmf.Message) *cmf.CompletionExtension {
	if m.Extensions == nil {
		return nil
	}
	return m.Extensions.Completion
}

// setCompletion records a step's end on its message: why it stopped, its
// usage, the model and its latency, when the reply was created (its run's
// start), and who served it (the llm extension).
func setCompletion(m *cmf.Message, e *StepFinished, started time.Time) {
	if m.Extensions == nil {
		m.Extensions = &cmf.Extensions{}
	}
	c := &cmf.CompletionExtension{StopReason: e.StopReason, Model: e.Model}
	if !e.Usage.IsZero() {
		c.Tokens = e.Usage.CMF()
	}
	if e.Latency > 0 {
		ms := e.Latency.Milliseconds()
		c.LatencyMs = &ms
	}
	if e.Model != "" || e.Provider != "" {
		m.Extensions.LLM = &cmf.LLMExtension{ModelID: e.Model, Provider: e.Provider}
	}
	if !started.IsZero() {
		c.CreatedAt = started.UTC().Format(time.RFC3339Nano)
	}
	m.Extensions.Completion = c
}
