package agui

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/wire"
)

// Decode reads a RunAgentInput into a Turn. Structural errors are 400;
// unknown fields, unknown message roles and unknown content parts are
// tolerated (logged at debug). activity messages are ignored.
//
// Unmarshalling and reading are separate functions, so that the JSON
// decoder's recursion runs under a small frame (see vercelai's Decode).
func (p *Protocol) Decode(_ *http.Request, body []byte) (*wire.Turn, error) {
	in, err := unmarshal(body)
	if err != nil {
		return nil, err
	}
	return p.read(in, body)
}

func unmarshal(body []byte) (*RunAgentInput, error) {
	in := new(RunAgentInput)
	if err := json.Unmarshal(body, in); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, wire.BadRequest("request body is not valid JSON")
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, wire.BadRequest("malformed RunAgentInput: " + te.Field + " has the wrong type")
		}
		return nil, wire.BadRequest("malformed RunAgentInput")
	}
	return in, nil
}

// read checks an unmarshalled RunAgentInput and makes its Turn.
//
//go:noinline
func (p *Protocol) read(in *RunAgentInput, body []byte) (*wire.Turn, error) {
	if in.ThreadID == "" {
		return nil, wire.BadRequest(`missing "threadId"`)
	}
	if in.RunID == "" {
		return nil, wire.BadRequest(`missing "runId"`)
	}
	if in.Messages == nil { // absent or null; [] is a thread with nothing yet
		return nil, wire.BadRequest(`missing "messages"`)
	}
	if err := checkIDs(in); err != nil {
		return nil, err
	}
	turn := &wire.Turn{
		ChatID:          in.ThreadID,
		RunID:           in.RunID,
		Key:             in.RunID,
		Intent:          wire.Submit,
		ProtocolVersion: in.ProtocolVersion,
		ResumeRequired:  true, // a thread with pending interrupts must resume them
	}
	var err error
	if turn.Model, turn.Busy, err = forwarded(in.ForwardedProps); err != nil {
		return nil, err
	}
	turn.ParentRunID = in.ParentRunID
	if s := bytes.TrimSpace(in.State); len(s) > 0 && string(s) != "null" {
		var compact bytes.Buffer
		_ = json.Compact(&compact, s) // valid: the decoder checked it
		turn.State = compact.Bytes()
	}
	for _, t := range in.Tools {
		if t.Name == "" {
			return nil, wire.BadRequest("a tool has no name")
		}
		params := t.Parameters
		if string(bytes.TrimSpace(params)) == "null" {
			params = nil
		}
		turn.ClientTools = append(turn.ClientTools, agent.ToolSpec{Name: t.Name, Description: t.Description, Parameters: params})
	}
	for _, c := range in.Context {
		turn.Context = append(turn.Context, agent.ContextItem{Description: c.Description, Value: c.Value})
	}
	d := &decoder{}
	for i := range in.Messages {
		m, err := d.toCMF(&in.Messages[i])
		if err != nil {
			return nil, wire.BadRequest("messages[" + strconv.Itoa(i) + "]: " + err.Error())
		}
		if m != nil {
			for _, sv := range d.pending {
				turn.Sealed = append(turn.Sealed, wire.SealedValue{Message: len(turn.Messages), Part: sv.Part, Value: sv.Value})
			}
			turn.Messages = append(turn.Messages, *m)
		}
		d.pending = d.pending[:0]
	}
	nameResults(turn.Messages)
	// Tool messages after the last assistant message answer its client
	// tool calls.
	for i := len(turn.Messages) - 1; i >= 0 && turn.Messages[i].Role == cmf.RoleTool; i-- {
		for _, part := range turn.Messages[i].Content {
			r, ok := part.(cmf.ToolResult)
			if !ok {
				continue
			}
			res := agent.Resolution{ToolCallID: r.ToolCallID, Kind: agent.ClientOutput, Output: r.Content, MessageID: turn.Messages[i].ID()}
			if r.IsError {
				res.Kind, res.Output, res.ErrorText = agent.ClientError, nil, errorText(r.Content)
			}
			turn.Resolutions = append(turn.Resolutions, wire.Resolution{Resolution: res})
			turn.Intent = wire.Continue
		}
	}
	for i, entry := range in.Resume {
		res, err := resumeResolution(entry)
		if err != nil {
			return nil, wire.BadRequest("resume[" + strconv.Itoa(i) + "]: " + err.Error())
		}
		turn.Resolutions = append(turn.Resolutions, res)
		turn.Intent = wire.Continue
	}
	if movesOn(in, turn) {
		// The user cancelled the open interrupts by sending a new message
		// (as useChat moves on from an open approval): a new turn, whose
		// abandoned calls the server answers "not answered".
		turn.Resolutions, turn.Intent, turn.ResumeRequired = nil, wire.Submit, false
	}
	if turn.Intent == wire.Continue {
		for i := len(turn.Messages) - 1; i >= 0; i-- {
			if turn.Messages[i].Role == cmf.RoleAssistant {
				turn.MessageID = turn.Messages[i].ID()
				break
			}
		}
	}
	turn.Skipped = d.skipped
	return turn, nil
}

