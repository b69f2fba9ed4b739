package einoagent

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
)

// ChatModel is an agentui model as an Eino chat model: the demo model
// (deterministic, offline) for examples and tests, or a provider's
// through agentui's adapters. Provider values that agentui keeps with
// reasoning (signatures) do not survive the trip through Eino's messages.
func ChatModel(m agent.Model) model.ToolCallingChatModel { return &chatModel{m: m} }

type chatModel struct {
	m     agent.Model
	tools []agent.ToolSpec
}

// WithTools returns a copy that offers tools.
func (c *chatModel) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	specs := make([]agent.ToolSpec, 0, len(tools))
	for _, t := range tools {
		var params json.RawMessage
		if t.ParamsOneOf != nil {
			s, err := t.ParamsOneOf.ToJSONSchema()
			if err != nil {
				return nil, err
			}
			if params, err = json.Marshal(s); err != nil {
				return nil, err
			}
		}
		specs = append(specs, agent.ToolSpec{Name: t.Name, Description: t.Desc, Parameters: params})
	}
	return &chatModel{m: c.m, tools: specs}, nil
}

// Generate is Stream, gathered.
func (c *chatModel) Generate(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	sr, err := c.Stream(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.ConcatMessageStream(sr)
}

// Stream makes one call of the agentui model, its chunks as Eino's.
func (c *chatModel) Stream(ctx context.Context, in []*schema.Message, _ ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	req := &agent.Request{Tools: c.tools, Messages: fromEino(in)}
	sr, sw := schema.Pipe[*schema.Message](16)
	go func() {
		defer sw.Close()
		index := map[string]int{}
		for ch, err := range c.m.Stream(ctx, req) {
			if err != nil {
				sw.Send(nil, err)
				return
			}
			var m *schema.Message
			switch ch.Kind {
			case agent.ChunkText:
				m = &schema.Message{Role: schema.Assistant, Content: ch.Delta}
			case agent.ChunkThinking:
				m = &schema.Message{Role: schema.Assistant, ReasoningContent: ch.Delta}
			case agent.ChunkToolCall:
				i, ok := index[ch.ToolCallID]
				if !ok {
					i = len(index)
					index[ch.ToolCallID] = i
				}
				tc := schema.ToolCall{Index: &i, Function: schema.FunctionCall{Arguments: ch.Delta}}
				if !ok {
					tc.ID, tc.Type, tc.Function.Name = ch.ToolCallID, "function", ch.ToolName
				}
				m = &schema.Message{Role: schema.Assistant, ToolCalls: []schema.ToolCall{tc}}
			case agent.ChunkFinish:
				u := ch.Usage
				finish := "stop"
				if len(index) > 0 {
					finish = "tool_calls"
				}
				m = &schema.Message{Role: schema.Assistant, ResponseMeta: &schema.ResponseMeta{FinishReason: finish,
					Usage: &schema.TokenUsage{PromptTokens: int(u.InputTokens), CompletionTokens: int(u.OutputTokens), TotalTokens: int(u.InputTokens + u.OutputTokens)}}}
			default:
				continue
			}
			if sw.Send(m, nil) {
				return // the reader closed
			}
		}
	}()
	return sr, nil
}

// fromEino is Eino's messages as CMF, for an agentui model.
func fromEino(in []*schema.Message) []cmf.Message {
	out := make([]cmf.Message, 0, len(in))
	for _, m := range in {
		var parts []cmf.Part
		role := cmf.RoleUser
		switch m.Role {
		case schema.System:
			role = cmf.RoleSystem
			parts = append(parts, cmf.Text{Text: m.Content})
		case schema.User:
			parts = append(parts, cmf.Text{Text: m.Content})
		case schema.Assistant:
			role = cmf.RoleAssistant
			if m.ReasoningContent != "" {
				parts = append(parts, cmf.Thinking{Text: m.ReasoningContent})
			}
			if m.Content != "" {
				parts = append(parts, cmf.Text{Text: m.Content})
			}
			for _, tc := range m.ToolCalls {
				args := json.RawMessage(tc.Function.Arguments)
				if !json.Valid(args) {
					args = json.RawMessage(`{}`)
				}
				parts = append(parts, cmf.ToolCall{ToolCallID: tc.ID, Name: tc.Function.Name, Arguments: args})
			}
		case schema.Tool:
			role = cmf.RoleTool
			// Eino's tool messages say nothing of errors; a denial
			// (NeedsApproval's) is one to an agentui model, as the loop's is.
			parts = append(parts, cmf.ToolResult{ToolCallID: m.ToolCallID, ToolName: m.ToolName, Content: outputJSON(m.Content),
				IsError: strings.HasPrefix(m.Content, deniedText)})
		}
		msg := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: role, Content: parts}
		out = append(out, msg)
	}
	return out
}
