package cmf

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Action is the semantic action a view represents.
type Action string

// The seven view actions.
const (
	ActionRead     Action = "read"
	ActionWrite    Action = "write"
	ActionExecute  Action = "execute"
	ActionInvoke   Action = "invoke"
	ActionSend     Action = "send"
	ActionReceive  Action = "receive"
	ActionGenerate Action = "generate"
)

// actions is package-level: it is read on every view, never rebuilt.
var actions = map[ContentType]Action{
	ContentText:             ActionSend,
	ContentThinking:         ActionGenerate,
	ContentRedactedThinking: ActionGenerate,
	ContentToolCall:         ActionExecute,
	ContentToolResult:       ActionReceive,
	ContentResource:         ActionRead,
	ContentResourceRef:      ActionRead,
	ContentPromptRequest:    ActionInvoke,
	ContentPromptResult:     ActionReceive,
	ContentImage:            ActionSend,
	ContentVideo:            ActionSend,
	ContentAudio:            ActionSend,
	ContentDocument:         ActionSend,
}

// sensitiveHeaders never leave the process in a serialized view.
var sensitiveHeaders = map[string]bool{"authorization": true, "cookie": true, "x-api-key": true}

// View is a read-only projection of one content part with the context of
// its message, the surface policy engines evaluate (CMF v2 §4). Everything a
// view computes (content, URI, name, arguments) is computed once, when the
// view is made. Accessors return copies: a view never hands out a map or
// slice that aliases the message.
//
// Context accessors are gated by the capabilities the view was made with;
// without the capability they return the zero value.
type View struct {
	part    Part
	role    Role
	ext     *Extensions
	caps    Capabilities
	index   int
	content string
	hasText bool
	uri     string
	name    string
	args    map[string]json.RawMessage
	headers map[string]string // lower-cased names; nil without read_headers
}

// Views returns one view per content part, in order. It fails on a nil
// part: a part the policy engine cannot see must not slip through.
func (m *Message) Views(caps Capabilities) ([]*View, error) {
	views := make([]*View, len(m.Content))
	for i, p := range m.Content {
		if p == nil {
			return nil, invalid("content["+strconv.Itoa(i)+"]", "nil part")
		}
		views[i] = newView(m, i, p, caps)
	}
	return views, nil
}

func newView(m *Message, i int, p Part, caps Capabilities) *View {
	v := &View{part: p, role: m.Role, ext: m.Extensions, caps: caps, index: i}
	switch p := p.(type) {
	case Text:
		v.content, v.hasText = p.Text, true
	case Thinking:
		v.content, v.hasText = p.Text, true
	case ToolCall:
		v.content, v.hasText = string(p.Arguments), true
		v.uri = "tool://" + p.Namespace + "/" + p.Name
		v.name = p.Name
		v.args = parseArgs(p.Arguments)
	case ToolResult:
		v.content, v.hasText = string(p.Content), true
		v.uri = "tool_result://" + p.ToolName
		v.name = p.ToolName
	case Resource:
		if p.Content != nil {
			v.content, v.hasText = *p.Content, true
		}
		v.uri, v.name = p.URI, p.Name
	case ResourceRef:
		v.uri, v.name = p.URI, p.Name
	case PromptRequest:
		v.content, v.hasText = string(p.Arguments), true
		v.uri = "prompt://" + p.ServerID + "/" + p.Name
		v.name = p.Name
		v.args = parseArgs(p.Arguments)
	case PromptResult:
		if p.Content != nil {
			v.content, v.hasText = *p.Content, true
		}
		v.uri = "prompt_result://" + p.PromptName
		v.name = p.PromptName
	case Document:
		v.name = p.Title
		v.uri = mediaURI(p.MediaSource)
	case Image, Video, Audio:
		src, _ := Media(p)
		v.uri = mediaURI(src)
	}
	if caps.Has(CapReadHeaders) && m.Extensions != nil && m.Extensions.HTTP != nil {
		v.headers = make(map[string]string, len(m.Extensions.HTTP.Headers))
		for k, val := range m.Extensions.HTTP.Headers {
			v.headers[strings.ToLower(k)] = val
		}
	}
	return v
}

func mediaURI(s MediaSource) string {
	if s.Type == SourceURL {
		return s.Data
	}
	return ""
}

