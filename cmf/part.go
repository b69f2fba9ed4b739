package cmf

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Part is one content part of a message. The set of implementations is
// closed: the thirteen types of this package. Each knows its own
// [ContentType], so the "content_type" discriminator written to JSON is
// derived from the Go type and can never disagree with the payload.
type Part interface {
	// ContentType is the part's JSON discriminator.
	ContentType() ContentType
	// Validate checks the part's fields; the error names the bad field.
	Validate() error
	isPart()
}

// Opaque is a value a model provider returned with a part and needs back,
// unchanged, when the part is sent to it again: Anthropic's thinking
// signature or redacted thinking, Gemini's thought signature, an OpenAI
// Responses reasoning item (its id and encrypted content). It is tagged with
// the provider and model that produced it because it is valid only there:
// a model replays it byte-exact to its own provider and model, and drops it
// for any other. It is only trusted when it comes from the server's own
// history (or a value the server sealed); agentui drops any a client sends.
type Opaque struct {
	// Provider names the API that produced the value ("anthropic",
	// "openai.responses", "gemini"); "" for a value of unknown origin
	// (stored before values were tagged), which no model replays.
	Provider string `json:"provider,omitempty"`
	// Model is the model that produced the value.
	Model string `json:"model,omitempty"`
	// ID is the provider's id for the item the value belongs to, when it
	// has one (a Responses reasoning item's id).
	ID string `json:"id,omitempty"`
	// Data is the value itself, exactly as the provider sent it.
	Data string `json:"data,omitempty"`
}

// From reports whether the value was produced by provider's model: only
// then may it be sent back.
func (o *Opaque) From(provider, model string) bool {
	return o != nil && o.Provider != "" && o.Provider == provider && o.Model == model
}

// Text is plain text. Opaque, when set, is a provider's value that came
// with the text (a Gemini thought signature).
type Text struct {
	Text   string  `json:"text"`
	Opaque *Opaque `json:"opaque,omitempty"`
}

// Thinking is chain-of-thought or reasoning output (or, for a model that
// keeps its reasoning hidden, a summary of it). Opaque is the provider's
// value for the reasoning (Anthropic's thinking signature, an OpenAI
// reasoning item), which must be echoed back unmodified on the next call to
// the same provider and model.
//
// Stored messages from before Opaque was introduced carry a bare
// "signature"; it decodes as an Opaque of unknown origin.
type Thinking struct {
	Text   string  `json:"text"`
	Opaque *Opaque `json:"opaque,omitempty"`
}

// RedactedThinking is reasoning the provider encrypted before sending it
// (Anthropic's redacted_thinking): nothing to show, but the provider needs
// it back, in its place, on the next call to the same model. Opaque holds
// it.
type RedactedThinking struct {
	Opaque Opaque `json:"opaque"`
}

// ToolCall is a request to invoke a tool. Arguments is a JSON object kept
// as raw bytes so that numbers and key order survive untouched. Opaque,
// when set, is a provider's value that came with the call (a Gemini
// thought signature).
type ToolCall struct {
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	Namespace  string          `json:"namespace,omitempty"`
	Opaque     *Opaque         `json:"opaque,omitempty"`
}

// ToolResult is the result of a tool execution. Content is any JSON value.
type ToolResult struct {
	ToolCallID string          `json:"tool_call_id"`
	ToolName   string          `json:"tool_name"`
	Content    json.RawMessage `json:"content"`
	IsError    bool            `json:"is_error,omitempty"`
}

// Resource is an embedded resource (MCP). It carries Content (text) or Blob
// (bytes), never both.
type Resource struct {
	ResourceRequestID string                     `json:"resource_request_id"`
	URI               string                     `json:"uri"`
	Name              string                     `json:"name,omitempty"`
	Description       string                     `json:"description,omitempty"`
	ResourceType      ResourceType               `json:"resource_type"`
	Content           *string                    `json:"content,omitempty"`
	Blob              []byte                     `json:"blob,omitempty"`
	MimeType          string                     `json:"mime_type,omitempty"`
	SizeBytes         *int64                     `json:"size_bytes,omitempty"`
	Annotations       map[string]json.RawMessage `json:"annotations,omitempty"`
	Version           string                     `json:"version,omitempty"`
}

// ResourceRef is a lightweight reference to a resource, optionally to a
// range of it (lines or byte offsets) or to a selector within it.
type ResourceRef struct {
	ResourceRequestID string       `json:"resource_request_id"`
	URI               string       `json:"uri"`
	Name              string       `json:"name,omitempty"`
	ResourceType      ResourceType `json:"resource_type"`
	RangeStart        *int64       `json:"range_start,omitempty"`
	RangeEnd          *int64       `json:"range_end,omitempty"`
	Selector          string       `json:"selector,omitempty"`
}

