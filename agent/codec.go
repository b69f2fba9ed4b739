package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/jsonw"
)

// Event type names, as [MarshalEvent] writes them: the protocol-neutral
// form a run log keeps, so that a replay can be encoded for any protocol.
const (
	TypeRunStarted        = "run_started"
	TypeStepStarted       = "step_started"
	TypeStepFinished      = "step_finished"
	TypePartStarted       = "part_started"
	TypePartDelta         = "part_delta"
	TypePartEnded         = "part_ended"
	TypeToolResult        = "tool_result"
	TypeToolProgress      = "tool_progress"
	TypeSource            = "source"
	TypeApprovalRequested = "approval_requested"
	TypeClientToolCall    = "client_tool_call"
	TypeStateSnapshot     = "state_snapshot"
	TypeStateDelta        = "state_delta"
	TypeData              = "data"
	TypeSteered           = "steered"
	TypeStepReset         = "step_reset"
	TypeRunFinished       = "run_finished"
)

// partEndedJSON is PartEnded with its part as a one-part CMF message, so
// the part goes through CMF's own validated codec.
type partEndedJSON struct {
	Kind       PartKind
	ID         string
	Part       *cmf.Message `json:",omitempty"`
	InputError string       `json:",omitempty"`
	Labels     []string     `json:",omitempty"`
}

// MarshalEvent returns an event's type name and its JSON.
func MarshalEvent(ev Event) (string, []byte, error) {
	b, err := AppendEvent(nil, ev)
	return EventType(ev), b, err
}

// EventType is an event's type name, "" for no event of this package.
func EventType(ev Event) string {
	switch ev.(type) {
	case *RunStarted:
		return TypeRunStarted
	case *StepStarted:
		return TypeStepStarted
	case *StepFinished:
		return TypeStepFinished
	case *PartStarted:
		return TypePartStarted
	case *PartDelta:
		return TypePartDelta
	case *PartEnded:
		return TypePartEnded
	case *ToolResult:
		return TypeToolResult
	case *ToolProgress:
		return TypeToolProgress
	case *Source:
		return TypeSource
	case *ApprovalRequested:
		return TypeApprovalRequested
	case *ClientToolCall:
		return TypeClientToolCall
	case *StateSnapshot:
		return TypeStateSnapshot
	case *StateDelta:
		return TypeStateDelta
	case *Data:
		return TypeData
	case *Steered:
		return TypeSteered
	case *StepReset:
		return TypeStepReset
	case *RunFinished:
		return TypeRunFinished
	}
	return ""
}

// AppendEvent appends an event's JSON (as MarshalEvent writes it) to b,
// so a log that writes many events into one buffer allocates nothing per
// event for the common ones.
func AppendEvent(b []byte, ev Event) ([]byte, error) {
	var v any = ev
	switch e := ev.(type) {
	case *PartDelta:
		// The bulk of a run: written by hand (no reflection).
		b = strconv.AppendInt(append(b, `{"Kind":`...), int64(e.Kind), 10)
		b = jsonw.StringField(b, "ID", e.ID)
		b = jsonw.StringField(b, "Delta", e.Delta)
		return append(b, '}'), nil
	case *PartEnded:
		if t, ok := e.Part.(cmf.Text); ok && t.Opaque == nil && e.InputError == "" && len(e.Labels) == 0 {
			// A reply's whole text, once per part: written by hand in
			// the form CMF's codec writes, which would escape and
			// compact the text once per level of nesting.
			b = strconv.AppendInt(append(b, `{"Kind":`...), int64(e.Kind), 10)
			b = jsonw.StringField(b, "ID", e.ID)
			b = append(b, textPartPrefix...)
			return append(jsonw.String(b, t.Text), "}]}}"...), nil
		}
		w := partEndedJSON{Kind: e.Kind, ID: e.ID, InputError: e.InputError, Labels: e.Labels}
		if e.Part != nil {
			w.Part = &cmf.Message{Role: cmf.RoleAssistant, Content: []cmf.Part{e.Part}}
		}
		v = w
	}
	if EventType(ev) == "" {
		return b, fmt.Errorf("agent: cannot marshal event %T", ev)
	}
	j, err := json.Marshal(v)
	return append(b, j...), err
}

