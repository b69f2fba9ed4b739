package gemini

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
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
	usage   *wireUsage
	version string
}

// wireResponse is what this package reads of a streamed
// GenerateContentResponse: encoding/json skips the rest without
// allocating for it.
type wireResponse struct {
	Candidates     []*wireCandidate `json:"candidates"`
	PromptFeedback *struct {
		BlockReason genai.BlockedReason `json:"blockReason"`
	} `json:"promptFeedback"`
	UsageMetadata *wireUsage      `json:"usageMetadata"`
	ModelVersion  string          `json:"modelVersion"`
	Error         *genai.APIError `json:"error"`
}

type wireCandidate struct {
	Content *struct {
		Parts []*wirePart `json:"parts"`
	} `json:"content"`
	FinishReason      genai.FinishReason `json:"finishReason"`
	GroundingMetadata *struct {
		GroundingChunks []*struct {
			Web *struct {
				URI   string `json:"uri"`
				Title string `json:"title"`
			} `json:"web"`
		} `json:"groundingChunks"`
	} `json:"groundingMetadata"`
}

type wirePart struct {
	Text             string `json:"text"`
	Thought          bool   `json:"thought"`
	ThoughtSignature []byte `json:"thoughtSignature"`
	FunctionCall     *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	// Parts agentui has no place for: only whether one is there counts.
	FunctionResponse    present `json:"functionResponse"`
	InlineData          present `json:"inlineData"`
	FileData            present `json:"fileData"`
	ExecutableCode      present `json:"executableCode"`
	CodeExecutionResult present `json:"codeExecutionResult"`
}

// present records whether a field held anything but null, without
// keeping it (an image the model made can be megabytes).
type present bool

func (p *present) UnmarshalJSON(b []byte) error {
	*p = string(b) != "null"
	return nil
}

// other says whether the part holds something other than text, a thought
// or a call.
func (p *wirePart) other() bool {
	return bool(p.FunctionResponse || p.InlineData || p.FileData || p.ExecutableCode || p.CodeExecutionResult)
}

type wireUsage struct {
	PromptTokenCount        int32 `json:"promptTokenCount"`
	CachedContentTokenCount int32 `json:"cachedContentTokenCount"`
	CandidatesTokenCount    int32 `json:"candidatesTokenCount"`
	ThoughtsTokenCount      int32 `json:"thoughtsTokenCount"`
	ToolUsePromptTokenCount int32 `json:"toolUsePromptTokenCount"`
	TotalTokenCount         int32 `json:"totalTokenCount"`
}

// maxEvent bounds one streamed event, as the SDK bounds it (256 MiB): a
// reply is streamed whole, an inline image included.
const maxEvent = 256 << 20

// read decodes a streamGenerateContent body (SSE: "data: <response>"
// events) and yields its chunks. It returns false when it yielded an
// error or the consumer stopped, true when the body ended.
func (d *decoder) read(ctx context.Context, body io.Reader, yield func(agent.Chunk, error) bool) bool {
	fail := func(err error) bool {
		yield(agent.Chunk{}, err)
		return false
	}
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 16<<10), maxEvent)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		field, data, _ := bytes.Cut(line, []byte(":"))
		event := string(field) == "data"
		if !event {
			data = line // an error body, or nothing this package can read
		}
		var r wireResponse
		switch err := json.Unmarshal(data, &r); {
		case err != nil:
			return fail(ErrMalformed)
		case r.Error != nil:
			return fail(apiError(r.Error))
		case !event:
			return fail(ErrMalformed)
		}
		if !d.response(&r, yield) {
			return false
		}
	}
	if err := sc.Err(); err != nil {
		return fail(streamError(ctx, err))
	}
	return true
}

type openPart uint8

const (
	openNone openPart = iota
	openText
	openThinking
)

// response yields one streamed response's chunks. It returns false when
// the consumer stopped or the response is one no API sends (a null
// candidate or part: ErrMalformed).
func (d *decoder) response(r *wireResponse, yield func(agent.Chunk, error) bool) bool {
	if r.ModelVersion != "" {
		d.version = r.ModelVersion
	}
	if r.UsageMetadata != nil {
		d.usage = r.UsageMetadata
	}
	if pf := r.PromptFeedback; pf != nil && pf.BlockReason != "" && pf.BlockReason != genai.BlockedReasonUnspecified {
		d.blocked = pf.BlockReason
	}
	if len(r.Candidates) == 0 {
		return true
	}
	c := r.Candidates[0]
	if c == nil {
		yield(agent.Chunk{}, ErrMalformed)
		return false
	}
	if c.Content != nil {
		for _, p := range c.Content.Parts {
			if p == nil {
				yield(agent.Chunk{}, ErrMalformed)
				return false
			}
			if !d.part(p, yield) {
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
func (d *decoder) part(p *wirePart, yield func(agent.Chunk, error) bool) bool {
	switch {
	case p.FunctionCall != nil:
		fc := p.FunctionCall
		id := callID(fc.ID)
		args, ok := callArgs(fc.Args)
		if !ok {
			yield(agent.Chunk{}, ErrMalformed)
			return false
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
	case !p.other():
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

// callArgs is a function call's arguments as the loop takes them: a JSON
// object, compact; none is the empty object. Anything else is no
// arguments Gemini sends.
func callArgs(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "{}", true
	}
	if raw[0] != '{' {
		return "", false
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return "", false
	}
	return b.String(), true
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
func usage(u *wireUsage) agent.Usage {
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