// PromptRequest invokes a prompt template (MCP). Arguments is a JSON object.
type PromptRequest struct {
	PromptRequestID string          `json:"prompt_request_id"`
	Name            string          `json:"name"`
	Arguments       json.RawMessage `json:"arguments"`
	ServerID        string          `json:"server_id,omitempty"`
}

// PromptResult is a rendered prompt template: messages, or a single text.
type PromptResult struct {
	PromptRequestID string    `json:"prompt_request_id"`
	PromptName      string    `json:"prompt_name"`
	Messages        []Message `json:"messages,omitempty"`
	Content         *string   `json:"content,omitempty"`
	IsError         bool      `json:"is_error,omitempty"`
	ErrorMessage    string    `json:"error_message,omitempty"`
}

// MediaSource locates media bytes: a URL, or the bytes themselves as base64.
type MediaSource struct {
	Type      SourceType `json:"type"`
	Data      string     `json:"data"`
	MediaType string     `json:"media_type,omitempty"`
}

// Image is image content.
type Image struct {
	MediaSource
}

// Video is video content.
type Video struct {
	MediaSource
	DurationMs *int64 `json:"duration_ms,omitempty"`
}

// Audio is audio content.
type Audio struct {
	MediaSource
	DurationMs *int64 `json:"duration_ms,omitempty"`
}

// Document is document content (PDF, Word, …).
type Document struct {
	MediaSource
	Title string `json:"title,omitempty"`
}

// ContentType implementations: the discriminator comes from the type.

func (Text) ContentType() ContentType     { return ContentText }
func (Thinking) ContentType() ContentType { return ContentThinking }
func (RedactedThinking) ContentType() ContentType {
	return ContentRedactedThinking
}
func (ToolCall) ContentType() ContentType      { return ContentToolCall }
func (ToolResult) ContentType() ContentType    { return ContentToolResult }
func (Resource) ContentType() ContentType      { return ContentResource }
func (ResourceRef) ContentType() ContentType   { return ContentResourceRef }
func (PromptRequest) ContentType() ContentType { return ContentPromptRequest }
func (PromptResult) ContentType() ContentType  { return ContentPromptResult }
func (Image) ContentType() ContentType         { return ContentImage }
func (Video) ContentType() ContentType         { return ContentVideo }
func (Audio) ContentType() ContentType         { return ContentAudio }
func (Document) ContentType() ContentType      { return ContentDocument }

func (Text) isPart()             {}
func (Thinking) isPart()         {}
func (RedactedThinking) isPart() {}
func (ToolCall) isPart()         {}
func (ToolResult) isPart()       {}
func (Resource) isPart()         {}
func (ResourceRef) isPart()      {}
func (PromptRequest) isPart()    {}
func (PromptResult) isPart()     {}
func (Image) isPart()            {}
func (Video) isPart()            {}
func (Audio) isPart()            {}
func (Document) isPart()         {}

// Media returns the media source of an image, video, audio or document part.
func Media(p Part) (MediaSource, bool) {
	switch p := p.(type) {
	case Image:
		return p.MediaSource, true
	case Video:
		return p.MediaSource, true
	case Audio:
		return p.MediaSource, true
	case Document:
		return p.MediaSource, true
	}
	return MediaSource{}, false
}

// The *JSON types have the fields of their part but none of its methods, so
// encoding/json can (un)marshal them without recursing into MarshalJSON.
type (
	textJSON          Text
	thinkingJSON      Thinking
	redactedJSON      RedactedThinking
	toolCallJSON      ToolCall
	toolResultJSON    ToolResult
	resourceJSON      Resource
	resourceRefJSON   ResourceRef
	promptRequestJSON PromptRequest
	promptResultJSON  PromptResult
	imageJSON         Image
	videoJSON         Video
	audioJSON         Audio
	documentJSON      Document
)

// MarshalJSON writes the part with its "content_type" discriminator.
func (p Text) MarshalJSON() ([]byte, error) { return marshalTagged(ContentText, textJSON(p)) }

// MarshalJSON writes the part with its "content_type" discriminator.
func (p Thinking) MarshalJSON() ([]byte, error) {
	return marshalTagged(ContentThinking, thinkingJSON(p))
}

// MarshalJSON writes the part with its "content_type" discriminator.
func (p RedactedThinking) MarshalJSON() ([]byte, error) {
	return marshalTagged(ContentRedactedThinking, redactedJSON(p))
}

