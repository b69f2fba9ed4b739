package agent

import (
	"encoding/json"
	"strings"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/ids"
)

// A run's messages are recorded as CMF: one assistant message per step
// (thinking, text and tool calls, in order), one tool message per tool
// result. What CMF has no field for — that a call waited for approval (and
// its approval id), that a call was for the client, how an approval was
// answered, the UI data a step produced — is kept under a custom extension
// so that a stored conversation can be shown again exactly as it streamed.
const (
	callsKey = "agentui.calls" // map[tool call id]CallInfo
	dataKey  = "agentui.data"  // []DataRecord, on assistant messages
)

// CallInfo is what agentui records about a tool call beyond CMF's fields.
type CallInfo struct {
	ApprovalID string `json:"approval_id,omitempty"` // the call waited for approval
	Client     bool   `json:"client,omitempty"`      // the call was for the client / the result came from it
	Approved   *bool  `json:"approved,omitempty"`    // on the result: how the approval was answered
	Reason     string `json:"reason,omitempty"`      // on the result: the denial reason
}

// DataRecord is a non-transient [Data] event kept with its step's message.
// Index is the number of content parts the message had when it arrived, so
// a UI can show it where it streamed.
type DataRecord struct {
	Name  string          `json:"name"`
	ID    string          `json:"id,omitempty"`
	Value json.RawMessage `json:"value"`
	Index int             `json:"index"`
}

// CallInfos returns the call records of a message (a new map).
func CallInfos(m *cmf.Message) map[string]CallInfo {
	if m.Extensions == nil || m.Extensions.Custom == nil {
		return nil
	}
	raw, ok := m.Extensions.Custom[callsKey]
	if !ok {
		return nil
	}
	var infos map[string]CallInfo
	if json.Unmarshal(raw, &infos) != nil {
		return nil
	}
	return infos
}

// SetCallInfo records info about a tool call on a message.
func SetCallInfo(m *cmf.Message, toolCallID string, info CallInfo) {
	infos := CallInfos(m)
	if infos == nil {
		infos = map[string]CallInfo{}
	}
	infos[toolCallID] = info
	setCustom(m, callsKey, infos)
}

// DataRecords returns the UI data recorded on a message.
func DataRecords(m *cmf.Message) []DataRecord {
	if m.Extensions == nil || m.Extensions.Custom == nil {
		return nil
	}
	var recs []DataRecord
	if raw, ok := m.Extensions.Custom[dataKey]; ok {
		_ = json.Unmarshal(raw, &recs)
	}
	return recs
}

// SetDataRecords stores UI data records on a message.
func SetDataRecords(m *cmf.Message, recs []DataRecord) { setCustom(m, dataKey, recs) }

func setCustom(m *cmf.Message, key string, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		return
	}
	if m.Extensions == nil {
		m.Extensions = &cmf.Extensions{}
	}
	if m.Extensions.Custom == nil {
		m.Extensions.Custom = map[string]json.RawMessage{}
	}
	m.Extensions.Custom[key] = raw
}

// CallState is a tool call and what became of it.
type CallState struct {
	Call       cmf.ToolCall
	MessageID  string // the assistant message holding the call
	ApprovalID string // set when the call waited for approval
	Client     bool   // the call was for the client
	Result     *cmf.ToolResult
	Approved   *bool  // how the approval was answered, when it was
	Reason     string // the denial reason
}

// Pending reports whether the call waits for an approval or a client's
// output.
func (c *CallState) Pending() bool {
	return c.Result == nil && (c.ApprovalID != "" || c.Client)
}

// CallStates lists every tool call in msgs, in order, with its result and
// approval record.
func CallStates(msgs []cmf.Message) []CallState {
	var calls []CallState
	index := map[string]int{}
	for i := range msgs {
		m := &msgs[i]
		infos := CallInfos(m)
		for _, p := range m.Content {
			switch p := p.(type) {
			case cmf.ToolCall:
				info := infos[p.ToolCallID]
				index[p.ToolCallID] = len(calls)
				calls = append(calls, CallState{Call: p, MessageID: m.ID(), ApprovalID: info.ApprovalID, Client: info.Client})
			case cmf.ToolResult:
				j, ok := index[p.ToolCallID]
				if !ok {
					continue
				}
				r := p
				calls[j].Result = &r
				if info, ok := infos[p.ToolCallID]; ok {
					calls[j].Approved = info.Approved
					calls[j].Reason = info.Reason
				}
			}
		}
	}
	return calls
}

// PendingCalls lists the calls in msgs that wait for an approval or a
// client's output, per the records a [Recorder] keeps.
func PendingCalls(msgs []cmf.Message) []PendingCall {
	var out []PendingCall
	for _, c := range CallStates(msgs) {
		if !c.Pending() {
			continue
		}
		kind := PendingClient
		if c.ApprovalID != "" {
			kind = PendingApproval
		}
		out = append(out, PendingCall{Kind: kind, ToolCallID: c.Call.ToolCallID, ToolName: c.Call.Name, ApprovalID: c.ApprovalID, Input: c.Call.Arguments})
	}
	return out
}

