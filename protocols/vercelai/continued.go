package vercelai

import (
	"strconv"
	"strings"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/jsonw"
)

// A stream that continues an assistant message (answers to its tool
// calls) normally goes to the client that holds the message. A reader
// that attaches to it instead (useChat's resumeStream after a reload)
// does not: useChat starts a resumed message empty and replaces the one
// it loaded with it. Such a reader is sent what the continued message
// held first, right after start, so it shows the whole message.

// continuedMessage returns the continued message id as the stored
// conversation (history) holds it, when the client's messages do not hold
// it; nil when they do, or the history lacks it.
func continuedMessage(client, history []cmf.Message, id string) *UIMessage {
	if id == "" || history == nil {
		return nil
	}
	for i := range client {
		if client[i].ID() == id {
			return nil
		}
	}
	// The continued message is the last assistant turn: dump only that.
	from := len(history)
	for from > 0 && (history[from-1].Role == cmf.RoleAssistant || history[from-1].Role == cmf.RoleTool) {
		from--
	}
	for _, m := range Dump(history[from:]) {
		if m.ID == id && m.Role == "assistant" {
			return &m
		}
	}
	return nil
}

// writeContinued writes the parts of the continued message m as the
// chunks that build them.
func (e *encoder) writeContinued(m *UIMessage) {
	for i := range m.Parts {
		p := &m.Parts[i]
		id := "continued-" + strconv.Itoa(i)
		switch {
		case p.Type == "step-start":
			e.endStep()
			e.chunk(`{"type":"start-step"}`)
			e.stepOpen = true
		case p.Type == "text" || p.Type == "reasoning":
			kind := agent.PartText
			if p.Type == "reasoning" {
				kind = agent.PartThinking
			}
			e.startPart(&agent.PartStarted{Kind: kind, ID: id})
			if p.Text != nil && *p.Text != "" {
				e.delta(&agent.PartDelta{Kind: kind, ID: id, Delta: *p.Text})
			}
			e.endPart(&agent.PartEnded{Kind: kind, ID: id})
		case p.IsTool():
			e.writeContinuedTool(p)
		case p.Type == "source-url":
			e.Encode(&agent.Source{ID: p.SourceID, URL: p.URL, Title: p.Title})
		case p.Type == "source-document":
			b := jsonw.StringField(append(e.w.Start(), `{"type":"source-document"`...), "sourceId", p.SourceID)
			b = jsonw.StringField(b, "mediaType", p.MediaType)
			b = jsonw.StringField(b, "title", p.Title)
			if p.Filename != "" {
				b = jsonw.StringField(b, "filename", p.Filename)
			}
			e.w.End(append(b, '}'))
		case p.Type == "file":
			b := jsonw.StringField(append(e.w.Start(), `{"type":"file"`...), "url", p.URL)
			e.w.End(append(jsonw.StringField(b, "mediaType", p.MediaType), '}'))
		default:
			if name, ok := strings.CutPrefix(p.Type, "data-"); ok {
				e.data(name, p.ID, p.Data, false)
			}
		}
	}
}

// writeContinuedTool writes a tool part: its call, then what its state
// says happened to it.
func (e *encoder) writeContinuedTool(p *Part) {
	call := p.ToolCallID
	e.endPart(&agent.PartEnded{Kind: agent.PartToolCall, ID: call, Part: cmf.ToolCall{ToolCallID: call, Name: p.Tool(), Arguments: p.Input}})
	// AI SDK 6 has no chunk that says how an approval was answered
	// (7's tool-approval-response does), and its messages may show an
	// approval only in the states that say: a granted call's part is
	// written without it (its output follows), and so is one that waits
	// for its answer (this continuation brings it: useChat sends one
	// once every approval is answered). A denial cannot be shown whole.
	if a := p.Approval; a != nil && (e.v7 || a.Approved != nil && !*a.Approved) {
		e.Encode(&agent.ApprovalRequested{ToolCallID: call, ToolName: p.Tool(), ApprovalID: a.ID})
	}
	res := &agent.ToolResult{ToolCallID: call, ToolName: p.Tool()}
	if a := p.Approval; a != nil && a.Approved != nil {
		res.ApprovalID, res.Approved, res.Denied, res.Reason = a.ID, *a.Approved, !*a.Approved, a.Reason
	}
	switch p.State {
	case StateOutputAvailable:
		res.Output = p.Output
	case StateOutputError:
		res.IsError, res.Output = true, jsonString(deref(p.ErrorText))
	case StateOutputDenied:
		res.Denied, res.Approved = true, false
	default:
		return // waiting: for its approval, or for the client's output
	}
	e.result(res)
}