// MarshalJSON writes the part with its "content_type" discriminator.
func (p ToolCall) MarshalJSON() ([]byte, error) {
	return marshalTagged(ContentToolCall, toolCallJSON(p))
}

// MarshalJSON writes the part with its "content_type" discriminator.
func (p ToolResult) MarshalJSON() ([]byte, error) {
	return marshalTagged(ContentToolResult, toolResultJSON(p))
}

// MarshalJSON writes the part with its "content_type" discriminator.
func (p Resource) MarshalJSON() ([]byte, error) {
	return marshalTagged(ContentResource, resourceJSON(p))
}

// MarshalJSON writes the part with its "content_type" discriminator.
func (p ResourceRef) MarshalJSON() ([]byte, error) {
	return marshalTagged(ContentResourceRef, resourceRefJSON(p))
}

// MarshalJSON writes the part with its "content_type" discriminator.
func (p PromptRequest) MarshalJSON() ([]byte, error) {
	return marshalTagged(ContentPromptRequest, promptRequestJSON(p))
}

// MarshalJSON writes the part with its "content_type" discriminator.
func (p PromptResult) MarshalJSON() ([]byte, error) {
	return marshalTagged(ContentPromptResult, promptResultJSON(p))
}

// MarshalJSON writes the part with its "content_type" discriminator.
func (p Image) MarshalJSON() ([]byte, error) { return marshalTagged(ContentImage, imageJSON(p)) }

// MarshalJSON writes the part with its "content_type" discriminator.
func (p Video) MarshalJSON() ([]byte, error) { return marshalTagged(ContentVideo, videoJSON(p)) }

// MarshalJSON writes the part with its "content_type" discriminator.
func (p Audio) MarshalJSON() ([]byte, error) { return marshalTagged(ContentAudio, audioJSON(p)) }

// MarshalJSON writes the part with its "content_type" discriminator.
func (p Document) MarshalJSON() ([]byte, error) {
	return marshalTagged(ContentDocument, documentJSON(p))
}

// marshalTagged encodes v (a struct) and puts the discriminator first.
func marshalTagged(ct ContentType, v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(body)+len(ct)+20)
	out = append(out, `{"content_type":"`...)
	out = append(out, ct...)
	out = append(out, '"')
	if len(body) > 2 { // body is "{...}": splice its fields after the tag
		out = append(out, ',')
	}
	return append(out, body[1:]...), nil
}

// ErrUnknownContentType is returned (wrapped) when a part's content_type is
// not one of the thirteen CMF types. Unknown parts are never skipped or turned
// into text: a policy engine must not miss a part it cannot see.
var ErrUnknownContentType = errors.New("cmf: unknown content type")

// UnmarshalPart decodes one content part, choosing its type from the
// "content_type" field, and validates it.
func UnmarshalPart(b []byte) (Part, error) {
	var w partWire
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("cmf: content part: %w", err)
	}
	p, err := w.part()
	if err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// partWire has the fields of every part type, so that a whole message
// decodes in one pass. part builds the part its content_type names from
// the fields that type has and ignores the rest, as decoding straight into
// that type would. Fields whose meaning differs between types ("content",
// "messages", "blob") stay raw until the type is known.
type partWire struct {
	ContentType       *string                    `json:"content_type"`
	Text              string                     `json:"text"`
	Signature         string                     `json:"signature"` // Thinking's, before Opaque
	Opaque            *Opaque                    `json:"opaque"`
	ToolCallID        string                     `json:"tool_call_id"`
	Name              string                     `json:"name"`
	Arguments         json.RawMessage            `json:"arguments"`
	Namespace         string                     `json:"namespace"`
	ToolName          string                     `json:"tool_name"`
	Content           json.RawMessage            `json:"content"`
	IsError           bool                       `json:"is_error"`
	ResourceRequestID string                     `json:"resource_request_id"`
	URI               string                     `json:"uri"`
	Description       string                     `json:"description"`
	ResourceType      string                     `json:"resource_type"`
	Blob              json.RawMessage            `json:"blob"`
	MimeType          string                     `json:"mime_type"`
	SizeBytes         *int64                     `json:"size_bytes"`
	Annotations       map[string]json.RawMessage `json:"annotations"`
	Version           string                     `json:"version"`
	RangeStart        *int64                     `json:"range_start"`
	RangeEnd          *int64                     `json:"range_end"`
	Selector          string                     `json:"selector"`
	PromptRequestID   string                     `json:"prompt_request_id"`
	ServerID          string                     `json:"server_id"`
	PromptName        string                     `json:"prompt_name"`
	Messages          json.RawMessage            `json:"messages"`
	ErrorMessage      string                     `json:"error_message"`
	Type              string                     `json:"type"`
	Data              string                     `json:"data"`
	MediaType         string                     `json:"media_type"`
	DurationMs        *int64                     `json:"duration_ms"`
	Title             string                     `json:"title"`
}

