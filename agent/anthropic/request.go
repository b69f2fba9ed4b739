package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/internal/content"
	"github.com/agentui/agentui/cmf"
	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"
)

// params builds the Messages request for req.
//
// The same conversation always builds the same request, and a longer one
// only appends to it: thinking blocks are bound to everything before them
// (system, tools and earlier messages), and the prompt cache reads only a
// prefix it has seen.
func (m *Model) params(req *agent.Request) (sdk.MessageNewParams, []option.RequestOption) {
	b := builder{model: m.model}
	histEnd := len(req.System) + len(req.History)
	i := 0
	for msg := range req.All() {
		b.add(msg)
		i++
		if i == histEnd && len(req.History) > 0 && len(b.msgs) > 0 {
			last := &b.msgs[len(b.msgs)-1]
			b.mark, b.marked = [2]int{len(b.msgs) - 1, len(last.blocks) - 1}, true
		}
	}
	p := sdk.MessageNewParams{Model: m.model, MaxTokens: m.maxTokens, System: b.system, Tools: tools(req.Tools, m.webSearch)}
	if st := req.Settings; st != nil && st.MaxOutputTokens != nil && *st.MaxOutputTokens > 0 {
		p.MaxTokens = *st.MaxOutputTokens
	}
	// Temperature, top_p and seed are not part of API version 2026-10-21
	// (it refuses sampling parameters): a run's settings for them are not
	// applied.

	var opts []option.RequestOption
	switch m.thinking.mode {
	case ThinkingAdaptive:
		t := &sdk.ThinkingConfigAdaptiveParam{Display: sdk.ThinkingConfigAdaptiveDisplay(m.thinking.display)}
		p.Thinking = sdk.ThinkingConfigParamUnion{OfAdaptive: t}
	case ThinkingBudget:
		if b.continuesWithoutThinking() {
			// Manual thinking requires the assistant turn that a tool
			// result answers to start with its thinking block; when that
			// block cannot be sent (it came from another model, or the
			// turn had none), the API's own remedy is to call without
			// thinking. A tool-use loop keeps one configuration, so the
			// rest of this turn goes on without thinking too.
			p.Thinking = sdk.ThinkingConfigParamUnion{OfDisabled: &sdk.ThinkingConfigDisabledParam{}}
			b.dropFinalThinking()
			break
		}
		t := &sdk.ThinkingConfigEnabledParam{BudgetTokens: m.thinking.budget, Display: sdk.ThinkingConfigEnabledDisplay(m.thinking.display)}
		p.Thinking = sdk.ThinkingConfigParamUnion{OfEnabled: t}
		opts = append(opts, option.WithHeaderAdd("anthropic-beta", interleavedThinking))
	case ThinkingOff:
		p.Thinking = sdk.ThinkingConfigParamUnion{OfDisabled: &sdk.ThinkingConfigDisabledParam{}}
		b.dropFinalThinking()
	}
	if m.thinking.effort != "" {
		p.OutputConfig.Effort = sdk.OutputConfigEffort(m.thinking.effort)
	}

	// Cache breakpoints on the stable prefix: the instructions (after the
	// tools, which the cache reads first), else the tools; and the last
	// message the server had stored before this turn.
	switch {
	case len(p.System) > 0:
		p.System[len(p.System)-1].CacheControl = sdk.NewCacheControlEphemeralParam()
	case len(p.Tools) > 0:
		if cc := p.Tools[len(p.Tools)-1].GetCacheControl(); cc != nil {
			*cc = sdk.NewCacheControlEphemeralParam()
		}
	}
	if b.marked {
		b.breakpoint()
	}
	p.Messages = make([]sdk.MessageParam, 0, len(b.msgs))
	for _, msg := range b.msgs {
		if msg.assistant {
			p.Messages = append(p.Messages, sdk.NewAssistantMessage(msg.blocks...))
		} else {
			p.Messages = append(p.Messages, sdk.NewUserMessage(msg.blocks...))
		}
	}
	return p, opts
}

// builder turns CMF messages into API messages.
type builder struct {
	model  string
	system []sdk.TextBlockParam
	msgs   []apiMessage
	mark   [2]int // the last block from History: message, block
	marked bool
}

type apiMessage struct {
	assistant bool
	blocks    []sdk.ContentBlockParamUnion
}

// push appends blocks as a message of the given role, to the last message
// when it has that role: the API reads consecutive turns of one role as
// one, and a tool's results must sit in the user turn right after the
// call.
func (b *builder) push(assistant bool, blocks []sdk.ContentBlockParamUnion) {
	if len(blocks) == 0 {
		return
	}
	if n := len(b.msgs); n > 0 && b.msgs[n-1].assistant == assistant {
		b.msgs[n-1].blocks = append(b.msgs[n-1].blocks, blocks...)
		return
	}
	b.msgs = append(b.msgs, apiMessage{assistant: assistant, blocks: blocks})
}