// checkIDs bounds every id the input carries (wire.CheckID): the
// thread's, the runs', the messages' and their tool calls', and each half
// of an interrupt id (a tool call id and a signature, so the whole may be
// longer than one id).
func checkIDs(in *RunAgentInput) error {
	for _, c := range [...]struct{ what, id string }{
		{`"threadId"`, in.ThreadID}, {`"runId"`, in.RunID}, {`"parentRunId"`, in.ParentRunID},
	} {
		if err := wire.CheckID(c.what, c.id); err != nil {
			return err
		}
	}
	for i := range in.Messages {
		m := &in.Messages[i]
		if err := wire.CheckID("a message id", m.ID); err != nil {
			return err
		}
		if err := wire.CheckID("a tool call id", m.ToolCallID); err != nil {
			return err
		}
		for _, tc := range m.ToolCalls {
			if err := wire.CheckID("a tool call id", tc.ID); err != nil {
				return err
			}
		}
	}
	for _, e := range in.Resume {
		call, sig := interruptCall(e.InterruptID)
		if err := wire.CheckID("an interrupt id", call); err != nil {
			return err
		}
		if err := wire.CheckID("an interrupt id", sig); err != nil {
			return err
		}
	}
	return nil
}

// movesOn reports whether a run cancels every interrupt it answers and
// brings a new user message after them: the client's thread ends with a
// user message, and every resume entry is "cancelled".
func movesOn(in *RunAgentInput, turn *wire.Turn) bool {
	if len(in.Resume) == 0 || len(turn.Messages) == 0 || turn.Messages[len(turn.Messages)-1].Role != cmf.RoleUser {
		return false
	}
	for _, e := range in.Resume {
		if e.Status != "cancelled" {
			return false
		}
	}
	return true
}

// nameResults gives each tool result the name of its call (AG-UI tool
// messages carry only the call id).
func nameResults(msgs []cmf.Message) {
	names := map[string]string{}
	for i := range msgs {
		for j, part := range msgs[i].Content {
			switch part := part.(type) {
			case cmf.ToolCall:
				names[part.ToolCallID] = part.Name
			case cmf.ToolResult:
				if n, ok := names[part.ToolCallID]; ok {
					part.ToolName = n
					msgs[i].Content[j] = part
				}
			}
		}
	}
}

// toCMF converts one message; nil for messages agentui ignores.
func (d *decoder) toCMF(msg *Message) (*cmf.Message, error) {
	id := msg.ID
	if id == "" {
		return nil, errors.New(`missing "id"`)
	}
	out := cmf.Message{SchemaVersion: cmf.SchemaVersion}
	out.SetID(id)
	switch msg.Role {
	case "system", "developer":
		out.Role = cmf.Role(msg.Role)
		text, err := stringContent(msg.Content)
		if err != nil {
			return nil, err
		}
		out.Content = []cmf.Part{cmf.Text{Text: text}}
	case "user":
		out.Role = cmf.RoleUser
		parts, err := d.userContent(msg.Content)
		if err != nil {
			return nil, err
		}
		out.Content = parts
	case "assistant":
		out.Role = cmf.RoleAssistant
		if len(msg.Content) > 0 && string(msg.Content) != "null" {
			text, err := stringContent(msg.Content)
			if err != nil {
				return nil, err
			}
			// An empty text is a part only when it carries a sealed value
			// (a provider's signature on an empty final text).
			if text != "" || msg.EncryptedValue != "" {
				d.seal(len(out.Content), msg.EncryptedValue)
				out.Content = append(out.Content, cmf.Text{Text: text})
			}
		}
		for _, tc := range msg.ToolCalls {
			if tc.ID == "" || tc.Function.Name == "" {
				return nil, errors.New("a tool call needs an id and a function name")
			}
			args := json.RawMessage(tc.Function.Arguments)
			if !isObject(args) {
				args = json.RawMessage(`{}`)
			}
			d.seal(len(out.Content), tc.EncryptedValue)
			out.Content = append(out.Content, cmf.ToolCall{ToolCallID: tc.ID, Name: tc.Function.Name, Arguments: args})
		}
	case "tool":
		if msg.ToolCallID == "" {
			return nil, errors.New(`a tool message needs "toolCallId"`)
		}
		out.Role = cmf.RoleTool
		text, err := d.toolContent(msg.Content)
		if err != nil {
			return nil, err
		}
		// The tool's name is on its call; the adapter's sanitizer drops
		// results whose call is missing.
		out.Content = []cmf.Part{cmf.ToolResult{ToolCallID: msg.ToolCallID, ToolName: "unknown", Content: resultJSON(text), IsError: msg.Error != ""}}
	case "reasoning":
		out.Role = cmf.RoleAssistant
		text, err := stringContent(msg.Content)
		if err != nil {
			return nil, err
		}
		d.seal(0, msg.EncryptedValue)
		out.Content = []cmf.Part{cmf.Thinking{Text: text}}
	case "activity":
		return nil, nil // client-side display state
	default:
		d.skip("a message with the unknown role", msg.Role)
		return nil, nil
	}
	return &out, nil
}

