package anthropic

import (
	"encoding/json"
	"strings"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	sdk "github.com/anthropics/anthropic-sdk-go/v2"
)

// decoder turns stream events into chunks.
//
// Chunks come out in content-block order even when the API streams blocks
// concurrently (a text block still open while a tool_use block streams):
// the deltas of a block behind the first open one are held until the
// blocks before it stop. Stored parts then keep the order of the message's
// blocks, which the API needs when they come back.
type decoder struct {
	model string
	yield func(agent.Chunk, error) bool

	blocks []*block // by index
	front  int      // the first block not yet stopped and flushed
	run    []json.RawMessage
	runTag bool // the text run needs its blocks kept (citations, several blocks)
	seen   map[string]bool

	answered   string // the model the message names
	stop       string
	usage      agent.Usage
	done       bool
	stopped    bool // the consumer stopped iterating
	startUsage sdk.Usage
}

// block is one content block as it streams.
type block struct {
	typ     string
	raw     string // content_block_start's block
	id      string
	text    strings.Builder // text; server tool input
	sig     string
	cites   []json.RawMessage
	deltas  int
	held    []agent.Chunk // chunks waiting for the blocks before to stop
	stopped bool
}

func (d *decoder) emit(c agent.Chunk) bool {
	if d.stopped {
		return false
	}
	if !d.yield(c, nil) {
		d.stopped = true
	}
	return !d.stopped
}

// put yields c for block i now, or holds it until the blocks before i
// have stopped.
func (d *decoder) put(i int, c agent.Chunk) bool {
	if i == d.front {
		return d.emit(c)
	}
	b := d.blocks[i]
	b.held = append(b.held, c)
	return true
}

func (d *decoder) opaque(id, data string) *cmf.Opaque {
	return &cmf.Opaque{Provider: Provider, Model: d.model, ID: id, Data: data}
}

// event handles one stream event; false stops the stream.
func (d *decoder) event(ev sdk.MessageStreamEventUnion) bool {
	switch ev.Type {
	case "message_start":
		d.answered = ev.Message.Model
		d.startUsage = ev.Message.Usage
		d.usage = usage(ev.Message.Usage.InputTokens, ev.Message.Usage.CacheCreationInputTokens,
			ev.Message.Usage.CacheReadInputTokens, ev.Message.Usage.OutputTokens, 0)
	case "content_block_start":
		i := int(ev.Index)
		if i != len(d.blocks) {
			return true // out of order or repeated: nothing to attach it to
		}
		cb := ev.ContentBlock
		b := &block{typ: cb.Type, raw: ev.JSON.ContentBlock.Raw(), id: cb.ID}
		d.blocks = append(d.blocks, b)
		switch cb.Type {
		case "text":
			if cb.Text != "" {
				b.text.WriteString(cb.Text)
				return d.put(i, agent.Chunk{Kind: agent.ChunkText, Delta: cb.Text})
			}
		case "thinking":
			b.sig = cb.Signature
			if cb.Thinking != "" {
				b.text.WriteString(cb.Thinking)
				return d.put(i, agent.Chunk{Kind: agent.ChunkThinking, Delta: cb.Thinking})
			}
		case "redacted_thinking":
			b.text.WriteString(cb.Data)
		case "tool_use":
			return d.put(i, agent.Chunk{Kind: agent.ChunkToolCall, ToolCallID: cb.ID, ToolName: cb.Name})
		}
	case "content_block_delta":
		i := int(ev.Index)
		if i < 0 || i >= len(d.blocks) || d.blocks[i].stopped {
			return true
		}
		b := d.blocks[i]
		dl := ev.Delta
		switch dl.Type {
		case "text_delta":
			if b.typ == "text" && dl.Text != "" {
				b.text.WriteString(dl.Text)
				return d.put(i, agent.Chunk{Kind: agent.ChunkText, Delta: dl.Text})
			}
		case "thinking_delta":
			if b.typ == "thinking" && dl.Thinking != "" {
				b.text.WriteString(dl.Thinking)
				return d.put(i, agent.Chunk{Kind: agent.ChunkThinking, Delta: dl.Thinking})
			}
		case "signature_delta":
			if b.typ == "thinking" {
				b.sig += dl.Signature
			}
		case "input_json_delta":
			switch b.typ {
			case "tool_use":
				b.deltas++
				if dl.PartialJSON != "" {
					return d.put(i, agent.Chunk{Kind: agent.ChunkToolCall, ToolCallID: b.id, Delta: dl.PartialJSON})
				}
			case "server_tool_use":
				b.deltas++
				b.text.WriteString(dl.PartialJSON)
			}
		case "citations_delta":
			if b.typ == "text" {
				raw := dl.JSON.Citation.Raw()
				if json.Valid([]byte(raw)) {
					b.cites = append(b.cites, json.RawMessage(raw))
				}
				if c := dl.Citation; c.Type == "web_search_result_location" {
					return d.source(i, c.URL, c.Title)
				}
			}
		}
	case "content_block_stop":
		i := int(ev.Index)
		if i < 0 || i >= len(d.blocks) || d.blocks[i].stopped {
			return true
		}
		d.blocks[i].stopped = true
		for d.front < len(d.blocks) && d.blocks[d.front].stopped {
			if !d.flush(d.front) {
				return false
			}
			d.front++
		}
	case "message_delta":
		if ev.Delta.StopReason != "" {
			d.stop = string(ev.Delta.StopReason)
		}
		u := ev.Usage
		in, cw, cr := u.InputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens
		if !u.JSON.InputTokens.Valid() {
			// Older answers repeat only output_tokens here.
			in, cw, cr = d.startUsage.InputTokens, d.startUsage.CacheCreationInputTokens, d.startUsage.CacheReadInputTokens
		}
		d.usage = usage(in, cw, cr, u.OutputTokens, u.OutputTokensDetails.ThinkingTokens)
	case "message_stop":
		// Blocks never stopped (a malformed stream) end here, in order.
		for ; d.front < len(d.blocks); d.front++ {
			if !d.flush(d.front) {
				return false
			}
		}
		d.done = true
	}
	return true
}