func (b *builder) add(m *cmf.Message) {
	switch m.Role {
	case cmf.RoleSystem, cmf.RoleDeveloper:
		for _, p := range m.Content {
			if t, ok := p.(cmf.Text); ok && t.Text != "" {
				b.system = append(b.system, sdk.TextBlockParam{Text: t.Text})
			}
		}
	case cmf.RoleUser:
		b.push(false, userBlocks(m))
	case cmf.RoleAssistant:
		b.push(true, b.assistantBlocks(m))
	case cmf.RoleTool:
		var blocks []sdk.ContentBlockParamUnion
		for _, p := range m.Content {
			if r, ok := p.(cmf.ToolResult); ok {
				tr := &sdk.ToolResultBlockParam{ToolUseID: toolID(r.ToolCallID)}
				if text := content.ResultText(r); text != "" {
					tr.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: text}}}
				}
				if r.IsError {
					tr.IsError = sdk.Bool(true)
				}
				blocks = append(blocks, sdk.ContentBlockParamUnion{OfToolResult: tr})
			}
		}
		b.push(false, blocks)
	}
}

func userBlocks(m *cmf.Message) []sdk.ContentBlockParamUnion {
	var out []sdk.ContentBlockParamUnion
	for _, p := range m.Content {
		switch p := p.(type) {
		case cmf.Text:
			if p.Text != "" {
				out = append(out, sdk.NewTextBlock(p.Text))
			}
		case cmf.Image:
			if p.Type == cmf.SourceURL {
				out = append(out, sdk.NewImageBlock(sdk.URLImageSourceParam{URL: p.Data}))
			} else {
				out = append(out, sdk.NewImageBlockBase64(p.MediaType, p.Data))
			}
		case cmf.Document:
			var blk sdk.ContentBlockParamUnion
			switch {
			case p.Type == cmf.SourceURL:
				blk = sdk.NewDocumentBlock(sdk.URLPDFSourceParam{URL: p.Data})
			case p.MediaType == "application/pdf":
				blk = sdk.NewDocumentBlock(sdk.Base64PDFSourceParam{Data: p.Data})
			case strings.HasPrefix(p.MediaType, "text/"):
				blk = sdk.NewDocumentBlock(sdk.PlainTextSourceParam{Data: decodeBase64Text(p.Data)})
			default:
				out = append(out, sdk.NewTextBlock("[document: "+p.MediaType+"]"))
				continue
			}
			if p.Title != "" {
				blk.OfDocument.Title = sdk.String(p.Title)
			}
			out = append(out, blk)
		case cmf.Audio:
			out = append(out, sdk.NewTextBlock("[audio: "+content.MediaName(p.MediaSource)+"]"))
		case cmf.Video:
			out = append(out, sdk.NewTextBlock("[video: "+content.MediaName(p.MediaSource)+"]"))
		case cmf.Resource:
			if text, ok := content.ResourceText(p); ok {
				out = append(out, sdk.NewTextBlock(text))
			}
		}
	}
	return out
}

// assistantBlocks converts an assistant message. A provider value is sent
// back only to the model that produced it; anything else of it is left
// out: its reasoning (thinking, redacted thinking, server tool blocks)
// entirely, and for text, the cited blocks in favour of the plain text.
func (b *builder) assistantBlocks(m *cmf.Message) []sdk.ContentBlockParamUnion {
	var out []sdk.ContentBlockParamUnion
	for _, p := range m.Content {
		switch p := p.(type) {
		case cmf.Thinking:
			if p.Opaque.From(Provider, b.model) {
				out = append(out, sdk.NewThinkingBlock(p.Opaque.Data, p.Text))
			}
		case cmf.RedactedThinking:
			if !p.Opaque.From(Provider, b.model) {
				continue
			}
			if kept, ok := rawBlock(p.Opaque.Data); ok {
				out = append(out, kept)
			} else {
				out = append(out, sdk.NewRedactedThinkingBlock(p.Opaque.Data))
			}
		case cmf.Text:
			if p.Text == "" {
				continue
			}
			if p.Opaque.From(Provider, b.model) {
				if blocks, ok := textBlocks(p.Opaque.Data, p.Text); ok {
					out = append(out, blocks...)
					continue
				}
			}
			out = append(out, sdk.NewTextBlock(p.Text))
		case cmf.ToolCall:
			args := json.RawMessage(p.Arguments)
			if !json.Valid(args) || !strings.HasPrefix(strings.TrimSpace(string(args)), "{") {
				args = json.RawMessage("{}")
			}
			out = append(out, sdk.NewToolUseBlock(toolID(p.ToolCallID), args, p.Name))
		}
	}
	return out
}

// rawBlock is a kept server tool block (JSON object), sent as it came.
func rawBlock(data string) (sdk.ContentBlockParamUnion, bool) {
	if !strings.HasPrefix(data, "{") || !json.Valid([]byte(data)) {
		return sdk.ContentBlockParamUnion{}, false
	}
	return param.Override[sdk.ContentBlockParamUnion](json.RawMessage(data)), true
}

