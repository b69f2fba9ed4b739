package responses

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// params is the part of a request body the fake reads.
type params struct {
	Model        string            `json:"model"`
	Input        json.RawMessage   `json:"input"`
	Instructions *string           `json:"instructions"`
	Store        *bool             `json:"store"`
	Stream       bool              `json:"stream"`
	Include      []string          `json:"include"`
	Tools        []json.RawMessage `json:"tools"`
	Reasoning    *struct {
		Effort  *string `json:"effort"`
		Summary *string `json:"summary"`
	} `json:"reasoning"`
	Temperature        *float64 `json:"temperature"`
	TopP               *float64 `json:"top_p"`
	MaxOutputTokens    *int64   `json:"max_output_tokens"`
	PreviousResponseID *string  `json:"previous_response_id"`

	items []item
	raw   []json.RawMessage // the items as sent
}

// item is the part of an input item the fake reads.
type item struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	CallID           string          `json:"call_id"`
	Name             string          `json:"name"`
	Arguments        *string         `json:"arguments"`
	Output           json.RawMessage `json:"output"`
	EncryptedContent *string         `json:"encrypted_content"`
	Summary          *[]struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"summary"`
}

type contentPart struct {
	Type     string  `json:"type"`
	Text     *string `json:"text"`
	ImageURL *string `json:"image_url"`
	FileID   *string `json:"file_id"`
	FileData *string `json:"file_data"`
	FileURL  *string `json:"file_url"`
	Refusal  *string `json:"refusal"`
}

// prompt is what the model reads, as bytes: the basis of the fake's token
// counts and of its prompt cache.
func (p *params) prompt() []byte {
	var b bytes.Buffer
	if p.Instructions != nil {
		b.WriteString(*p.Instructions)
	}
	for _, t := range p.Tools {
		b.Write(t)
	}
	for _, it := range p.raw {
		b.Write(it)
	}
	return b.Bytes()
}

// reasons reports whether a model is one of OpenAI's reasoning models,
// which take reasoning settings and refuse sampling settings.
func reasons(model string) bool {
	if strings.HasPrefix(model, "gpt-5-chat") {
		return false
	}
	for _, p := range []string{"o1", "o3", "o4", "gpt-5", "codex"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

func invalid(param, format string, args ...any) *Error {
	return &Error{Message: fmt.Sprintf(format, args...), Type: "invalid_request_error", Param: param}
}

func missing(param string) *Error {
	return &Error{Message: "Missing required parameter: '" + param + "'.", Type: "invalid_request_error", Param: param, Code: "missing_required_parameter"}
}

func invalidValue(param, value, supported string) *Error {
	return &Error{Message: "Invalid value: '" + value + "'. Supported values are: " + supported + ".", Type: "invalid_request_error", Param: param, Code: "invalid_value"}
}

// validate reads and checks a request as the real API does. The rules and
// messages are the API's own, as OpenAI returns them (quoted in peers'
// issue threads and the AI SDK's recorded fixtures; docs/models.md lists
// the sources):
//
//   - a reasoning item without encrypted_content, when nothing is stored
//     (store: false), is looked up by id and not found: 404;
//   - encrypted_content that does not verify (altered, moved to another
//     item, or issued for another model): 400 invalid_encrypted_content;
//   - a reasoning item must be followed by the output item it preceded
//     (a message, function call or web search call): 400;
//   - a function_call sent with the item id of one that followed a
//     reasoning item needs that reasoning item before it: 400;
//   - every function_call_output needs its function_call earlier, and
//     every function_call its output: 400;
//   - item ids are unique: 400;
//   - reasoning settings only for reasoning models, temperature and top_p
//     not for them (unless reasoning effort is "none"): 400;
//   - a tool with "strict": true needs a schema with additionalProperties
//     false and every property required: 400.
func (s *Server) validate(body []byte) (*params, int, *Error) {
	var p params
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, http.StatusBadRequest, &Error{Message: "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)", Type: "invalid_request_error"}
	}
	if p.Model == "" {
		return nil, http.StatusBadRequest, missing("model")
	}
	if p.PreviousResponseID != nil {
		// Nothing is stored here, so no previous response is found.
		return nil, http.StatusNotFound, invalid("previous_response_id", "Previous response with id '%s' not found.", *p.PreviousResponseID)
	}
	if e := p.readInput(); e != nil {
		return nil, http.StatusBadRequest, e
	}
	if e := p.checkSettings(); e != nil {
		return nil, http.StatusBadRequest, e
	}
	for i, t := range p.Tools {
		if e := checkTool(i, t); e != nil {
			return nil, http.StatusBadRequest, e
		}
	}
	for i := range p.items {
		if e := checkItem(i, &p.items[i]); e != nil {
			return nil, http.StatusBadRequest, e
		}
	}
	if status, e := s.checkSequence(&p); e != nil {
		return nil, status, e
	}
	return &p, 0, nil
}

func (p *params) readInput() *Error {
	if len(p.Input) == 0 {
		return nil
	}
	var text string
	if json.Unmarshal(p.Input, &text) == nil {
		raw, _ := json.Marshal(map[string]string{"role": "user", "content": text})
		p.raw = []json.RawMessage{raw}
		content, _ := json.Marshal(text)
		p.items = []item{{Type: "message", Role: "user", Content: content}}
		return nil
	}
	if json.Unmarshal(p.Input, &p.raw) != nil {
		return invalid("input", "Invalid type for 'input': expected one of a string or array of input items, but got an object instead.")
	}
	p.items = make([]item, len(p.raw))
	for i, raw := range p.raw {
		if json.Unmarshal(raw, &p.items[i]) != nil {
			return invalid(fmt.Sprintf("input[%d]", i), "Invalid type for 'input[%d]': expected an input item, but got %s instead.", i, jsonKind(raw))
		}
		if p.items[i].Type == "" && p.items[i].Role != "" {
			p.items[i].Type = "message"
		}
	}
	return nil
}

func jsonKind(raw json.RawMessage) string {
	switch t := bytes.TrimSpace(raw); {
	case len(t) == 0:
		return "nothing"
	case t[0] == '"':
		return "a string"
	case t[0] == '[':
		return "an array"
	case t[0] == 'n':
		return "null"
	}
	return "a value of another type"
}

func (p *params) checkSettings() *Error {
	reasoning := reasons(p.Model)
	if r := p.Reasoning; r != nil && !reasoning {
		if r.Effort != nil {
			return invalid("reasoning.effort", "Unsupported parameter: 'reasoning.effort' is not supported with this model.")
		}
		if r.Summary != nil {
			return invalid("reasoning.summary", "Unsupported parameter: 'reasoning.summary' is not supported with this model.")
		}
	}
	sampling := !reasoning || (p.Reasoning != nil && p.Reasoning.Effort != nil && *p.Reasoning.Effort == "none")
	if !sampling && p.Temperature != nil {
		return invalid("temperature", "Unsupported parameter: 'temperature' is not supported with this model.")
	}
	if !sampling && p.TopP != nil {
		return invalid("top_p", "Unsupported parameter: 'top_p' is not supported with this model.")
	}
	for i, inc := range p.Include {
		if !slices.Contains([]string{"reasoning.encrypted_content", "web_search_call.action.sources", "message.output_text.logprobs", "file_search_call.results", "code_interpreter_call.outputs", "computer_call_output.output.image_url", "message.input_image.image_url", "web_search_call.results"}, inc) {
			return invalidValue(fmt.Sprintf("include[%d]", i), inc, "'reasoning.encrypted_content', 'web_search_call.action.sources', and others")
		}
	}
	return nil
}

func checkTool(i int, raw json.RawMessage) *Error {
	var t struct {
		Type       string          `json:"type"`
		Name       string          `json:"name"`
		Strict     *bool           `json:"strict"`
		Parameters json.RawMessage `json:"parameters"`
	}
	if json.Unmarshal(raw, &t) != nil {
		return invalid(fmt.Sprintf("tools[%d]", i), "Invalid type for 'tools[%d]': expected an object, but got %s instead.", i, jsonKind(raw))
	}
	switch t.Type {
	case "web_search", "web_search_preview", "web_search_2025_08_26":
		return nil
	case "function":
	default:
		return invalidValue(fmt.Sprintf("tools[%d].type", i), t.Type, "'function', 'web_search', and others")
	}
	if t.Name == "" {
		return missing(fmt.Sprintf("tools[%d].name", i))
	}
	var schema struct {
		Type                 string                     `json:"type"`
		Properties           map[string]json.RawMessage `json:"properties"`
		Required             []string                   `json:"required"`
		AdditionalProperties *bool                      `json:"additionalProperties"`
	}
	param := fmt.Sprintf("tools[%d].parameters", i)
	if json.Unmarshal(t.Parameters, &schema) != nil || schema.Type != "object" {
		e := invalid(param, "Invalid schema for function '%s': schema must be a JSON Schema of 'type: \"object\"', got 'type: \"%s\"'.", t.Name, schema.Type)
		e.Code = "invalid_function_parameters"
		return e
	}
	if t.Strict == nil || !*t.Strict {
		// Without "strict", the API makes a tool strict only when its
		// schema allows, and falls back to best effort otherwise.
		return nil
	}
	if schema.AdditionalProperties == nil || *schema.AdditionalProperties {
		e := invalid(param, "Invalid schema for function '%s': In context=(), 'additionalProperties' is required to be supplied and to be false.", t.Name)
		e.Code = "invalid_function_parameters"
		return e
	}
	for name := range schema.Properties {
		if !slices.Contains(schema.Required, name) {
			e := invalid(param, "Invalid schema for function '%s': In context=(), 'required' is required to be supplied and to be an array including every key in properties. Missing '%s'.", t.Name, name)
			e.Code = "invalid_function_parameters"
			return e
		}
	}
	return nil
}

// checkItem checks one input item on its own.
func checkItem(i int, it *item) *Error {
	at := fmt.Sprintf("input[%d]", i)
	switch it.Type {
	case "message":
		return checkMessage(at, it)
	case "reasoning":
		if it.Summary == nil {
			return missing(at + ".summary")
		}
		for j, s := range *it.Summary {
			if s.Type != "summary_text" {
				return invalidValue(fmt.Sprintf("%s.summary[%d].type", at, j), s.Type, "'summary_text'")
			}
		}
	case "function_call":
		switch {
		case it.CallID == "":
			return missing(at + ".call_id")
		case it.Name == "":
			return missing(at + ".name")
		case it.Arguments == nil:
			return missing(at + ".arguments")
		}
	case "function_call_output":
		switch {
		case it.CallID == "":
			return missing(at + ".call_id")
		case len(it.Output) == 0:
			return missing(at + ".output")
		}
	case "web_search_call", "item_reference":
	case "":
		return missing(at + ".type")
	default:
		return invalidValue(at+".type", it.Type, "'message', 'reasoning', 'function_call', 'function_call_output', 'web_search_call', 'item_reference', and others")
	}
	return nil
}

func checkMessage(at string, it *item) *Error {
	switch it.Role {
	case "user", "assistant", "system", "developer":
	case "":
		return missing(at + ".role")
	default:
		return invalidValue(at+".role", it.Role, "'assistant', 'system', 'developer', and 'user'")
	}
	var s string
	if json.Unmarshal(it.Content, &s) == nil {
		return nil
	}
	var parts []contentPart
	if json.Unmarshal(it.Content, &parts) != nil {
		return invalid(at+".content", "Invalid type for '%s.content': expected one of a string or array of input content items, but got %s instead.", at, jsonKind(it.Content))
	}
	for j, c := range parts {
		p := fmt.Sprintf("%s.content[%d]", at, j)
		if it.Role == "assistant" {
			if c.Type != "output_text" && c.Type != "refusal" {
				return invalidValue(p, c.Type, "'output_text' and 'refusal'")
			}
			continue
		}
		switch c.Type {
		case "input_text":
			if c.Text == nil {
				return missing(p + ".text")
			}
		case "input_image":
			switch {
			case c.FileID != nil:
			case c.ImageURL == nil:
				return missing(p + ".image_url")
			case !imageURL(*c.ImageURL):
				e := invalid(p+".image_url", "Invalid '%s.image_url'. Expected a valid URL, but got a value with an invalid format.", p)
				e.Code = "invalid_value"
				return e
			}
		case "input_file":
			if c.FileID == nil && c.FileData == nil && c.FileURL == nil {
				return missing(p + ".file_data")
			}
		default:
			return invalidValue(p+".type", c.Type, "'input_text', 'input_image', 'input_file', and 'input_audio'")
		}
	}
	return nil
}

// imageURL accepts what the API fetches or decodes: an http(s) URL, or a
// base64 data URL of an image type.
func imageURL(u string) bool {
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
		return len(u) > len("https://")
	}
	rest, ok := strings.CutPrefix(u, "data:image/")
	if !ok {
		return false
	}
	_, data, ok := strings.Cut(rest, ";base64,")
	if !ok {
		return false
	}
	_, err := base64.StdEncoding.DecodeString(data)
	return err == nil
}

// checkSequence checks what depends on the items around an item: ids,
// reasoning items and their content, calls and their outputs.
func (s *Server) checkSequence(p *params) (int, *Error) {
	seen := map[string]bool{}
	for _, it := range p.items {
		if it.ID == "" {
			continue
		}
		if seen[it.ID] {
			return http.StatusBadRequest, invalid("input", "Duplicate item found with id %s. Remove duplicate items from your input and try again.", it.ID)
		}
		seen[it.ID] = true
	}
	stored := p.Store == nil || *p.Store
	calls := map[string]bool{}
	for i, it := range p.items {
		switch it.Type {
		case "reasoning":
			if it.EncryptedContent == nil || *it.EncryptedContent == "" {
				if !stored {
					return http.StatusNotFound, invalid("input", "Item with id '%s' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.", it.ID)
				}
				return http.StatusNotFound, invalid("input", "Item with id '%s' not found.", it.ID)
			}
			if *it.EncryptedContent != s.seal(p.Model, it.ID, summaryText(&it)) {
				e := &Error{Message: "The encrypted content for item " + it.ID + " could not be verified. Reason: Encrypted content could not be decrypted or parsed.", Type: "invalid_request_error", Code: "invalid_encrypted_content"}
				return http.StatusBadRequest, e
			}
			if i+1 == len(p.items) || !followsReasoning(&p.items[i+1]) {
				return http.StatusBadRequest, invalid("input", "Item '%s' of type 'reasoning' was provided without its required following item.", it.ID)
			}
		case "function_call":
			s.mu.Lock()
			rs, issued := s.calls[it.ID]
			s.mu.Unlock()
			if issued && rs != "" && !slices.ContainsFunc(p.items[:i], func(prev item) bool { return prev.Type == "reasoning" && prev.ID == rs }) {
				return http.StatusBadRequest, invalid("input", "Item '%s' of type 'function_call' was provided without its required 'reasoning' item: '%s'.", it.ID, rs)
			}
			calls[it.CallID] = true
		case "function_call_output":
			if !calls[it.CallID] {
				return http.StatusBadRequest, invalid("input", "No tool call found for function call output with call_id %s.", it.CallID)
			}
		}
	}
	for _, it := range p.items {
		if it.Type != "function_call" {
			continue
		}
		if !slices.ContainsFunc(p.items, func(o item) bool { return o.Type == "function_call_output" && o.CallID == it.CallID }) {
			return http.StatusBadRequest, invalid("input", "No tool output found for function call %s.", it.CallID)
		}
	}
	return 0, nil
}

// followsReasoning reports whether an item can be the one a reasoning item
// preceded: an output item of the same response.
func followsReasoning(next *item) bool {
	switch next.Type {
	case "function_call", "web_search_call":
		return true
	case "message":
		return next.Role == "assistant"
	}
	return false
}

func summaryText(it *item) string {
	if it.Summary == nil {
		return ""
	}
	texts := make([]string, len(*it.Summary))
	for i, s := range *it.Summary {
		texts[i] = s.Text
	}
	return strings.Join(texts, "\n\n")
}

// macKey is fixed so that fakes in different tests, and a fake restarted
// in one test, agree: like OpenAI, whose values outlive a connection.
var macKey = []byte("agentui fake responses: encrypted reasoning")

// seal is the encrypted_content the fake issues for a reasoning item: a
// MAC over the model, the item id and the summary text (its parts joined
// by a blank line), padded to the length of a real value.
func (s *Server) seal(model, id, summary string) string {
	mac := hmac.New(sha256.New, macKey)
	for _, v := range []string{model, id, summary} {
		mac.Write([]byte(v))
		mac.Write([]byte{0})
	}
	sum := mac.Sum(nil)
	body := bytes.Repeat(sum, 16) // 512 bytes, about what OpenAI sends
	return "gAAAAAB" + base64.URLEncoding.EncodeToString(body)
}
