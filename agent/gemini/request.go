package gemini

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/internal/content"
	"github.com/agentui/agentui/cmf"
	"google.golang.org/genai"
)

// skipSignature is the value Google documents for a function call whose
// signature is not available, such as one another model made: the API
// then skips validating it. It is sent as the bytes of this text, as
// Google's own ADK sends it.
var skipSignature = []byte("skip_thought_signature_validator")

// request converts an agent request into the SDK's contents and config.
//
// What goes back to the model, and how:
//
//   - Parts this model produced carry their thought signatures, on the
//     same part, byte-exact (a text or thought part is split back around
//     the fragment that was signed).
//   - A step this model produced (it carries one of its signatures) goes
//     back whole, its thought summaries included, in order.
//   - Parts another provider or model produced go without any value of
//     theirs; their reasoning is left out, their text and calls stay.
//   - The first function call of each step of the current turn must carry
//     a signature (Gemini 3 refuses the request otherwise): one that has
//     none, because another model made it, carries skipSignature.
//   - Tool results become function responses, all of a step's in one
//     content, in the order of its calls.
//   - A call and its response carry the id Gemini gave the call, or none
//     when it gave none (callid.go).
func (m *Model) request(req *agent.Request) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	b := builder{model: m.model, contents: make([]*genai.Content, 0, req.Len())}
	for msg := range req.All() {
		if err := b.message(msg); err != nil {
			return nil, nil, err
		}
	}
	b.flushResults()
	signCurrentTurn(b.contents)
	config := m.config(req)
	if len(b.system) > 0 {
		config.SystemInstruction = &genai.Content{Parts: b.system}
	}
	if b.emptySigned {
		config.HTTPOptions = &genai.HTTPOptions{ExtrasRequestProvider: restoreEmptyText}
	}
	return b.contents, config, nil
}

// restoreEmptyText puts back the empty "text" of a signed empty part.
// Gemini signs an empty text part at the end of a reply, and the part
// must go back as it came; but the SDK omits an empty text when it
// encodes a part, which leaves a part with a signature and no data, a
// part the API refuses. Only text parts can be empty here, so a part with
// a signature and nothing else is one.
func restoreEmptyText(body map[string]any) map[string]any {
	for _, content := range objects(body["contents"]) {
		for _, part := range objects(content["parts"]) {
			if _, signed := part["thoughtSignature"]; !signed {
				continue
			}
			data := false
			for k := range part {
				data = data || k != "thoughtSignature" && k != "thought"
			}
			if !data {
				part["text"] = ""
			}
		}
	}
	return body
}

