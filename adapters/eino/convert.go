package einoagent

import (
	"encoding/json"
	"strings"

	"github.com/cloudwego/eino/schema"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
)

// toEino is the run's conversation as Eino messages: the server's
// instructions (besides the Eino agent's own), then history and the new
// messages. Text, reasoning, tool calls and tool results carry over;
// media parts are not given to an Eino agent.
func toEino(in *agent.Input) ([]*schema.Message, error) {
	out := make([]*schema.Message, 0, len(in.History)+len(in.Messages)+1)
	if in.Instructions != "" {
		out = append(out, schema.SystemMessage(in.Instructions))
	}
	for _, part := range [][]cmf.Message{in.History, in.Messages} {
		for i := range part {
			out = appendMessage(out, &part[i])
		}
	}
	return out, nil
}

func appendMessage(out []*schema.Message, m *cmf.Message) []*schema.Message {
	switch m.Role {
	case cmf.RoleUser:
		return append(out, schema.UserMessage(m.Text()))
	case cmf.RoleAssistant:
		a := &schema.Message{Role: schema.Assistant}
		var text, thinking strings.Builder
		for _, p := range m.Content {
			switch p := p.(type) {
			case cmf.Text:
				text.WriteString(p.Text)
			case cmf.Thinking:
				thinking.WriteString(p.Text)
			case cmf.ToolCall:
				a.ToolCalls = append(a.ToolCalls, schema.ToolCall{ID: p.ToolCallID, Type: "function",
					Function: schema.FunctionCall{Name: p.Name, Arguments: string(p.Arguments)}})
			}
		}
		a.Content, a.ReasoningContent = text.String(), thinking.String()
		if a.Content == "" && a.ReasoningContent == "" && len(a.ToolCalls) == 0 {
			return out
		}
		return append(out, a)
	case cmf.RoleTool:
		for _, p := range m.Content {
			if r, ok := p.(cmf.ToolResult); ok {
				out = append(out, schema.ToolMessage(resultText(r.Content), r.ToolCallID, schema.WithToolName(r.ToolName)))
			}
		}
	}
	return out
}

// resultText is a tool result as the text an Eino tool returns: a JSON
// string unquoted, anything else as JSON.
func resultText(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	return string(content)
}
