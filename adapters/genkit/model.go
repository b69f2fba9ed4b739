package genkitagent

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
)

// DefineModel registers an agentui model with g as a Genkit model named
// name: the demo model (deterministic, offline) for examples and tests, or
// a provider's through agentui's adapters. Provider values that agentui
// keeps with reasoning (signatures) do not survive the trip through
// Genkit's messages.
func DefineModel(g *genkit.Genkit, name string, m agent.Model) ai.Model {
	return genkit.DefineModel(g, name, &ai.ModelOptions{Label: name,
		Supports: &ai.ModelSupports{Multiturn: true, Tools: true, SystemRole: true, ToolChoice: true}},
		func(ctx context.Context, req *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			areq := &agent.Request{Messages: fromGenkit(req.Messages)}
			for _, t := range req.Tools {
				params, _ := json.Marshal(t.InputSchema)
				areq.Tools = append(areq.Tools, agent.ToolSpec{Name: t.Name, Description: t.Description, Parameters: params})
			}
			send := func(p *ai.Part) error {
				if cb == nil {
					return nil
				}
				return cb(ctx, &ai.ModelResponseChunk{Content: []*ai.Part{p}})
			}
			var thinking, text strings.Builder
			type call struct {
				id, name string
				args     strings.Builder
			}
			var calls []*call
			byID := map[string]*call{}
			resp := &ai.ModelResponse{Request: req, FinishReason: ai.FinishReasonStop}
			for ch, err := range m.Stream(ctx, areq) {
				if err != nil {
					return nil, err
				}
				switch ch.Kind {
				case agent.ChunkThinking:
					thinking.WriteString(ch.Delta)
					err = send(ai.NewReasoningPart(ch.Delta, nil))
				case agent.ChunkText:
					text.WriteString(ch.Delta)
					err = send(ai.NewTextPart(ch.Delta))
				case agent.ChunkToolCall:
					c, ok := byID[ch.ToolCallID]
					if !ok {
						c = &call{id: ch.ToolCallID, name: ch.ToolName}
						byID[ch.ToolCallID] = c
						calls = append(calls, c)
					}
					c.args.WriteString(ch.Delta)
				case agent.ChunkFinish:
					u := ch.Usage
					resp.Usage = &ai.GenerationUsage{InputTokens: int(u.InputTokens), OutputTokens: int(u.OutputTokens),
						TotalTokens: int(u.InputTokens + u.OutputTokens), ThoughtsTokens: int(u.ReasoningTokens)}
					if ch.StopReason == cmf.StopMaxTokens {
						resp.FinishReason = ai.FinishReasonLength
					}
				}
				if err != nil {
					return nil, err
				}
			}
			var parts []*ai.Part
			if thinking.Len() > 0 {
				parts = append(parts, ai.NewReasoningPart(thinking.String(), nil))
			}
			if text.Len() > 0 {
				parts = append(parts, ai.NewTextPart(text.String()))
			}
			for _, c := range calls {
				p := ai.NewToolRequestPart(&ai.ToolRequest{Name: c.name, Ref: c.id, Input: value(json.RawMessage(c.args.String()))})
				if err := send(p); err != nil {
					return nil, err
				}
				parts = append(parts, p)
			}
			resp.Message = ai.NewModelMessage(parts...)
			return resp, nil
		})
}

// fromGenkit is Genkit's messages as CMF, for an agentui model.
func fromGenkit(in []*ai.Message) []cmf.Message {
	out := make([]cmf.Message, 0, len(in))
	for _, m := range in {
		var parts []cmf.Part
		role := cmf.RoleUser
		switch m.Role {
		case ai.RoleSystem:
			role = cmf.RoleSystem
		case ai.RoleModel:
			role = cmf.RoleAssistant
		case ai.RoleTool:
			role = cmf.RoleTool
		}
		for _, p := range m.Content {
			switch {
			case p.IsReasoning():
				parts = append(parts, cmf.Thinking{Text: p.Text})
			case p.IsText():
				parts = append(parts, cmf.Text{Text: p.Text})
			case p.IsToolRequest():
				args, err := json.Marshal(p.ToolRequest.Input)
				if err != nil || string(args) == "null" {
					args = json.RawMessage(`{}`)
				}
				parts = append(parts, cmf.ToolCall{ToolCallID: p.ToolRequest.Ref, Name: p.ToolRequest.Name, Arguments: args})
			case p.IsToolResponse():
				out, _ := json.Marshal(p.ToolResponse.Output)
				text, _ := p.ToolResponse.Output.(string)
				// Genkit's responses say nothing of errors; a denial is
				// one to an agentui model, as the loop's is.
				parts = append(parts, cmf.ToolResult{ToolCallID: p.ToolResponse.Ref, ToolName: p.ToolResponse.Name, Content: out,
					IsError: strings.HasPrefix(text, deniedText)})
			}
		}
		out = append(out, cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: role, Content: parts})
	}
	return out
}