// objects returns the JSON objects of a list in the SDK's request map,
// which holds lists as []any or []map[string]any depending on the field.
func objects(v any) []map[string]any {
	switch v := v.(type) {
	case []map[string]any:
		return v
	case []any:
		out := make([]map[string]any, 0, len(v))
		for _, e := range v {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}

func (m *Model) config(req *agent.Request) *genai.GenerateContentConfig {
	c := &genai.GenerateContentConfig{}
	if m.cfg.includeThoughts || m.cfg.budget != nil || m.cfg.level != "" {
		c.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: m.cfg.includeThoughts, ThinkingBudget: m.cfg.budget, ThinkingLevel: m.cfg.level}
	}
	if len(req.Tools) > 0 {
		decls := make([]*genai.FunctionDeclaration, 0, len(req.Tools))
		for _, t := range req.Tools {
			decls = append(decls, &genai.FunctionDeclaration{Name: t.Name, Description: t.Description, ParametersJsonSchema: schema(t.Parameters)})
		}
		c.Tools = append(c.Tools, &genai.Tool{FunctionDeclarations: decls})
	}
	if m.cfg.search {
		c.Tools = append(c.Tools, &genai.Tool{GoogleSearch: &genai.GoogleSearch{}})
	}
	if st := req.Settings; st != nil {
		if st.Temperature != nil {
			c.Temperature = genai.Ptr(float32(*st.Temperature))
		}
		if st.TopP != nil {
			c.TopP = genai.Ptr(float32(*st.TopP))
		}
		if st.MaxOutputTokens != nil {
			c.MaxOutputTokens = int32(min(max(*st.MaxOutputTokens, 0), math.MaxInt32))
		}
		if st.Seed != nil {
			c.Seed = genai.Ptr(int32(*st.Seed))
		}
	}
	return c
}

// schema is a tool's parameters as the API's parametersJsonSchema: JSON
// Schema as given (the older "parameters" field takes only an OpenAPI
// subset, without $ref, $defs, additionalProperties or type lists, which
// schemas generated from Go types use). No schema is an object of
// anything.
func schema(params json.RawMessage) any {
	if len(params) == 0 || !json.Valid(params) || string(params) == "null" {
		return json.RawMessage(`{"type":"object"}`)
	}
	return params
}

// sentCall is a call as agentui knows it (id) and its name, for the
// function response that answers it.
type sentCall struct {
	id, name string
}

type builder struct {
	model    string
	contents []*genai.Content
	system   []*genai.Part
	calls    []sentCall       // the last model content's calls
	results  []cmf.ToolResult // tool results waiting for their content
	// emptySigned: a signed part with empty text is sent, which the
	// SDK's encoding needs help with (restoreEmptyText).
	emptySigned bool
}

func (b *builder) message(m *cmf.Message) error {
	if m.Role != cmf.RoleTool {
		b.flushResults()
	}
	switch m.Role {
	case cmf.RoleSystem, cmf.RoleDeveloper:
		if t := m.Text(); t != "" {
			b.system = append(b.system, &genai.Part{Text: t})
		}
	case cmf.RoleUser:
		parts, err := userParts(m)
		if err != nil {
			return err
		}
		if len(parts) > 0 {
			b.contents = append(b.contents, &genai.Content{Role: genai.RoleUser, Parts: parts})
		}
	case cmf.RoleAssistant:
		b.assistant(m)
	case cmf.RoleTool:
		for _, p := range m.Content {
			if r, ok := p.(cmf.ToolResult); ok {
				b.results = append(b.results, r)
			}
		}
	}
	return nil
}

func (b *builder) assistant(m *cmf.Message) {
	parts := make([]*genai.Part, 0, len(m.Content))
	// Assistant messages in a row are one model turn (a client's thread
	// may hold a step's reasoning in a message of its own, as AG-UI's
	// reasoning messages do): they go as one content, its calls counted
	// together, since the API wants a call turn right after a user turn.
	last := len(b.contents) - 1
	merge := last >= 0 && b.contents[last].Role == genai.RoleModel
	if !merge {
		b.calls = b.calls[:0]
	}
	own := b.ownStep(m)
	for _, p := range m.Content {
		switch p := p.(type) {
		case cmf.Thinking:
			switch {
			case p.Opaque.From(Provider, b.model):
				parts = appendSigned(parts, p.Text, true, p.Opaque, &b.emptySigned)
			case own && p.Opaque == nil && p.Text != "":
				parts = append(parts, &genai.Part{Text: p.Text, Thought: true})
			}
		case cmf.Text:
			if p.Opaque.From(Provider, b.model) {
				parts = appendSigned(parts, p.Text, false, p.Opaque, &b.emptySigned)
			} else if p.Text != "" {
				parts = append(parts, &genai.Part{Text: p.Text})
			}
		case cmf.ToolCall:
			var args map[string]any
			if json.Unmarshal(p.Arguments, &args) != nil || args == nil {
				args = map[string]any{}
			}
			part := &genai.Part{FunctionCall: &genai.FunctionCall{ID: geminiID(p.ToolCallID), Name: p.Name, Args: args}}
			if p.Opaque.From(Provider, b.model) {
				part.ThoughtSignature = decodeSignature(p.Opaque.Data)
			}
			b.calls = append(b.calls, sentCall{id: p.ToolCallID, name: p.Name})
			parts = append(parts, part)
		}
	}
	switch {
	case len(parts) == 0:
	case merge:
		b.contents[last].Parts = append(b.contents[last].Parts, parts...)
	default:
		b.contents = append(b.contents, &genai.Content{Role: genai.RoleModel, Parts: parts})
	}
}

// signCurrentTurn gives the first function call of each step of the
// current turn the skip value when it carries no signature, as the API
// defines that turn: the contents after the last user content that is not
// only function responses.
func signCurrentTurn(contents []*genai.Content) {
	turn := -1
	for i, c := range contents {
		if c.Role != genai.RoleUser {
			continue
		}
		for _, p := range c.Parts {
			if p.FunctionResponse == nil {
				turn = i
				break
			}
		}
	}
	for _, c := range contents[turn+1:] {
		if c.Role != genai.RoleModel {
			continue
		}
		for _, p := range c.Parts {
			if p.FunctionCall != nil {
				if len(p.ThoughtSignature) == 0 {
					p.ThoughtSignature = skipSignature
				}
				break
			}
		}
	}
}

// ownStep reports whether this model produced the step: whether it
// carries one of this model's signatures (Gemini 3 signs every step). Its
// unsigned thought summaries are then this model's too, and go back with
// it, as the SDK's own chat history sends them; another model's
// reasoning never does.
func (b *builder) ownStep(m *cmf.Message) bool {
	for _, p := range m.Content {
		var o *cmf.Opaque
		switch p := p.(type) {
		case cmf.Thinking:
			o = p.Opaque
		case cmf.Text:
			o = p.Opaque
		case cmf.ToolCall:
			o = p.Opaque
		}
		if o.From(Provider, b.model) {
			return true
		}
	}
	return false
}

// appendSigned appends a text or thought part that carries this model's
// signature, split back into the fragments it streamed as: unsigned text
// before the signed fragment, the signed fragment, unsigned text after.
func appendSigned(parts []*genai.Part, text string, thought bool, o *cmf.Opaque, emptySigned *bool) []*genai.Part {
	sig := decodeSignature(o.Data)
	start, end, ok := parseSpan(o.ID, text)
	if !ok {
		start, end = 0, len(text)
	}
	if start > 0 {
		parts = append(parts, &genai.Part{Text: text[:start], Thought: thought})
	}
	parts = append(parts, &genai.Part{Text: text[start:end], Thought: thought, ThoughtSignature: sig})
	*emptySigned = *emptySigned || start == end
	if end < len(text) {
		parts = append(parts, &genai.Part{Text: text[end:], Thought: thought})
	}
	return parts
}

// decodeSignature turns a stored signature back into its bytes. What this
// package stored is standard base64; anything else is sent as it is
// rather than dropped, and the API says whether it is valid.
func decodeSignature(s string) []byte {
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b
	}
	return []byte(s)
}