func (w *partWire) part() (Part, error) {
	if w.ContentType == nil {
		return nil, errors.New("cmf: content part has no content_type")
	}
	switch ct := ContentType(*w.ContentType); ct {
	case ContentText:
		return Text{Text: w.Text, Opaque: w.Opaque}, nil
	case ContentThinking:
		o := w.Opaque
		if o == nil && w.Signature != "" {
			o = &Opaque{Data: w.Signature}
		}
		return Thinking{Text: w.Text, Opaque: o}, nil
	case ContentRedactedThinking:
		var o Opaque
		if w.Opaque != nil {
			o = *w.Opaque
		}
		return RedactedThinking{Opaque: o}, nil
	case ContentToolCall:
		return ToolCall{ToolCallID: w.ToolCallID, Name: w.Name, Arguments: compactJSON(w.Arguments), Namespace: w.Namespace, Opaque: w.Opaque}, nil
	case ContentToolResult:
		return ToolResult{ToolCallID: w.ToolCallID, ToolName: w.ToolName, Content: compactJSON(w.Content), IsError: w.IsError}, nil
	case ContentResource:
		rt, err := resourceType(w.ResourceType)
		if err != nil {
			return nil, err
		}
		content, err := optionalString(w.Content, "resource content")
		if err != nil {
			return nil, err
		}
		var blob []byte
		if len(w.Blob) > 0 && string(w.Blob) != "null" {
			if err := json.Unmarshal(w.Blob, &blob); err != nil {
				return nil, fmt.Errorf("cmf: resource blob: %w", err)
			}
		}
		return Resource{ResourceRequestID: w.ResourceRequestID, URI: w.URI, Name: w.Name, Description: w.Description,
			ResourceType: rt, Content: content, Blob: nilIfEmpty(blob), MimeType: w.MimeType, SizeBytes: w.SizeBytes,
			Annotations: compactMap(w.Annotations), Version: w.Version}, nil
	case ContentResourceRef:
		rt, err := resourceType(w.ResourceType)
		if err != nil {
			return nil, err
		}
		return ResourceRef{ResourceRequestID: w.ResourceRequestID, URI: w.URI, Name: w.Name, ResourceType: rt,
			RangeStart: w.RangeStart, RangeEnd: w.RangeEnd, Selector: w.Selector}, nil
	case ContentPromptRequest:
		return PromptRequest{PromptRequestID: w.PromptRequestID, Name: w.Name, Arguments: compactJSON(w.Arguments), ServerID: w.ServerID}, nil
	case ContentPromptResult:
		content, err := optionalString(w.Content, "prompt result content")
		if err != nil {
			return nil, err
		}
		var msgs []Message
		if len(w.Messages) > 0 && string(w.Messages) != "null" {
			if err := json.Unmarshal(w.Messages, &msgs); err != nil {
				return nil, fmt.Errorf("cmf: prompt result messages: %w", err)
			}
		}
		return PromptResult{PromptRequestID: w.PromptRequestID, PromptName: w.PromptName, Messages: nilIfEmpty(msgs),
			Content: content, IsError: w.IsError, ErrorMessage: w.ErrorMessage}, nil
	case ContentImage, ContentVideo, ContentAudio, ContentDocument:
		if w.Type != "" && !SourceType(w.Type).Valid() {
			return nil, fmt.Errorf("cmf: unknown source type %q", w.Type)
		}
		src := MediaSource{Type: SourceType(w.Type), Data: w.Data, MediaType: w.MediaType}
		switch ct {
		case ContentImage:
			return Image{MediaSource: src}, nil
		case ContentVideo:
			return Video{MediaSource: src, DurationMs: w.DurationMs}, nil
		case ContentAudio:
			return Audio{MediaSource: src, DurationMs: w.DurationMs}, nil
		}
		return Document{MediaSource: src, Title: w.Title}, nil
	default:
		return nil, fmt.Errorf("%w %q", ErrUnknownContentType, string(ct))
	}
}

func resourceType(s string) (ResourceType, error) {
	if s != "" && !ResourceType(s).Valid() {
		return "", fmt.Errorf("cmf: unknown resource type %q", s)
	}
	return ResourceType(s), nil
}

// optionalString reads a field that is a JSON string or absent (null).
func optionalString(raw json.RawMessage, what string) (*string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("cmf: %s must be a string", what)
	}
	return &s, nil
}
