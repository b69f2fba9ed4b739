package gemini

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"google.golang.org/genai"
)

// decoder turns streamed responses into chunks.
//
// Gemini streams a text or a thought as fragments, each its own part,
// and may sign any one of them (Gemini 3 signs an empty text part at the
// end of a reply; 2.5 the first part after its thoughts). The loop joins
// consecutive fragments into one CMF part, so the Opaque of a signed
// fragment records where in that part the fragment lay (its span, in
// bytes): on replay the part is split back around it, and the signature
// goes back on the fragment it came on, never merged with unsigned text.
type decoder struct {
	model   string // the configured model id, for the Opaque tags
	open    openPart
	openLen int // bytes of the open part so far
	calls   int
	sources map[string]bool
	reason  genai.FinishReason
	blocked genai.BlockedReason
	usage   *genai.GenerateContentResponseUsageMetadata
	version string
}

type openPart uint8

const (
	openNone openPart = iota
	openText
	openThinking
)

func (d *decoder) response(r *genai.GenerateContentResponse, yield func(agent.Chunk, error) bool) bool {
	if r == nil {
		return true
	}
	if r.ModelVersion != "" {
		d.version = r.ModelVersion
	}
	if r.UsageMetadata != nil {
		d.usage = r.UsageMetadata
	}
	if pf := r.PromptFeedback; pf != nil && pf.BlockReason != "" && pf.BlockReason != genai.BlockedReasonUnspecified {
		d.blocked = pf.BlockReason
	}
	if len(r.Candidates) == 0 || r.Candidates[0] == nil {
		return true
	}
	c := r.Candidates[0]
	if c.Content != nil {
		for _, p := range c.Content.Parts {
			if p != nil && !d.part(p, yield) {
				return false
			}
		}
	}
	if g := c.GroundingMetadata; g != nil {
		for _, gc := range g.GroundingChunks {
			if gc == nil || gc.Web == nil || gc.Web.URI == "" || d.sources[gc.Web.URI] {
				continue
			}
			if d.sources == nil {
				d.sources = map[string]bool{}
			}
			d.sources[gc.Web.URI] = true
			if !yield(agent.Chunk{Kind: agent.ChunkSource, URL: gc.Web.URI, Name: gc.Web.Title}, nil) {
				return false
			}
		}
	}
	if c.FinishReason != "" && c.FinishReason != genai.FinishReasonUnspecified {
		d.reason = c.FinishReason
	}
	return true
}

// part yields one streamed part. Parts agentui has no place for (images
// the model generates, code execution) are left out.
func (d *decoder) part(p *genai.Part, yield func(agent.Chunk, error) bool) bool {
	switch {
	case p.FunctionCall != nil:
		fc := p.FunctionCall
		id := callID(fc.ID)
		args := "{}"
		if len(fc.Args) > 0 {
			if b, err := json.Marshal(fc.Args); err == nil {
				args = string(b)
			}
		}
		d.open, d.calls = openNone, d.calls+1
		return yield(agent.Chunk{Kind: agent.ChunkToolCall, ToolCallID: id, ToolName: fc.Name, Delta: args, Opaque: d.opaque(p.ThoughtSignature, "")}, nil)
	case p.Text == "" && len(p.ThoughtSignature) == 0:
		return true
	case p.Thought:
		if d.open != openThinking {
			d.open, d.openLen = openThinking, 0
		}
		o := d.opaque(p.ThoughtSignature, span(d.openLen, d.openLen+len(p.Text)))
		d.openLen += len(p.Text)
		if o != nil {
			d.open = openNone // a thinking chunk with an Opaque ends the part
		}
		return yield(agent.Chunk{Kind: agent.ChunkThinking, Delta: p.Text, Opaque: o}, nil)
	case p.FunctionResponse == nil && p.InlineData == nil && p.FileData == nil && p.ExecutableCode == nil && p.CodeExecutionResult == nil:
		if d.open != openText {
			d.open, d.openLen = openText, 0
		}
		o := d.opaque(p.ThoughtSignature, span(d.openLen, d.openLen+len(p.Text)))
		d.openLen += len(p.Text)
		return yield(agent.Chunk{Kind: agent.ChunkText, Delta: p.Text, Opaque: o}, nil)
	}
	return true
}

func (d *decoder) opaque(sig []byte, id string) *cmf.Opaque {
	if len(sig) == 0 {
		return nil
	}
	return &cmf.Opaque{Provider: Provider, Model: d.model, ID: id, Data: base64.StdEncoding.EncodeToString(sig)}
}

func (d *decoder) finish() (agent.Chunk, error) {
	fin := agent.Chunk{Kind: agent.ChunkFinish, Model: d.version, Provider: otelProvider, Usage: usage(d.usage)}
	switch {
	case d.blocked != "":
		fin.StopReason = cmf.StopRefusal
		return fin, nil
	case d.reason == "":
		return agent.Chunk{}, ErrIncomplete
	}
	stop, err := stopReason(d.reason, d.calls > 0)
	if err != nil {
		return agent.Chunk{}, err
	}
	fin.StopReason = stop
	return fin, nil
}

// usage converts Gemini's counts. The prompt count includes cached
// tokens; the prompt a built-in tool (search) added is input too, so
// input plus output is the total the API bills.
func usage(u *genai.GenerateContentResponseUsageMetadata) agent.Usage {
	if u == nil {
		return agent.Usage{}
	}
	out := agent.Usage{
		InputTokens:       int64(u.PromptTokenCount) + int64(u.ToolUsePromptTokenCount),
		OutputTokens:      int64(u.CandidatesTokenCount) + int64(u.ThoughtsTokenCount),
		ReasoningTokens:   int64(u.ThoughtsTokenCount),
		CachedInputTokens: int64(u.CachedContentTokenCount),
		TotalTokens:       int64(u.TotalTokenCount),
	}
	if out.TotalTokens == 0 {
		out.TotalTokens = out.InputTokens + out.OutputTokens
	}
	return out
}

// span names where a signed fragment lay in its CMF part: "start:end",
// byte offsets.
func span(start, end int) string {
	return strconv.Itoa(start) + ":" + strconv.Itoa(end)
}

// parseSpan reads a span back, for a part of n bytes; ok is false for
// anything else (a value stored by another version, or altered).
func parseSpan(id string, text string) (start, end int, ok bool) {
	a, b, found := strings.Cut(id, ":")
	if !found {
		return 0, 0, false
	}
	start, err1 := strconv.Atoi(a)
	end, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || start < 0 || start > end || end > len(text) {
		return 0, 0, false
	}
	if !onRuneBoundary(text, start) || !onRuneBoundary(text, end) {
		return 0, 0, false
	}
	return start, end, true
}

func onRuneBoundary(s string, i int) bool {
	return i == len(s) || i == 0 || s[i]&0xC0 != 0x80
}