// flushResults sends the tool results collected so far as one user
// content of function responses, in the order of the calls they answer.
func (b *builder) flushResults() {
	if len(b.results) == 0 {
		return
	}
	parts := make([]*genai.Part, 0, len(b.results))
	used := make([]bool, len(b.results))
	for _, c := range b.calls {
		for i, r := range b.results {
			if !used[i] && r.ToolCallID == c.id {
				used[i] = true
				parts = append(parts, functionResponse(r, c.name))
				break
			}
		}
	}
	for i, r := range b.results {
		if !used[i] {
			parts = append(parts, functionResponse(r, r.ToolName))
		}
	}
	b.contents = append(b.contents, &genai.Content{Role: genai.RoleUser, Parts: parts})
	b.results = b.results[:0]
}

// functionResponse is a tool result as the API takes it: an object with
// the result under "output", or the error under "error", and the id of
// the call it answers as Gemini gave it (none for a call that had none).
func functionResponse(r cmf.ToolResult, name string) *genai.Part {
	if name == "" {
		name = r.ToolName
	}
	var v any = string(r.Content)
	if json.Unmarshal(r.Content, &v) != nil {
		v = string(r.Content)
	}
	key := "output"
	if r.IsError {
		key = "error"
	}
	return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: geminiID(r.ToolCallID), Name: name, Response: map[string]any{key: v}}}
}

func userParts(m *cmf.Message) ([]*genai.Part, error) {
	parts := make([]*genai.Part, 0, len(m.Content))
	for _, p := range m.Content {
		switch p := p.(type) {
		case cmf.Text:
			if p.Text != "" {
				parts = append(parts, &genai.Part{Text: p.Text})
			}
		case cmf.Image, cmf.Audio, cmf.Video, cmf.Document:
			src, _ := cmf.Media(p)
			part, err := mediaPart(src)
			if err != nil {
				return nil, err
			}
			parts = append(parts, part)
		case cmf.Resource:
			switch {
			case p.Content != nil:
				text, _ := content.ResourceText(p)
				parts = append(parts, &genai.Part{Text: text})
			case len(p.Blob) > 0:
				mt := p.MimeType
				if mt == "" {
					mt = http.DetectContentType(p.Blob)
				}
				parts = append(parts, &genai.Part{InlineData: &genai.Blob{MIMEType: mt, Data: p.Blob}})
			}
		}
	}
	return parts, nil
}

// ErrBadMedia is returned for media whose base64 data does not decode.
var ErrBadMedia = errors.New("gemini: a media part's base64 data is invalid")

// mediaPart sends bytes inline and a URL as fileData, which the API
// fetches itself (public or signed HTTPS URLs, Files API and YouTube
// URLs; older models take only the last two, and refuse the request). A
// data: URL is sent inline.
func mediaPart(src cmf.MediaSource) (*genai.Part, error) {
	data, mt := src.Data, src.MediaType
	if src.Type == cmf.SourceURL {
		rest, ok := strings.CutPrefix(data, "data:")
		if !ok {
			if mt == "" {
				if u, err := url.Parse(data); err == nil {
					mt = mime.TypeByExtension(path.Ext(u.Path))
				}
			}
			return &genai.Part{FileData: &genai.FileData{FileURI: data, MIMEType: mt}}, nil
		}
		meta, payload, ok := strings.Cut(rest, ",")
		if !ok || !strings.HasSuffix(meta, ";base64") {
			return nil, ErrBadMedia
		}
		if mt == "" {
			mt = strings.TrimSuffix(meta, ";base64")
		}
		data = payload
	}
	raw, err := decodeBase64(data)
	if err != nil {
		return nil, ErrBadMedia
	}
	if mt == "" {
		mt = http.DetectContentType(raw)
	}
	return &genai.Part{InlineData: &genai.Blob{MIMEType: mt, Data: raw}}, nil
}

func decodeBase64(s string) ([]byte, error) {
	var err error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		var b []byte
		if b, err = enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, err
}