// UnmarshalEvent decodes what [MarshalEvent] wrote.
func UnmarshalEvent(typ string, data []byte) (Event, error) {
	var ev Event
	switch typ {
	case TypeRunStarted:
		ev = &RunStarted{}
	case TypeStepStarted:
		ev = &StepStarted{}
	case TypeStepFinished:
		ev = &StepFinished{}
	case TypePartStarted:
		ev = &PartStarted{}
	case TypePartDelta:
		if e, ok := parsePartDelta(data); ok {
			return e, nil
		}
		ev = &PartDelta{}
	case TypePartEnded:
		if e, ok := parsePartEnded(data); ok {
			return e, nil
		}
		var w partEndedJSON
		if err := json.Unmarshal(data, &w); err != nil {
			return nil, fmt.Errorf("agent: event %s: %w", typ, err)
		}
		e := &PartEnded{Kind: w.Kind, ID: w.ID, InputError: w.InputError, Labels: w.Labels}
		if w.Part != nil {
			if len(w.Part.Content) != 1 {
				return nil, errors.New("agent: event part_ended: want one part")
			}
			e.Part = w.Part.Content[0]
		}
		return e, nil
	case TypeToolResult:
		ev = &ToolResult{}
	case TypeApprovalRequested:
		ev = &ApprovalRequested{}
	case TypeClientToolCall:
		ev = &ClientToolCall{}
	case TypeStateSnapshot:
		ev = &StateSnapshot{}
	case TypeStateDelta:
		ev = &StateDelta{}
	case TypeData:
		ev = &Data{}
	case TypeSteered:
		ev = &Steered{}
	case TypeStepReset:
		ev = &StepReset{}
	case TypeToolProgress:
		ev = &ToolProgress{}
	case TypeSource:
		ev = &Source{}
	case TypeRunFinished:
		ev = &RunFinished{}
	default:
		return nil, fmt.Errorf("agent: unknown event type %q", typ)
	}
	if err := json.Unmarshal(data, ev); err != nil {
		return nil, fmt.Errorf("agent: event %s: %w", typ, err)
	}
	return ev, nil
}

// parsePartDelta reads what MarshalEvent writes for a PartDelta without
// reflection: {"Kind":N,"ID":"…","Delta":"…"}. Anything else is left to
// encoding/json.
func parsePartDelta(b []byte) (*PartDelta, bool) {
	kind, id, rest, ok := parseKindID(b)
	if !ok {
		return nil, false
	}
	rest, ok = bytes.CutPrefix(rest, []byte(`,"Delta":`))
	if !ok {
		return nil, false
	}
	delta, rest, ok := jsonw.ReadString(rest)
	if !ok || string(rest) != "}" {
		return nil, false
	}
	return &PartDelta{Kind: kind, ID: id, Delta: delta}, true
}

// textPartPrefix is what AppendEvent writes between a finished text
// part's ID and its text.
const textPartPrefix = `,"Part":{"schema_version":"` + cmf.SchemaVersion + `","role":"assistant","content":[{"content_type":"text","text":`

// parsePartEnded reads what AppendEvent writes by hand for a finished
// text part, without reflection: it holds the part's whole text, which
// CMF's codec would scan three times (a reply of 100,000 words took a
// third of a resume's decoding). Anything else is left to encoding/json.
func parsePartEnded(b []byte) (*PartEnded, bool) {
	kind, id, rest, ok := parseKindID(b)
	if !ok {
		return nil, false
	}
	rest, ok = bytes.CutPrefix(rest, []byte(textPartPrefix))
	if !ok {
		return nil, false
	}
	text, rest, ok := jsonw.ReadString(rest)
	if !ok || string(rest) != "}]}}" {
		return nil, false
	}
	return &PartEnded{Kind: kind, ID: id, Part: cmf.Text{Text: text}}, true
}

// parseKindID reads the start both hand-written forms share,
// {"Kind":N,"ID":"…", and returns what follows.
func parseKindID(b []byte) (PartKind, string, []byte, bool) {
	rest, ok := bytes.CutPrefix(b, []byte(`{"Kind":`))
	if !ok {
		return 0, "", nil, false
	}
	i := bytes.IndexByte(rest, ',')
	if i < 1 || i > 3 {
		return 0, "", nil, false
	}
	kind, err := strconv.Atoi(string(rest[:i]))
	if err != nil || kind < 0 || kind > 255 {
		return 0, "", nil, false
	}
	rest, ok = bytes.CutPrefix(rest[i:], []byte(`,"ID":`))
	if !ok {
		return 0, "", nil, false
	}
	id, rest, ok := jsonw.ReadString(rest)
	return PartKind(kind), id, rest, ok
}
