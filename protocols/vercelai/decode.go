package vercelai

import (
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/ids"
	"github.com/agentui/agentui/internal/wire"
)

// Request is the body DefaultChatTransport POSTs. Other fields (the
// transport's custom body) are ignored, but for tools.
type Request struct {
	ID        string      `json:"id"`
	Messages  []UIMessage `json:"messages"`
	Trigger   string      `json:"trigger"`
	MessageID string      `json:"messageId"`
	// Message is the AI SDK's send-only-the-new-message form (a transport
	// whose prepareSendMessagesRequest returns {id, message}): the server
	// holds what came before. A request has Messages or Message.
	Message *UIMessage `json:"message"`
	// WholeBranch says Messages is everything the client shows, so a lone
	// user message is the start of the client's branch: with history, the
	// stored turns go (an edit of the first message under a new id, as
	// assistant-ui sends it). Without it, a lone message continues the
	// stored chat (a client that did not load it).
	WholeBranch bool `json:"wholeBranch"`
	// Tools are tools the page declares and executes, by name: what
	// assistant-ui's AssistantChatTransport sends (frontend tools), like
	// AG-UI's tools. The model may call them; the client answers.
	Tools map[string]ClientTool `json:"tools"`
	// Model is the model the user picked, among those the server offers
	// (the transport's body: {model}); "" is the server's default.
	Model string `json:"model"`
	// Busy says what a message sent while the chat's reply is being
	// produced asks for ("steer", "queue" or "interrupt"; see wire.Busy): the
	// body of sendMessage's options.
	Busy string `json:"busy"`
}

