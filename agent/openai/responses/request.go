package responses

import (
	"encoding/json"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/internal/content"
	"github.com/agentui/agentui/cmf"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

// params builds one request. Nothing is stored at OpenAI ("store": false),
// so the request carries the whole conversation, and reasoning models are
// asked for their reasoning items' encrypted content, which the next
// request sends back.
func (m *Model) params(req *agent.Request) responses.ResponseNewParams {
	p := responses.ResponseNewParams{
		Model: m.model,
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: m.input(req)},
		Store: oai.Bool(false),
	}
	sampling := true
	if r := m.reasoning; r != nil {
		p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
		if r.Effort != "" {
			p.Reasoning.Effort = shared.ReasoningEffort(r.Effort)
		}
		if r.Summary != "" {
			p.Reasoning.Summary = shared.ReasoningSummary(r.Summary)
		}
		// Reasoning models refuse temperature and top_p, unless they
		// are told not to reason.
		sampling = r.Effort == "none"
	}
	for _, s := range req.Tools {
		p.Tools = append(p.Tools, functionTool(s))
	}
	if m.webSearch {
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfWebSearch: &responses.WebSearchToolParam{Type: responses.WebSearchToolTypeWebSearch}})
	}
	if st := req.Settings; st != nil {
		if st.Temperature != nil && sampling {
			p.Temperature = oai.Float(*st.Temperature)
		}
		if st.TopP != nil && sampling {
			p.TopP = oai.Float(*st.TopP)
		}
		if st.MaxOutputTokens != nil {
			p.MaxOutputTokens = oai.Int(*st.MaxOutputTokens)
		}
		// The Responses API has no seed.
	}
	return p
}

// functionTool declares a tool, not strict. Without "strict" the API makes
// a tool strict when its schema allows, and a strict tool's optional
// arguments come filled in (empty strings, zeros) rather than left out;
// agentui validates arguments against the schema itself.
func functionTool(s agent.ToolSpec) responses.ToolUnionParam {
	params := map[string]any{"type": "object"}
	if len(s.Parameters) > 0 {
		var p map[string]any
		if json.Unmarshal(s.Parameters, &p) == nil {
			params = p
		}
	}
	fn := &responses.FunctionToolParam{Name: s.Name, Parameters: params, Strict: oai.Bool(false)}
	if s.Description != "" {
		fn.Description = oai.String(s.Description)
	}
	return responses.ToolUnionParam{OfFunction: fn}
}

// input converts the conversation to input items, in order.
//
// An assistant message becomes its parts' items in the order the model
// produced them: reasoning items, messages and function calls. A reasoning
// item is sent back only to the model that produced it (its Opaque), with
// its id and encrypted content byte-exact, and only in front of the item
// it preceded (text or a call): the API refuses a reasoning item without
// its following item. Items that did not come from this model (its
// reasoning, another provider's thinking and signatures) are dropped.
// Function calls are sent without their item ids, so a call whose
// reasoning item was dropped (a switch of model) is still valid: the API
// pairs a call id with its reasoning item, not a call without one.
func (m *Model) input(req *agent.Request) responses.ResponseInputParam {
	out := make(responses.ResponseInputParam, 0, req.Len())
	// Assistant messages in a row are one turn (a client's thread may hold
	// a step's reasoning in a message of its own, as AG-UI's reasoning
	// messages do): a reasoning item is followed by what follows it in the
	// turn, not only in its message.
	var turn []cmf.Part
	for msg := range req.All() {
		if msg.Role != cmf.RoleAssistant && len(turn) > 0 {
			out, turn = m.assistantItems(out, turn), turn[:0]
		}
		switch msg.Role {
		case cmf.RoleSystem:
			out = append(out, textMessage(responses.EasyInputMessageRoleSystem, msg.Text()))
		case cmf.RoleDeveloper:
			out = append(out, textMessage(responses.EasyInputMessageRoleDeveloper, msg.Text()))
		case cmf.RoleUser:
			if item, ok := userMessage(msg); ok {
				out = append(out, item)
			}
		case cmf.RoleAssistant:
			turn = append(turn, msg.Content...)
		case cmf.RoleTool:
			for _, part := range msg.Content {
				if r, ok := part.(cmf.ToolResult); ok {
					out = append(out, responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
						CallID: oai.String(r.ToolCallID),
						Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: oai.String(content.ResultTextSayingError(r))},
					}})
				}
			}
		}
	}
	if len(turn) > 0 {
		out = m.assistantItems(out, turn)
	}
	return out
}