// Recorder folds a run's events into CMF messages: what the run added to
// the conversation. The loop uses it to know the conversation so far; a
// handler uses it to store the run's output.
type Recorder struct {
	msgs  []cmf.Message
	step  int // index of the current step's assistant message, or -1
	open  map[string]*openPart
	order []string // open part ids, in start order
}

type openPart struct {
	kind     PartKind
	toolName string
	text     strings.Builder
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{step: -1} }

// Add folds one event in.
func (r *Recorder) Add(ev Event) {
	switch e := ev.(type) {
	case *StepStarted:
		r.startStep(e.MessageID)
	case *PartStarted:
		if r.open == nil {
			r.open = map[string]*openPart{}
		}
		r.open[e.ID] = &openPart{kind: e.Kind, toolName: e.ToolName}
		r.order = append(r.order, e.ID)
	case *PartDelta:
		if p := r.open[e.ID]; p != nil {
			p.text.WriteString(e.Delta)
		}
	case *PartEnded:
		r.closePart(e.ID)
		if e.Part != nil {
			m := r.current()
			m.Content = append(m.Content, e.Part)
		}
	case *ApprovalRequested:
		if m := r.holder(e.ToolCallID); m != nil {
			SetCallInfo(m, e.ToolCallID, CallInfo{ApprovalID: e.ApprovalID})
		}
	case *ClientToolCall:
		if m := r.holder(e.ToolCallID); m != nil {
			SetCallInfo(m, e.ToolCallID, CallInfo{Client: true})
		}
	case *ToolResult:
		r.addResult(e)
	case *Data:
		if e.Transient {
			return
		}
		m := r.current()
		recs := DataRecords(m)
		rec := DataRecord{Name: e.Name, ID: e.ID, Value: e.Value, Index: len(m.Content)}
		replaced := false
		for i := range recs {
			if e.ID != "" && recs[i].Name == e.Name && recs[i].ID == e.ID {
				recs[i].Value, replaced = e.Value, true
			}
		}
		if !replaced {
			recs = append(recs, rec)
		}
		SetDataRecords(m, recs)
	case *StepFinished:
		if r.step >= 0 {
			setCompletion(&r.msgs[r.step], e.StopReason, e.Usage)
		}
	case *RunFinished:
		if e.StopReason == cmf.StopPaused || e.StopReason == cmf.StopAborted || e.StopReason == cmf.StopMaxTurns {
			r.markLast(e.StopReason)
		}
	}
}

// Interrupt records that the run ended early (reason is [cmf.StopAborted]
// or [cmf.StopError]): parts still open are closed as they stood (text and
// thinking keep what streamed; a tool call cut off mid-arguments is
// dropped), and the last assistant message records the reason.
func (r *Recorder) Interrupt(reason cmf.StopReason) {
	for len(r.order) > 0 {
		id := r.order[0]
		p := r.open[id]
		r.closePart(id)
		switch p.kind {
		case PartText:
			m := r.current()
			m.Content = append(m.Content, cmf.Text{Text: p.text.String()})
		case PartThinking:
			m := r.current()
			m.Content = append(m.Content, cmf.Thinking{Text: p.text.String()})
		}
	}
	r.markLast(reason)
}

// Messages returns the messages recorded so far. The slice is the
// recorder's own: read it, don't change it.
func (r *Recorder) Messages() []cmf.Message { return r.msgs }

func (r *Recorder) startStep(id string) {
	if id == "" {
		id = ids.New()
	}
	m := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant}
	m.SetID(id)
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

func (r *Recorder) closePart(id string) {
	if _, ok := r.open[id]; !ok {
		return
	}
	delete(r.open, id)
	for i, o := range r.order {
		if o == id {
			r.order = append(r.order[:i], r.order[i+1:]...)
			break
		}
	}
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
	switch {
	case e.Denied:
		no := false
		SetCallInfo(&m, e.ToolCallID, CallInfo{Approved: &no, Reason: e.Reason})
	case e.Approved:
		yes := true
		SetCallInfo(&m, e.ToolCallID, CallInfo{Approved: &yes})
	case e.FromClient:
		SetCallInfo(&m, e.ToolCallID, CallInfo{Client: true})
	}
	r.msgs = append(r.msgs, m)
}

// markLast records reason on the last assistant message.
func (r *Recorder) markLast(reason cmf.StopReason) {
	for i := len(r.msgs) - 1; i >= 0; i-- {
		if r.msgs[i].Role == cmf.RoleAssistant {
			var usage Usage
			if c := completionOf(&r.msgs[i]); c != nil && c.Tokens != nil {
				usage = Usage{InputTokens: c.Tokens.InputTokens, OutputTokens: c.Tokens.OutputTokens, TotalTokens: c.Tokens.TotalTokens}
			}
			setCompletion(&r.msgs[i], reason, usage)
			return
		}
	}
}

func completionOf(m *cmf.Message) *cmf.CompletionExtension {
	if m.Extensions == nil {
		return nil
	}
	return m.Extensions.Completion
}

func setCompletion(m *cmf.Message, reason cmf.StopReason, u Usage) {
	if m.Extensions == nil {
		m.Extensions = &cmf.Extensions{}
	}
	c := &cmf.CompletionExtension{StopReason: reason}
	if !u.IsZero() {
		c.Tokens = u.CMF()
	}
	m.Extensions.Completion = c
}