// ClientTool is one tool a page declares in Request.Tools. Parameters is
// its input's JSON Schema (inputSchema, the AI SDK's own name, is read
// too).
type ClientTool struct {
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// Triggers.
const (
	TriggerSubmit     = "submit-message"
	TriggerRegenerate = "regenerate-message"
)

// Decode reads a useChat request into a Turn. It is strict about structure
// (a chat id, a non-empty message list, known roles and triggers, boolean
// approvals) and tolerant where the SDK evolves (unknown fields and part
// types are skipped).
//
// Unmarshalling and reading are separate functions, so that the JSON
// decoder's recursion runs under a small frame: the whole of a streaming
// request's stack, decode included, then fits the 8 KiB a goroutine's
// stack starts at here, where it would grow to 16 KiB and stay there for
// as long as the stream lasts.
func (p *Protocol) Decode(_ *http.Request, body []byte) (*wire.Turn, error) {
	req, err := unmarshal(body)
	if err != nil {
		return nil, err
	}
	return p.read(req, body, sent(req.Messages))
}

// DecodeTail is Decode for a handler that keeps the history
// ([wire.TailDecoder]): of the client's messages it decodes the last
// one, and of the one before it only the id (the turn's ParentID). What
// came before is not read, nor checked: that handler ignores it.
func (p *Protocol) DecodeTail(_ *http.Request, body []byte) (*wire.Turn, error) {
	req, sn, err := unmarshalTail(body)
	if err != nil {
		return nil, err
	}
	return p.read(req, body, sn)
}

func unmarshal(body []byte) (*Request, error) {
	req := new(Request)
	if err := json.Unmarshal(body, req); err != nil {
		return nil, decodeError(err)
	}
	return req, nil
}

// tailRequest is a Request whose messages are left undecoded (its
// Messages field hides the Request's).
type tailRequest struct {
	Request
	Messages []json.RawMessage `json:"messages"`
}

// unmarshalTail unmarshals a request but for its messages, and decodes
// the last of them.
func unmarshalTail(body []byte) (*Request, seen, error) {
	var tr tailRequest
	if err := json.Unmarshal(body, &tr); err != nil {
		return nil, seen{}, decodeError(err)
	}
	req, n := &tr.Request, len(tr.Messages)
	sn := seen{count: n}
	if tr.Messages != nil {
		req.Messages = make([]UIMessage, min(n, 1))
	}
	if n > 0 {
		if err := json.Unmarshal(tr.Messages[n-1], &req.Messages[0]); err != nil {
			return nil, seen{}, decodeError(err)
		}
	}
	if n > 1 {
		var prior struct {
			ID   string `json:"id"`
			Role string `json:"role"`
		}
		if err := json.Unmarshal(tr.Messages[n-2], &prior); err != nil {
			return nil, seen{}, decodeError(err)
		}
		if prior.Role != "system" {
			sn.prior = prior.ID
		}
	}
	return req, sn, nil
}

// decodeError is the 400 for a body that does not unmarshal.
func decodeError(err error) error {
	if errors.Is(err, errApprovedNotBool) {
		return wire.BadRequest(errApprovedNotBool.Error())
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return wire.BadRequest("request body is not valid JSON")
	}
	return wire.BadRequest("malformed request: " + jsonFieldError(err))
}

// seen is what a request's messages array held: how many messages, and
// the id of the one before the last (none when that is a system message:
// the client's setup, not a message of the chat). Request.Messages holds them all, or
// (DecodeTail) the last.
type seen struct {
	count int
	prior string
}

// sent is seen for a request whose messages are all decoded.
func sent(msgs []UIMessage) seen {
	s := seen{count: len(msgs)}
	if len(msgs) > 1 && msgs[len(msgs)-2].Role != "system" {
		s.prior = msgs[len(msgs)-2].ID
	}
	return s
}

// read checks an unmarshalled request and makes its Turn.
//
//go:noinline
func (p *Protocol) read(req *Request, body []byte, sn seen) (*wire.Turn, error) {
	if req.ID == "" {
		return nil, wire.BadRequest(`missing chat "id"`)
	}
	if err := checkIDs(req, sn); err != nil {
		return nil, err
	}
	onlyNew := req.Message != nil
	switch {
	case onlyNew && req.Messages != nil:
		return nil, wire.BadRequest(`send either "messages" or "message", not both`)
	case onlyNew:
		req.Messages, sn = []UIMessage{*req.Message}, seen{count: 1}
	case len(req.Messages) == 0:
		return nil, wire.BadRequest(`"messages" must be a non-empty array`)
	}
	if req.Trigger != "" && req.Trigger != TriggerSubmit && req.Trigger != TriggerRegenerate {
		return nil, wire.BadRequest(`unknown "trigger": ` + strconv.Quote(req.Trigger))
	}
	skipped := sn.count - len(req.Messages) // not decoded (DecodeTail)
	for i, m := range req.Messages {
		i += skipped
		switch m.Role {
		case "system", "user", "assistant":
		default:
			return nil, wire.BadRequest("messages[" + strconv.Itoa(i) + "]: unknown role " + strconv.Quote(m.Role))
		}
		if m.Parts == nil && !onlyNew && sdk4Message(body, i) {
			return nil, wire.BadRequest("messages[" + strconv.Itoa(i) + `] has "content" and no "parts": that is the AI SDK 4 message format; agentui speaks the UI messages of AI SDK 5 and later`)
		}
	}
	busy, err := wire.ParseBusy(req.Busy)
	if err != nil {
		return nil, err
	}
	turn := &wire.Turn{ChatID: req.ID, RunID: ids.New(), Intent: wire.Submit, Model: req.Model, Busy: busy}
	for _, name := range slices.Sorted(maps.Keys(req.Tools)) {
		if name == "" {
			return nil, wire.BadRequest("a tool has no name")
		}
		t := req.Tools[name]
		params := t.Parameters
		if len(params) == 0 || string(params) == "null" {
			params = t.InputSchema
		}
		if string(params) == "null" {
			params = nil
		}
		turn.ClientTools = append(turn.ClientTools, agent.ToolSpec{Name: name, Description: t.Description, Parameters: params})
	}
	last := &req.Messages[len(req.Messages)-1]
	switch {
	case last.Role == "assistant":
		turn.Intent, turn.MessageID = wire.Continue, last.ID
	case req.Trigger == TriggerRegenerate:
		turn.Intent, turn.MessageID = wire.Regenerate, req.MessageID
	case last.Role != "user":
		return nil, wire.BadRequest("the last message must be a user or assistant message")
	case onlyNew:
		// The client sent no branch: it continues whatever is stored.
	case sn.count > 1:
		turn.ParentID = sn.prior
	default:
		turn.Root = req.WholeBranch
	}
	d := &decoder{}
	for i := range req.Messages {
		isLast := i == len(req.Messages)-1
		d.base = len(turn.Messages)
		msgs, res := d.toCMF(&req.Messages[i], isLast && turn.Intent == wire.Continue)
		turn.Messages = append(turn.Messages, msgs...)
		turn.Resolutions = append(turn.Resolutions, res...)
	}
	turn.Skipped, turn.Sealed = d.skipped, d.sealed
	return turn, nil
}

// checkIDs bounds every id the request carries (wire.CheckID): the
// chat's, the messages' and their parts', and the one before the last
// (DecodeTail's ParentID).
func checkIDs(req *Request, sn seen) error {
	for _, c := range [...]struct{ what, id string }{
		{`chat "id"`, req.ID}, {`"messageId"`, req.MessageID}, {"a message id", sn.prior},
	} {
		if err := wire.CheckID(c.what, c.id); err != nil {
			return err
		}
	}
	if req.Message != nil {
		if err := checkMessageIDs(req.Message); err != nil {
			return err
		}
	}
	for i := range req.Messages {
		if err := checkMessageIDs(&req.Messages[i]); err != nil {
			return err
		}
	}
	return nil
}

func checkMessageIDs(m *UIMessage) error {
	if err := wire.CheckID("a message id", m.ID); err != nil {
		return err
	}
	for i := range m.Parts {
		p := &m.Parts[i]
		approval := ""
		if p.Approval != nil {
			approval = p.Approval.ID
		}
		for _, c := range [...]struct{ what, id string }{
			{"a part id", p.ID}, {"a source id", p.SourceID}, {"a tool call id", p.ToolCallID}, {"an approval id", approval},
		} {
			if err := wire.CheckID(c.what, c.id); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonFieldError names the field of a type error without echoing input.
func jsonFieldError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return te.Field + " has the wrong type"
	}
	return "wrong JSON types"
}

// toCMF converts one UI message. An assistant message becomes one CMF
// assistant message per step (split at step-start) followed by a tool
// message per tool result. resolve says the message is the one being
// continued: its last step's answered tool parts become resolutions.
func (d *decoder) toCMF(ui *UIMessage, resolve bool) ([]cmf.Message, []wire.Resolution) {
	id := ui.ID
	if id == "" {
		id = ids.New()
	}
	switch ui.Role {
	case "system", "user":
		role := cmf.RoleUser
		if ui.Role == "system" {
			role = cmf.RoleSystem
		}
		m := newMessage(role, id)
		for i := range ui.Parts {
			d.addContent(&m, &ui.Parts[i])
		}
		return []cmf.Message{m}, nil
	}

	// Assistant: group parts into steps.
	var steps [][]*Part
	cur := []*Part{}
	for i := range ui.Parts {
		part := &ui.Parts[i]
		if part.Type == "step-start" {
			if len(cur) > 0 {
				steps = append(steps, cur)
			}
			cur = []*Part{}
			continue
		}
		cur = append(cur, part)
	}
	if len(cur) > 0 || len(steps) == 0 {
		steps = append(steps, cur)
	}
	var out []cmf.Message
	var resolutions []wire.Resolution
	for n, step := range steps {
		m := newMessage(cmf.RoleAssistant, stepID(id, n+1))
		var results []cmf.Message
		for _, part := range step {
			if !part.IsTool() {
				if d.addContent(&m, part) {
					d.seal(d.base+len(out), len(m.Content)-1, part.ProviderMetadata)
				}
				continue
			}
			r, added := d.addTool(&m, part)
			if added {
				d.seal(d.base+len(out), len(m.Content)-1, part.CallProviderMetadata)
			}
			if r != nil {
				results = append(results, *r)
			}
			if resolve && n == len(steps)-1 {
				if res, ok := resolution(part); ok {
					resolutions = append(resolutions, res)
				}
			}
		}
		out = append(out, m)
		out = append(out, results...)
	}
	return out, resolutions
}

// stepID is the id of step n (from 1) of the assistant UI message id:
// the message's own for the first, "<id>-step<n>" after it.
func stepID(id string, n int) string {
	if n <= 1 {
		return id
	}
	return id + "-step" + strconv.Itoa(n)
}

// stepsOf is how many steps the assistant UI message id has in msgs,
// decoded (its CMF assistant messages).
func stepsOf(msgs []cmf.Message, id string) int {
	n := 0
	for i := range msgs {
		if msgs[i].Role == cmf.RoleAssistant && msgs[i].ID() == stepID(id, n+1) {
			n++
		}
	}
	return n
}

// seal records the sealed provider value a part's metadata carries for
// the part at (message, part) of the turn: useChat sends back the
// providerMetadata the server gave the part ({"agentui": {"sealed":
// "…"}}; a tool call's as callProviderMetadata). Anything else in the
// metadata is not agentui's and is ignored.
func (d *decoder) seal(message, part int, md json.RawMessage) {
	if len(md) == 0 {
		return
	}
	var v struct {
		Agentui struct {
			Sealed string `json:"sealed"`
		} `json:"agentui"`
	}
	if json.Unmarshal(md, &v) != nil || v.Agentui.Sealed == "" {
		return
	}
	d.sealed = append(d.sealed, wire.SealedValue{Message: message, Part: part, Value: v.Agentui.Sealed})
}

func newMessage(role cmf.Role, id string) cmf.Message {
	m := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: role}
	m.SetID(id)
	return m
}

// addContent adds a non-tool part; true when it added a text or
// reasoning part (one a sealed value can come with).
func (d *decoder) addContent(m *cmf.Message, part *Part) bool {
	switch {
	case part.Type == "text":
		m.Content = append(m.Content, cmf.Text{Text: deref(part.Text)})
		return true
	case part.Type == "reasoning":
		if m.Role == cmf.RoleAssistant {
			m.Content = append(m.Content, cmf.Thinking{Text: deref(part.Text)})
			return true
		}
	case part.Type == "file":
		if media := fileToMedia(part); media != nil {
			m.Content = append(m.Content, media)
		}
	case part.Type == "source-url":
		m.Content = append(m.Content, cmf.ResourceRef{ResourceRequestID: nonEmpty(part.SourceID), URI: nonEmpty(part.URL), Name: part.Title, ResourceType: cmf.ResourceURI})
	case part.Type == "source-document":
		r := cmf.Resource{ResourceRequestID: nonEmpty(part.SourceID), URI: sourceDocumentURI + part.SourceID, Name: part.Title, MimeType: part.MediaType, ResourceType: cmf.ResourceArtifact}
		if part.Filename != "" {
			fn, _ := json.Marshal(part.Filename)
			r.Annotations = map[string]json.RawMessage{"filename": fn}
		}
		m.Content = append(m.Content, r)
	case strings.HasPrefix(part.Type, "data-"):
		m.AddData(cmf.DataRecord{Name: strings.TrimPrefix(part.Type, "data-"), ID: part.ID, Value: orNull(part.Data), Index: len(m.Content)})
	default:
		d.skip("an unknown UI message part", part.Type)
	}
	return false
}

// sourceDocumentURI prefixes the URI agentui gives AI SDK source documents,
// which have an id but no URI of their own.
const sourceDocumentURI = "urn:ai-sdk:source-document:"

// addTool adds a tool call to the step (added) and returns the tool
// message with its result, if the part has one.
func (d *decoder) addTool(m *cmf.Message, part *Part) (tool *cmf.Message, added bool) {
	switch part.State {
	case StateInputAvailable, StateApprovalRequested, StateApprovalResponded, StateOutputAvailable, StateOutputError, StateOutputDenied:
	default: // input-streaming (incomplete) or a state this version does not know
		d.skip("a tool part in state", part.State)
		return nil, false
	}
	if part.ToolCallID == "" || part.Tool() == "" {
		return nil, false
	}
	args := json.RawMessage(`{}`)
	if isObject(part.Input) {
		args = part.Input
	}
	m.Content = append(m.Content, cmf.ToolCall{ToolCallID: part.ToolCallID, Name: part.Tool(), Arguments: args})
	if part.Approval != nil && part.Approval.ID != "" {
		m.SetCallRecord(part.ToolCallID, cmf.CallRecord{ApprovalID: part.Approval.ID})
	}
	var result cmf.ToolResult
	var decision *cmf.Decision
	switch part.State {
	case StateOutputAvailable:
		result = cmf.ToolResult{Content: orNull(part.Output)}
		if a := part.Approval; a != nil && a.Approved != nil {
			decision = &cmf.Decision{Approved: *a.Approved, Reason: a.Reason}
		}
	case StateOutputError:
		result = cmf.ToolResult{Content: jsonString(deref(part.ErrorText)), IsError: true}
	case StateOutputDenied:
		text := "The user denied this tool call."
		reason := ""
		if part.Approval != nil {
			reason = part.Approval.Reason
		}
		if reason != "" {
			text += " Reason: " + reason
		}
		result = cmf.ToolResult{Content: jsonString(text), IsError: true}
		decision = &cmf.Decision{Approved: false, Reason: reason}
	default:
		return nil, true
	}
	result.ToolCallID, result.ToolName = part.ToolCallID, part.Tool()
	tm := newMessage(cmf.RoleTool, m.ID()+"-result-"+part.ToolCallID)
	tm.Content = []cmf.Part{result}
	if decision != nil {
		tm.SetCallRecord(part.ToolCallID, cmf.CallRecord{Decision: decision})
	}
	return &tm, true
}

// resolution reads the client's answer from a tool part of the message
// being continued: an approval response, or a client tool's output.
func resolution(part *Part) (wire.Resolution, bool) {
	res := wire.Resolution{Resolution: agent.Resolution{ToolCallID: part.ToolCallID}}
	switch part.State {
	case StateApprovalResponded:
		a := part.Approval
		if a == nil || a.Approved == nil {
			return res, false
		}
		res.ApprovalID, res.Signature = a.ID, a.Signature
		if *a.Approved {
			res.Kind = agent.Approve
		} else {
			res.Kind, res.Reason = agent.Deny, a.Reason
		}
	case StateOutputAvailable:
		if part.Approval != nil {
			return res, false // a tool the server ran after approval
		}
		res.Kind, res.Output = agent.ClientOutput, orNull(part.Output)
	case StateOutputError:
		if part.Approval != nil {
			return res, false
		}
		res.Kind, res.ErrorText = agent.ClientError, deref(part.ErrorText)
	default:
		return res, false
	}
	return res, true
}

func fileToMedia(part *Part) cmf.Part {
	if part.URL == "" {
		return nil
	}
	src := cmf.MediaSource{Type: cmf.SourceURL, Data: part.URL, MediaType: part.MediaType}
	if rest, ok := strings.CutPrefix(part.URL, "data:"); ok {
		if meta, data, ok := strings.Cut(rest, ","); ok && strings.HasSuffix(meta, ";base64") {
			src = cmf.MediaSource{Type: cmf.SourceBase64, Data: data, MediaType: part.MediaType}
			if src.MediaType == "" {
				src.MediaType = strings.TrimSuffix(meta, ";base64")
			}
		}
	}
	switch {
	case strings.HasPrefix(part.MediaType, "image/"):
		return cmf.Image{MediaSource: src}
	case strings.HasPrefix(part.MediaType, "audio/"):
		return cmf.Audio{MediaSource: src}
	case strings.HasPrefix(part.MediaType, "video/"):
		return cmf.Video{MediaSource: src}
	}
	return cmf.Document{MediaSource: src, Title: part.Filename}
}

func isObject(raw json.RawMessage) bool {
	var v map[string]json.RawMessage
	return len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, &v) == nil
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// nonEmpty keeps required CMF fields valid when a client omits them.
func nonEmpty(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// decoder is one Decode call. What it leaves out of the client's input
// goes in the Turn (Skipped), which the handler logs with the request's
// attributes.
type decoder struct {
	skipped []string
	sealed  []wire.SealedValue
	base    int // the index in the turn of the message being decoded
}

func (d *decoder) skip(what, detail string) {
	d.skipped = append(d.skipped, what+" "+strconv.Quote(detail))
}

// sdk4Message reports whether the body's message i is in the AI SDK 4
// shape ({role, content}, no parts). Only asked of a message without
// parts, so the common request pays nothing for it.
func sdk4Message(body []byte, i int) bool {
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	return json.Unmarshal(body, &req) == nil && i < len(req.Messages) &&
		len(req.Messages[i].Content) > 0 && string(req.Messages[i].Content) != "null"
}