func (m *Model) assistantItems(out responses.ResponseInputParam, parts []cmf.Part) responses.ResponseInputParam {
	for i, part := range parts {
		switch p := part.(type) {
		case cmf.Thinking:
			if !p.Opaque.From(Provider, m.model) || p.Opaque.ID == "" || p.Opaque.Data == "" || !followed(parts[i+1:]) {
				continue
			}
			summary := []responses.ResponseReasoningItemSummaryParam{}
			if p.Text != "" {
				summary = append(summary, responses.ResponseReasoningItemSummaryParam{Text: p.Text})
			}
			out = append(out, responses.ResponseInputItemUnionParam{OfReasoning: &responses.ResponseReasoningItemParam{
				ID: p.Opaque.ID, EncryptedContent: oai.String(p.Opaque.Data), Summary: summary,
			}})
		case cmf.Text:
			if p.Text != "" {
				out = append(out, textMessage(responses.EasyInputMessageRoleAssistant, p.Text))
			}
		case cmf.ToolCall:
			out = append(out, responses.ResponseInputItemUnionParam{OfFunctionCall: &responses.ResponseFunctionToolCallParam{
				CallID: p.ToolCallID, Name: p.Name, Arguments: string(p.Arguments),
			}})
		}
	}
	return out
}

// followed reports whether a reasoning item has the item it preceded:
// the next part that becomes an item is text or a tool call, not more
// reasoning (whose own following item, a web search, is not kept) and not
// the end of the step.
func followed(rest []cmf.Part) bool {
	for _, part := range rest {
		switch p := part.(type) {
		case cmf.Text:
			if p.Text != "" {
				return true
			}
		case cmf.ToolCall:
			return true
		case cmf.Thinking, cmf.RedactedThinking:
			return false
		}
	}
	return false
}

func textMessage(role responses.EasyInputMessageRole, text string) responses.ResponseInputItemUnionParam {
	return responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{
		Role: role, Content: responses.EasyInputMessageContentUnionParam{OfString: oai.String(text)},
	}}
}

// userMessage converts a user message: text as a string, anything else as
// content parts. Media the API cannot take are named in text.
func userMessage(msg *cmf.Message) (responses.ResponseInputItemUnionParam, bool) {
	onlyText := true
	for _, p := range msg.Content {
		if _, ok := p.(cmf.Text); !ok {
			onlyText = false
		}
	}
	if onlyText {
		return textMessage(responses.EasyInputMessageRoleUser, msg.Text()), true
	}
	var parts responses.ResponseInputMessageContentListParam
	text := func(s string) {
		parts = append(parts, responses.ResponseInputContentUnionParam{OfInputText: &responses.ResponseInputTextParam{Text: s}})
	}
	for _, p := range msg.Content {
		switch p := p.(type) {
		case cmf.Text:
			text(p.Text)
		case cmf.Image:
			parts = append(parts, responses.ResponseInputContentUnionParam{OfInputImage: &responses.ResponseInputImageParam{
				Detail: responses.ResponseInputImageDetailAuto, ImageURL: oai.String(content.DataURL(p.MediaSource)),
			}})
		case cmf.Document:
			if p.Type == cmf.SourceBase64 {
				f := &responses.ResponseInputFileParam{FileData: oai.String(content.DataURL(p.MediaSource))}
				f.Filename = oai.String("document")
				if p.Title != "" {
					f.Filename = oai.String(p.Title)
				}
				parts = append(parts, responses.ResponseInputContentUnionParam{OfInputFile: f})
			} else {
				parts = append(parts, responses.ResponseInputContentUnionParam{OfInputFile: &responses.ResponseInputFileParam{FileURL: oai.String(p.Data)}})
			}
		case cmf.Audio:
			text("[audio: " + content.MediaName(p.MediaSource) + "]")
		case cmf.Video:
			text("[video: " + content.MediaName(p.MediaSource) + "]")
		case cmf.Resource:
			if s, ok := content.ResourceText(p); ok {
				text(s)
			}
		}
	}
	if len(parts) == 0 {
		return responses.ResponseInputItemUnionParam{}, false
	}
	return responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{
		Role: responses.EasyInputMessageRoleUser, Content: responses.EasyInputMessageContentUnionParam{OfInputItemContentList: parts},
	}}, true
}