func stringContent(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", errors.New(`"content" must be a string`)
	}
	return s, nil
}

// userContent reads a string or content parts.
func (d *decoder) userContent(raw json.RawMessage) ([]cmf.Part, error) {
	if len(raw) > 0 && raw[0] == '"' {
		s, err := stringContent(raw)
		return []cmf.Part{cmf.Text{Text: s}}, err
	}
	var parts []ContentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, errors.New(`"content" must be a string or a list of content parts`)
	}
	var out []cmf.Part
	for _, cp := range parts {
		switch cp.Type {
		case "text":
			out = append(out, cmf.Text{Text: cp.Text})
		case "binary":
			// The legacy shape: its kind is its MIME type's.
			src, kind, err := binarySource(&cp)
			if err != nil {
				return nil, err
			}
			out = append(out, mediaPart(kind, src, cp.Filename))
		case "image", "audio", "video", "document":
			if cp.Source == nil {
				return nil, errors.New(cp.Type + ` part without "source"`)
			}
			src, ok := mediaSource(cp.Source)
			if !ok {
				return nil, errors.New("unknown source type " + strconv.Quote(cp.Source.Type))
			}
			out = append(out, mediaPart(cp.Type, src, ""))
		default:
			d.skip("an unknown content part", cp.Type)
		}
	}
	return out, nil
}

// binarySource maps a legacy binary part (one of data, url and id) to a
// source, and the kind of part its MIME type makes it.
func binarySource(cp *ContentPart) (cmf.MediaSource, string, error) {
	if cp.MimeType == "" {
		return cmf.MediaSource{}, "", errors.New(`binary part without "mimeType"`)
	}
	var src *Source
	switch {
	case cp.Data != "":
		src = &Source{Type: "data", Value: cp.Data, MimeType: cp.MimeType}
	case cp.URL != "":
		src = &Source{Type: "url", Value: cp.URL, MimeType: cp.MimeType}
	case cp.ID != "":
		src = &Source{Type: "file", Value: cp.ID, MimeType: cp.MimeType}
	default:
		return cmf.MediaSource{}, "", errors.New(`binary part without "data", "url" or "id"`)
	}
	s, _ := mediaSource(src)
	kind := "document"
	for _, k := range []string{"image", "audio", "video"} {
		if strings.HasPrefix(cp.MimeType, k+"/") {
			kind = k
		}
	}
	return s, kind, nil
}

// mediaPart is a media part of kind (image, audio, video, document).
func mediaPart(kind string, src cmf.MediaSource, title string) cmf.Part {
	switch kind {
	case "image":
		return cmf.Image{MediaSource: src}
	case "audio":
		return cmf.Audio{MediaSource: src}
	case "video":
		return cmf.Video{MediaSource: src}
	}
	return cmf.Document{MediaSource: src, Title: title}
}

// mediaSource maps an AG-UI source. A provider's file handle becomes a
// provider-file:// URL, which sanitization drops unless that scheme is
// allowed: the provider would resolve it with the server's credentials.
func mediaSource(s *Source) (cmf.MediaSource, bool) {
	switch s.Type {
	case "data":
		return cmf.MediaSource{Type: cmf.SourceBase64, Data: s.Value, MediaType: s.MimeType}, true
	case "url":
		return cmf.MediaSource{Type: cmf.SourceURL, Data: s.Value, MediaType: s.MimeType}, true
	case "file":
		provider := s.Provider
		if provider == "" {
			provider = "unknown"
		}
		return cmf.MediaSource{Type: cmf.SourceURL, Data: wire.SchemeProviderFile + "://" + provider + "/" + s.Value, MediaType: s.MimeType}, true
	}
	return cmf.MediaSource{}, false
}