func parseArgs(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// Kind is the content type of the viewed part.
func (v *View) Kind() ContentType { return v.part.ContentType() }

// Part is the viewed part. Parts are values; changing the returned copy does
// not change the message.
func (v *View) Part() Part { return v.part }

// Index is the part's position in its message.
func (v *View) Index() int { return v.index }

// Role is the role of the part's message.
func (v *View) Role() Role { return v.role }

// Content is scannable text: the text of text and thinking parts, the JSON
// arguments of tool calls and prompt requests, the JSON content of tool
// results, the embedded text of resources and prompt results. ok is false
// for parts with no scannable text (media, references).
func (v *View) Content() (content string, ok bool) { return v.content, v.hasText }

// HasContent reports whether the view has scannable text.
func (v *View) HasContent() bool { return v.hasText }

// URI is the part's identity: tool://namespace/name for tool calls (an empty
// namespace gives tool:///name), tool_result://name, prompt://server/name,
// prompt_result://name, a resource's own URI, or a media URL. Empty when
// the part has none.
func (v *View) URI() string { return v.uri }

// Name is the tool, prompt or resource name, or a document's title.
func (v *View) Name() string { return v.name }

// Action is the part's semantic action.
func (v *View) Action() Action { return actions[v.Kind()] }

// Args returns a copy of the arguments of a tool call or prompt request
// (nil for other kinds).
func (v *View) Args() map[string]json.RawMessage {
	if v.args == nil {
		return nil
	}
	out := make(map[string]json.RawMessage, len(v.args))
	for k, a := range v.args {
		out[k] = slices.Clone(a)
	}
	return out
}

// GetArg returns one argument's raw JSON (a copy).
func (v *View) GetArg(name string) (json.RawMessage, bool) {
	a, ok := v.args[name]
	return slices.Clone(a), ok
}

// HasArg reports whether an argument is present.
func (v *View) HasArg(name string) bool {
	_, ok := v.args[name]
	return ok
}

// MimeType is the MIME type of resources and media.
func (v *View) MimeType() string {
	switch p := v.part.(type) {
	case Resource:
		return p.MimeType
	}
	if src, ok := Media(v.part); ok {
		return src.MediaType
	}
	return ""
}

// SizeBytes is the content size: a resource's declared size or the length
// of its content or blob, the decoded length of base64 media, or the length
// of the scannable text.
func (v *View) SizeBytes() (int64, bool) {
	if r, ok := v.part.(Resource); ok {
		switch {
		case r.SizeBytes != nil:
			return *r.SizeBytes, true
		case r.Blob != nil:
			return int64(len(r.Blob)), true
		}
	}
	if src, ok := Media(v.part); ok {
		if src.Type == SourceBase64 {
			return int64(base64.StdEncoding.DecodedLen(len(src.Data))), true
		}
		return 0, false
	}
	if v.hasText {
		return int64(len(v.content)), true
	}
	return 0, false
}

// Properties returns the kind-specific properties of CMF v2 §4.6 in a new
// map.
func (v *View) Properties() map[string]any {
	props := map[string]any{}
	switch p := v.part.(type) {
	case Resource:
		props["resource_type"] = string(p.ResourceType)
		props["version"] = p.Version
		if p.Annotations != nil {
			a := make(map[string]json.RawMessage, len(p.Annotations))
			for k, val := range p.Annotations {
				a[k] = slices.Clone(val)
			}
			props["annotations"] = a
		}
	case ToolCall:
		props["namespace"] = p.Namespace
		props["tool_id"] = p.ToolCallID
	case ToolResult:
		props["is_error"] = p.IsError
		props["tool_name"] = p.ToolName
	case PromptRequest:
		props["server_id"] = p.ServerID
	case PromptResult:
		props["is_error"] = p.IsError
		props["message_count"] = len(p.Messages)
	}
	return props
}

// Property returns one kind-specific property.
func (v *View) Property(name string) (any, bool) {
	val, ok := v.Properties()[name]
	return val, ok
}

// IsPre reports whether the part is input or a request: tool calls, prompt
// requests and resource references always; text, thinking and media unless
// they come from the assistant or from a tool.
func (v *View) IsPre() bool {
	switch v.Kind() {
	case ContentToolCall, ContentPromptRequest, ContentResourceRef:
		return true
	case ContentToolResult, ContentPromptResult, ContentResource:
		return false
	}
	return v.role != RoleAssistant && v.role != RoleTool
}

// IsPost reports whether the part is output or a response.
func (v *View) IsPost() bool { return !v.IsPre() }

// IsTool reports whether the part is a tool call or result.
func (v *View) IsTool() bool { k := v.Kind(); return k == ContentToolCall || k == ContentToolResult }

// IsPrompt reports whether the part is a prompt request or result.
func (v *View) IsPrompt() bool {
	k := v.Kind()
	return k == ContentPromptRequest || k == ContentPromptResult
}

// IsResource reports whether the part is a resource or a reference to one.
func (v *View) IsResource() bool {
	k := v.Kind()
	return k == ContentResource || k == ContentResourceRef
}

// IsText reports whether the part is text or thinking.
func (v *View) IsText() bool { k := v.Kind(); return k == ContentText || k == ContentThinking }

// IsMedia reports whether the part is an image, video, audio or document.
func (v *View) IsMedia() bool { _, ok := Media(v.part); return ok }

// MatchesURIPattern matches the view's URI against a glob where "*" matches
// within one path segment and "**" across segments. Every other character is
// literal: "tool://my.namespace/tool" does not match "tool://myXnamespace/tool".
func (v *View) MatchesURIPattern(pattern string) bool {
	return v.uri != "" && matchGlob(pattern, v.uri)
}

// Environment is the request's execution environment (no capability needed).
func (v *View) Environment() string {
	if v.ext == nil || v.ext.Request == nil {
		return ""
	}
	return v.ext.Request.Environment
}

// RequestID is the request correlation id (no capability needed).
func (v *View) RequestID() string {
	if v.ext == nil || v.ext.Request == nil {
		return ""
	}
	return v.ext.Request.RequestID
}

func (v *View) security() *SecurityExtension {
	if v.ext == nil {
		return nil
	}
	return v.ext.Security
}

func (v *View) subject() *SubjectExtension {
	if s := v.security(); s != nil {
		return s.Subject
	}
	return nil
}

// Subject is a copy of the authenticated identity (needs [CapReadSubject]).
// Its roles, permissions, teams and claims are included only with
// [CapReadRoles], [CapReadPermissions], [CapReadTeams] and [CapReadClaims].
func (v *View) Subject() *SubjectExtension {
	s := v.subject()
	if s == nil || !v.caps.Has(CapReadSubject) {
		return nil
	}
	c := s.clone()
	if !v.caps.Has(CapReadRoles) {
		c.Roles = nil
	}
	if !v.caps.Has(CapReadPermissions) {
		c.Permissions = nil
	}
	if !v.caps.Has(CapReadTeams) {
		c.Teams = nil
	}
	if !v.caps.Has(CapReadClaims) {
		c.Claims = nil
	}
	return c
}

// Roles is a copy of the subject's roles (needs [CapReadRoles]).
func (v *View) Roles() []string {
	if s := v.subject(); s != nil && v.caps.Has(CapReadRoles) {
		return slices.Clone(s.Roles)
	}
	return nil
}

// Permissions is a copy of the subject's permissions (needs [CapReadPermissions]).
func (v *View) Permissions() []string {
	if s := v.subject(); s != nil && v.caps.Has(CapReadPermissions) {
		return slices.Clone(s.Permissions)
	}
	return nil
}

// Teams is a copy of the subject's teams (needs [CapReadTeams]).
func (v *View) Teams() []string {
	if s := v.subject(); s != nil && v.caps.Has(CapReadTeams) {
		return slices.Clone(s.Teams)
	}
	return nil
}

// Labels is a copy of the security labels (needs [CapReadLabels]).
func (v *View) Labels() []string {
	if s := v.security(); s != nil && v.caps.Has(CapReadLabels) {
		return slices.Clone(s.Labels)
	}
	return nil
}

// Classification is the data classification (needs [CapReadLabels]).
func (v *View) Classification() string {
	if s := v.security(); s != nil && v.caps.Has(CapReadLabels) {
		return s.Classification
	}
	return ""
}

// Headers is a copy of the HTTP headers with lower-cased names (needs
// [CapReadHeaders]).
func (v *View) Headers() map[string]string { return maps.Clone(v.headers) }

// HasRole reports whether the subject has role (false without [CapReadRoles]).
func (v *View) HasRole(role string) bool {
	s := v.subject()
	return s != nil && v.caps.Has(CapReadRoles) && slices.Contains(s.Roles, role)
}

// HasPermission reports whether the subject has perm (false without
// [CapReadPermissions]).
func (v *View) HasPermission(perm string) bool {
	s := v.subject()
	return s != nil && v.caps.Has(CapReadPermissions) && slices.Contains(s.Permissions, perm)
}

// HasLabel reports whether a security label is present (false without
// [CapReadLabels]).
func (v *View) HasLabel(label string) bool {
	s := v.security()
	return s != nil && v.caps.Has(CapReadLabels) && slices.Contains(s.Labels, label)
}

// HasHeader reports whether an HTTP header is present, ignoring case (false
// without [CapReadHeaders]).
func (v *View) HasHeader(name string) bool {
	_, ok := v.headers[strings.ToLower(name)]
	return ok
}

// GetHeader returns an HTTP header's value, ignoring case ("" without
// [CapReadHeaders]).
func (v *View) GetHeader(name string) string { return v.headers[strings.ToLower(name)] }

func (v *View) agent() *AgentExtension {
	if v.ext == nil || !v.caps.Has(CapReadAgent) {
		return nil
	}
	return v.ext.Agent
}

// AgentInput is the original user intent (needs [CapReadAgent]).
func (v *View) AgentInput() string {
	if a := v.agent(); a != nil {
		return a.Input
	}
	return ""
}

// SessionID is the session id (needs [CapReadAgent]).
func (v *View) SessionID() string {
	if a := v.agent(); a != nil {
		return a.SessionID
	}
	return ""
}

// ConversationID is the conversation id (needs [CapReadAgent]).
func (v *View) ConversationID() string {
	if a := v.agent(); a != nil {
		return a.ConversationID
	}
	return ""
}

// Turn is the position in the conversation (needs [CapReadAgent]).
func (v *View) Turn() (int, bool) {
	if a := v.agent(); a != nil && a.Turn != nil {
		return *a.Turn, true
	}
	return 0, false
}

// AgentID is the producing agent's id (needs [CapReadAgent]).
func (v *View) AgentID() string {
	if a := v.agent(); a != nil {
		return a.AgentID
	}
	return ""
}

// ParentAgentID is the spawning agent's id (needs [CapReadAgent]).
func (v *View) ParentAgentID() string {
	if a := v.agent(); a != nil {
		return a.ParentAgentID
	}
	return ""
}

// Object is a copy of the access profile registered for this view's name
// (needs [CapReadObjects]).
func (v *View) Object() *ObjectSecurityProfile {
	s := v.security()
	if s == nil || !v.caps.Has(CapReadObjects) {
		return nil
	}
	o, ok := s.Objects[v.name]
	if !ok {
		return nil
	}
	o = o.clone()
	return &o
}

// DataPolicy is a copy of the data policy registered for this view's name
// (needs [CapReadData]).
func (v *View) DataPolicy() *DataPolicy {
	s := v.security()
	if s == nil || !v.caps.Has(CapReadData) {
		return nil
	}
	d, ok := s.Data[v.name]
	if !ok {
		return nil
	}
	d = d.clone()
	return &d
}

// MapOptions chooses what [View.ToMap] includes.
type MapOptions struct {
	IncludeContent bool // the scannable content
	IncludeContext bool // the capability-gated extensions block
}

// ToMap serializes the view to a JSON-compatible map. Authorization, Cookie
// and X-API-Key headers are never included.
func (v *View) ToMap(opts MapOptions) map[string]any {
	m := map[string]any{
		"kind":       string(v.Kind()),
		"role":       string(v.role),
		"action":     string(v.Action()),
		"is_pre":     v.IsPre(),
		"is_post":    v.IsPost(),
		"properties": v.Properties(),
	}
	if v.uri != "" {
		m["uri"] = v.uri
	}
	if v.name != "" {
		m["name"] = v.name
	}
	if mt := v.MimeType(); mt != "" {
		m["mime_type"] = mt
	}
	if n, ok := v.SizeBytes(); ok {
		m["size_bytes"] = n
	}
	if v.args != nil {
		m["args"] = v.Args()
	}
	if opts.IncludeContent && v.hasText {
		m["content"] = v.content
	}
	if opts.IncludeContext {
		m["extensions"] = v.contextMap()
	}
	return m
}

// ToOPAInput wraps the full view (content and context) in an Open Policy
// Agent input envelope: {"input": {...}}.
func (v *View) ToOPAInput() map[string]any {
	return map[string]any{"input": v.ToMap(MapOptions{IncludeContent: true, IncludeContext: true})}
}

// contextMap assembles the extensions a consumer with v.caps may see,
// mirroring the extension hierarchy.
func (v *View) contextMap() map[string]any {
	out := map[string]any{}
	if v.ext != nil && v.ext.Request != nil {
		out["request"] = toJSONValue(v.ext.Request)
	}
	if a := v.agent(); a != nil {
		out["agent"] = toJSONValue(a)
	}
	if v.headers != nil {
		h := make(map[string]string, len(v.headers))
		for k, val := range v.headers {
			if !sensitiveHeaders[k] {
				h[k] = val
			}
		}
		out["http"] = map[string]any{"headers": h}
	}
	sec := map[string]any{}
	if s := v.security(); s != nil && v.caps.Has(CapReadLabels) {
		sec["labels"] = slices.Clone(s.Labels)
		if s.Classification != "" {
			sec["classification"] = s.Classification
		}
	}
	if s := v.Subject(); s != nil {
		sec["subject"] = toJSONValue(s)
	}
	if o := v.Object(); o != nil {
		sec["object"] = toJSONValue(o)
	}
	if d := v.DataPolicy(); d != nil {
		sec["data_policy"] = toJSONValue(d)
	}
	if len(sec) > 0 {
		out["security"] = sec
	}
	return out
}

// toJSONValue turns a struct into its generic JSON form (maps, slices,
// strings, float64s), the shape policy engines consume.
func toJSONValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}