// flush yields what block i held and what its end yields.
func (d *decoder) flush(i int) bool {
	b := d.blocks[i]
	for _, c := range b.held {
		if !d.emit(c) {
			return false
		}
	}
	b.held = nil
	if b.typ != "text" {
		d.run, d.runTag = nil, false
	}
	switch b.typ {
	case "text":
		return d.endText(b)
	case "thinking":
		if b.sig == "" {
			return true // nothing to end the part with: the next chunk does
		}
		return d.emit(agent.Chunk{Kind: agent.ChunkThinking, Opaque: d.opaque("", b.sig)})
	case "redacted_thinking":
		if b.text.Len() == 0 {
			return true
		}
		return d.emit(agent.Chunk{Kind: agent.ChunkRedactedThinking, Opaque: d.opaque("", b.text.String())})
	case "tool_use":
		if b.deltas == 0 {
			// The input came whole with the start (not streamed).
			var cb struct {
				Input json.RawMessage `json:"input"`
			}
			if json.Unmarshal([]byte(b.raw), &cb) == nil && len(cb.Input) > 0 && string(cb.Input) != "{}" && string(cb.Input) != "null" {
				return d.emit(agent.Chunk{Kind: agent.ChunkToolCall, ToolCallID: b.id, Delta: string(cb.Input)})
			}
		}
		return true
	case "server_tool_use":
		return d.serverBlock(b, true)
	}
	if strings.HasSuffix(b.typ, "_tool_result") {
		return d.serverBlock(b, false)
	}
	return true // a block agentui does not know: not kept
}

// endText ends a text block. Consecutive text blocks form one text part;
// when the run has more than one block or a citation, the blocks
// themselves are kept with the part so that they go back as they came.
func (d *decoder) endText(b *block) bool {
	if b.text.Len() == 0 && len(b.cites) == 0 {
		return true
	}
	tb := map[string]any{"type": "text", "text": b.text.String()}
	if len(b.cites) > 0 {
		tb["citations"] = b.cites
		d.runTag = true
	}
	raw, _ := json.Marshal(tb)
	d.run = append(d.run, raw)
	if len(d.run) > 1 {
		d.runTag = true
	}
	if !d.runTag {
		return true
	}
	blocks, _ := json.Marshal(d.run)
	return d.emit(agent.Chunk{Kind: agent.ChunkText, Opaque: d.opaque("", string(blocks))})
}

// serverBlock keeps a server tool's block (its call, or its results) whole,
// in its place: it goes back to this model as it came. Web search results
// are also sources.
func (d *decoder) serverBlock(b *block, call bool) bool {
	var fields map[string]json.RawMessage
	if json.Unmarshal([]byte(b.raw), &fields) != nil {
		return true
	}
	id := b.id
	if call {
		input := strings.TrimSpace(b.text.String())
		if b.deltas == 0 {
			input = string(fields["input"])
		}
		if !json.Valid([]byte(input)) || !strings.HasPrefix(input, "{") {
			input = "{}"
		}
		fields["input"] = json.RawMessage(input)
	} else {
		_ = json.Unmarshal(fields["tool_use_id"], &id)
	}
	raw, err := json.Marshal(fields)
	if err != nil {
		return true
	}
	if !d.emit(agent.Chunk{Kind: agent.ChunkRedactedThinking, Opaque: d.opaque(id, string(raw))}) {
		return false
	}
	if b.typ == "web_search_tool_result" {
		var results []struct {
			Type  string `json:"type"`
			URL   string `json:"url"`
			Title string `json:"title"`
		}
		_ = json.Unmarshal(fields["content"], &results)
		for _, r := range results {
			if r.Type == "web_search_result" && !d.source(-1, r.URL, r.Title) {
				return false
			}
		}
	}
	return true
}

// source yields a source once per URL per call.
func (d *decoder) source(i int, url, title string) bool {
	if url == "" || d.seen[url] {
		return true
	}
	if d.seen == nil {
		d.seen = map[string]bool{}
	}
	d.seen[url] = true
	c := agent.Chunk{Kind: agent.ChunkSource, URL: url, Name: title}
	if i < 0 {
		return d.emit(c)
	}
	return d.put(i, c)
}

func (d *decoder) finish() agent.Chunk {
	return agent.Chunk{Kind: agent.ChunkFinish, StopReason: stopReason(d.stop), Usage: d.usage, Model: d.answered, Provider: Provider}
}

// usage follows the AI SDK's convention: input tokens are every input
// token billed (uncached, written to the cache, read from it), so that
// CachedInputTokens and CacheWriteTokens are parts of InputTokens.
func usage(in, cacheWrite, cacheRead, out, thinking int64) agent.Usage {
	total := in + cacheWrite + cacheRead
	return agent.Usage{
		InputTokens: total, OutputTokens: out, TotalTokens: total + out,
		ReasoningTokens: thinking, CachedInputTokens: cacheRead, CacheWriteTokens: cacheWrite,
	}
}

func stopReason(s string) cmf.StopReason {
	switch s {
	case "max_tokens", "model_context_window_exceeded":
		return cmf.StopMaxTokens
	case "stop_sequence":
		return cmf.StopSequence
	case "tool_use":
		return cmf.StopCall
	case "pause_turn":
		return cmf.StopPauseTurn
	case "refusal":
		return cmf.StopRefusal
	}
	return cmf.StopEnd
}