// toolContent reads a tool message's content: a string, or text parts.
func (d *decoder) toolContent(raw json.RawMessage) (string, error) {
	if len(raw) > 0 && raw[0] == '[' {
		var parts []ContentPart
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", errors.New(`"content" must be a string or a list of content parts`)
		}
		var b strings.Builder
		for _, cp := range parts {
			if cp.Type == "text" {
				b.WriteString(cp.Text)
			}
		}
		return b.String(), nil
	}
	return stringContent(raw)
}

// resultJSON keeps a tool's JSON output as JSON (a frontend tool usually
// returns JSON.stringify of an object) and any other text as a string.
func resultJSON(text string) json.RawMessage {
	t := strings.TrimSpace(text)
	if (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	b, _ := json.Marshal(text)
	return b
}

// errorText is the text of an error result.
func errorText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// resumeResolution reads one resume entry. An interrupt id is
// "<tool call id>.<signature>" (see the encoder); an id of any other form
// answers nothing the server asked, and the handler refuses it. A resolved
// payload must say approved: true to approve; anything ambiguous denies.
func resumeResolution(e ResumeEntry) (wire.Resolution, error) {
	if e.InterruptID == "" {
		return wire.Resolution{}, errors.New(`missing "interruptId"`)
	}
	callID, sig := interruptCall(e.InterruptID)
	res := wire.Resolution{Resolution: agent.Resolution{ToolCallID: callID, Kind: agent.Deny}, Signature: sig, ApprovalID: e.InterruptID}
	switch e.Status {
	case "cancelled":
		// cancelled: denied, with no reason given
	case "resolved":
		var p ApprovalPayload
		if len(e.Payload) > 0 && json.Unmarshal(e.Payload, &p) == nil && p.Approved != nil {
			if *p.Approved {
				res.Kind = agent.Approve
				if isObject(p.EditedArgs) {
					res.EditedArgs = p.EditedArgs
				}
			} else {
				res.Reason = p.Reason
			}
		}
	default:
		return res, errors.New(`"status" must be "resolved" or "cancelled"`)
	}
	return res, nil
}

// interruptCall splits an interrupt id into the tool call it names and
// the signature.
func interruptCall(id string) (callID, sig string) {
	if i := strings.LastIndexByte(id, '.'); i > 0 {
		return id[:i], id[i+1:]
	}
	return id, ""
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	var v map[string]json.RawMessage
	return len(t) > 0 && t[0] == '{' && json.Unmarshal(t, &v) == nil
}

// decoder is one Decode call. What it leaves out of the client's input
// goes in the Turn (Skipped), which the handler logs with the request's
// attributes.
type decoder struct {
	skipped []string
	pending []wire.SealedValue // the message being decoded's (Message unset)
}

// seal records an encryptedValue the client sent with the part at index
// part of the message being decoded: the value the server sealed for it,
// if the server keeps no history (see wire.Sealer). Nothing a client
// sends is replayed to a model unless it opens.
func (d *decoder) seal(part int, value string) {
	if value != "" {
		d.pending = append(d.pending, wire.SealedValue{Part: part, Value: value})
	}
}

func (d *decoder) skip(what, detail string) {
	d.skipped = append(d.skipped, what+" "+strconv.Quote(detail))
}

// forwarded reads what agentui takes from forwardedProps: the model the
// user picked ({"model": "…"}; "" when it names none) and what a message
// sent while a reply runs asks for ({"busy": "steer"|"interrupt"}).
func forwarded(props json.RawMessage) (model string, busy wire.Busy, err error) {
	if len(bytes.TrimSpace(props)) == 0 {
		return "", 0, nil
	}
	var fp struct {
		Model json.RawMessage `json:"model"`
		Busy  json.RawMessage `json:"busy"`
	}
	if json.Unmarshal(props, &fp) != nil {
		return "", 0, nil // forwardedProps are the app's own: anything else is not ours to refuse
	}
	if len(fp.Model) > 0 && string(fp.Model) != "null" && json.Unmarshal(fp.Model, &model) != nil {
		return "", 0, wire.BadRequest(`"forwardedProps.model" must be a string`)
	}
	if len(fp.Busy) > 0 && string(fp.Busy) != "null" {
		var s string
		if json.Unmarshal(fp.Busy, &s) != nil {
			return "", 0, wire.BadRequest(`"forwardedProps.busy" must be a string`)
		}
		if busy, err = wire.ParseBusy(s); err != nil {
			return "", 0, err
		}
	}
	return model, busy, nil
}