// textBlocks are the kept text blocks of a text part, when they still add
// up to its text (a policy may have rewritten it: then the text goes
// plain).
func textBlocks(data, text string) ([]sdk.ContentBlockParamUnion, bool) {
	var raws []json.RawMessage
	if json.Unmarshal([]byte(data), &raws) != nil || len(raws) == 0 {
		return nil, false
	}
	var sum strings.Builder
	out := make([]sdk.ContentBlockParamUnion, 0, len(raws))
	for _, raw := range raws {
		var tb struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &tb) != nil || tb.Type != "text" {
			return nil, false
		}
		if tb.Text == "" {
			continue
		}
		sum.WriteString(tb.Text)
		out = append(out, param.Override[sdk.ContentBlockParamUnion](raw))
	}
	return out, sum.String() == text && len(out) > 0
}

// continuesWithoutThinking reports whether the request answers the tool
// calls (or continues the paused turn) of an assistant turn that does not
// start with a thinking block.
func (b *builder) continuesWithoutThinking() bool {
	n := len(b.msgs)
	var turn *apiMessage
	switch {
	case n >= 1 && b.msgs[n-1].assistant:
		turn = &b.msgs[n-1] // a paused turn goes on
	case n >= 2 && b.msgs[n-2].assistant && len(b.msgs[n-1].blocks) > 0 && b.msgs[n-1].blocks[0].OfToolResult != nil:
		turn = &b.msgs[n-2]
	default:
		return false
	}
	first := turn.blocks[0]
	return first.OfThinking == nil && first.OfRedactedThinking == nil
}

// dropFinalThinking leaves thinking out of a final assistant turn, which a
// call without thinking may not carry.
func (b *builder) dropFinalThinking() {
	n := len(b.msgs)
	if n == 0 || !b.msgs[n-1].assistant {
		return
	}
	kept := b.msgs[n-1].blocks[:0]
	for _, blk := range b.msgs[n-1].blocks {
		if blk.OfThinking == nil && blk.OfRedactedThinking == nil {
			kept = append(kept, blk)
		}
	}
	b.msgs[n-1].blocks = kept
	if len(kept) == 0 {
		b.msgs = b.msgs[:n-1]
	}
}

// breakpoint marks the last History block that can carry cache_control
// (thinking and kept raw blocks cannot).
func (b *builder) breakpoint() {
	for mi := b.mark[0]; mi >= 0; mi-- {
		blocks := b.msgs[mi].blocks
		bi := len(blocks) - 1
		if mi == b.mark[0] {
			bi = b.mark[1]
		}
		for ; bi >= 0; bi-- {
			if blocks[bi].OfThinking != nil || blocks[bi].OfRedactedThinking != nil {
				continue
			}
			if cc := blocks[bi].GetCacheControl(); cc != nil {
				*cc = sdk.NewCacheControlEphemeralParam()
				return
			}
		}
	}
}

func tools(specs []agent.ToolSpec, webSearch int64) []sdk.ToolUnionParam {
	out := make([]sdk.ToolUnionParam, 0, len(specs)+1)
	for _, s := range specs {
		t := &sdk.ToolParam{Name: s.Name, InputSchema: inputSchema(s.Parameters)}
		if s.Description != "" {
			t.Description = sdk.String(s.Description)
		}
		out = append(out, sdk.ToolUnionParam{OfTool: t})
	}
	if webSearch > 0 {
		out = append(out, sdk.ToolUnionParam{OfWebSearchTool20250305: &sdk.WebSearchTool20250305Param{MaxUses: sdk.Int(webSearch)}})
	}
	return out
}

// inputSchema is a tool's JSON Schema as the API takes it: an object
// schema, sent byte for byte when it is one.
func inputSchema(raw json.RawMessage) sdk.ToolInputSchemaParam {
	var s map[string]any
	if json.Unmarshal(raw, &s) != nil || s == nil {
		s = map[string]any{}
	}
	if s["type"] == "object" {
		return param.Override[sdk.ToolInputSchemaParam](raw)
	}
	s["type"] = "object"
	fixed, _ := json.Marshal(s)
	return param.Override[sdk.ToolInputSchemaParam](json.RawMessage(fixed))
}

// toolID is a tool call id as the API accepts it (letters, digits, _ and
// -): ids made elsewhere are mapped the same way for the call and its
// result.
func toolID(id string) string {
	ok := id != ""
	for i := 0; ok && i < len(id); i++ {
		c := id[i]
		ok = c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	if ok {
		return id
	}
	if id == "" {
		return "call_"
	}
	var sb strings.Builder
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			sb.WriteByte(c)
		} else {
			sb.WriteByte('_')
		}
	}
	return sb.String()
}

// decodeBase64Text is a text document's content: its base64 decoded.
func decodeBase64Text(data string) string {
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return data
	}
	return string(b)
}
