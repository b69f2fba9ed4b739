package gemini

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
)

// The real API's messages for what it refuses, where they are known
// (from the API's own error bodies as users reported them).
const (
	msgMissingSignature = "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:%s` , position %d. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
	msgCorrupted        = "Corrupted thought signature."
	msgResponseCount    = "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn."
	msgResponseAfter    = "Please ensure that function response turn comes immediately after a function call turn."
	msgCallAfter        = "Please ensure that function call turn comes immediately after a user turn or after a function response turn."
	msgResponseID       = "functionResponse.id does not match functionCall.id."
)

func invalid(format string, args ...any) *Failure {
	return &Failure{Code: 400, Status: "INVALID_ARGUMENT", Message: fmt.Sprintf(format, args...)}
}

// validate checks a decoded request as the API does, in the order that
// reports the plainest mistake first.
func (s *Server) validate(model string, req *GenerateRequest) *Failure {
	if f := validateShape(req); f != nil {
		return f
	}
	if f := validateTools(req.Tools); f != nil {
		return f
	}
	if f := validateConfig(req.GenerationConfig); f != nil {
		return f
	}
	if f := validateCallTurns(req.Contents); f != nil {
		return f
	}
	return s.validateSignatures(model, req.Contents)
}

func validateShape(req *GenerateRequest) *Failure {
	if len(req.Contents) == 0 {
		return invalid("* GenerateContentRequest.contents: contents is not specified\n")
	}
	for i, c := range req.Contents {
		if c.Role != "" && c.Role != "user" && c.Role != "model" {
			return invalid("Please use a valid role: user, model.")
		}
		if len(c.Parts) == 0 {
			return invalid("* GenerateContentRequest.contents[%d].parts: contents.parts must not be empty.\n", i)
		}
		for j := range c.Parts {
			if f := validatePart(fmt.Sprintf("contents[%d].parts[%d]", i, j), &c.Parts[j]); f != nil {
				return f
			}
		}
	}
	if si := req.SystemInstruction; si != nil {
		for j := range si.Parts {
			if si.Parts[j].Text == nil {
				return invalid("* GenerateContentRequest.system_instruction.parts[%d]: only text parts are supported in a system instruction\n", j)
			}
		}
	}
	return nil
}

// validatePart requires exactly one kind of data and checks its values.
func validatePart(at string, p *Part) *Failure {
	set := []string{}
	if p.Text != nil {
		set = append(set, "text")
	}
	if p.InlineData != nil {
		set = append(set, "inlineData")
	}
	if p.FileData != nil {
		set = append(set, "fileData")
	}
	if p.FunctionCall != nil {
		set = append(set, "functionCall")
	}
	if p.FunctionResponse != nil {
		set = append(set, "functionResponse")
	}
	if p.ExecutableCode != nil {
		set = append(set, "executableCode")
	}
	if p.CodeExecResult != nil {
		set = append(set, "codeExecutionResult")
	}
	switch {
	case len(set) == 0:
		return invalid("* GenerateContentRequest.%s.data: required oneof field 'data' must have one initialized field\n", at)
	case len(set) > 1:
		return invalid("Invalid JSON payload received. Oneof field 'data' is already set. Cannot set '%s'", set[1])
	}
	if p.ThoughtSignature != "" {
		if _, ok := decodeBytes(p.ThoughtSignature); !ok {
			return invalid("Invalid value at '%s.thought_signature' (TYPE_BYTES), Base64 decoding failed for %q", at, p.ThoughtSignature)
		}
	}
	switch {
	case p.InlineData != nil:
		if p.InlineData.MIMEType == "" {
			return invalid("* GenerateContentRequest.%s.inline_data.mime_type: mime_type is not specified\n", at)
		}
		if _, err := base64.StdEncoding.DecodeString(p.InlineData.Data); err != nil {
			return invalid("Invalid value at '%s.inline_data.data' (TYPE_BYTES), Base64 decoding failed", at)
		}
	case p.FileData != nil:
		u, err := url.Parse(p.FileData.FileURI)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http" && u.Scheme != "gs") || u.Host == "" {
			return invalid("* GenerateContentRequest.%s.file_data.file_uri: Invalid or unsupported file uri: %s\n", at, p.FileData.FileURI)
		}
	case p.FunctionCall != nil:
		if p.FunctionCall.Name == "" {
			return invalid("* GenerateContentRequest.%s.function_call.name: Name cannot be empty.\n", at)
		}
		if !isObject(p.FunctionCall.Args, true) {
			return invalid("Invalid value at '%s.function_call.args' (type.googleapis.com/google.protobuf.Struct)", at)
		}
	case p.FunctionResponse != nil:
		if p.FunctionResponse.Name == "" {
			return invalid("* GenerateContentRequest.%s.function_response.name: Name cannot be empty.\n", at)
		}
		if !isObject(p.FunctionResponse.Response, false) {
			return invalid("Invalid value at '%s.function_response.response' (type.googleapis.com/google.protobuf.Struct)", at)
		}
	}
	return nil
}

// isObject reports whether raw is a JSON object (or absent, when allowed).
func isObject(raw json.RawMessage, absentOK bool) bool {
	if len(raw) == 0 {
		return absentOK
	}
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

var functionName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$`)

func validateTools(tools []Tool) *Failure {
	seen := map[string]bool{}
	for i, t := range tools {
		for j, d := range t.FunctionDeclarations {
			at := fmt.Sprintf("tools[%d].function_declarations[%d]", i, j)
			if !functionName.MatchString(d.Name) {
				return invalid("* GenerateContentRequest.%s.name: Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 128.\n", at)
			}
			if seen[d.Name] {
				return invalid("Duplicate function declaration found: %s", d.Name)
			}
			seen[d.Name] = true
			if d.Parameters != nil && d.ParametersJSONSchema != nil {
				return invalid("* GenerateContentRequest.%s: parameters and parameters_json_schema are mutually exclusive\n", at)
			}
			if d.ParametersJSONSchema != nil {
				var schema struct {
					Type any `json:"type"`
				}
				if json.Unmarshal(d.ParametersJSONSchema, &schema) != nil || schema.Type != "object" {
					return invalid("* GenerateContentRequest.%s.parameters_json_schema: the schema must describe an object (\"type\": \"object\")\n", at)
				}
			}
		}
	}
	return nil
}

func validateConfig(c *GenerationConfig) *Failure {
	if c == nil || c.ThinkingConfig == nil {
		return nil
	}
	tc := c.ThinkingConfig
	if tc.ThinkingBudget != nil && tc.ThinkingLevel != "" {
		return invalid("You can only set only one of thinking budget and thinking level.")
	}
	switch tc.ThinkingLevel {
	case "", "MINIMAL", "LOW", "MEDIUM", "HIGH", "THINKING_LEVEL_UNSPECIFIED":
	default:
		return invalid("Invalid value at 'generation_config.thinking_config.thinking_level' (type.googleapis.com/google.ai.generativelanguage.v1beta.ThinkingConfig.ThinkingLevel), %q", tc.ThinkingLevel)
	}
	return nil
}

func count(c *Content, call bool) int {
	n := 0
	for _, p := range c.Parts {
		if call && p.FunctionCall != nil || !call && p.FunctionResponse != nil {
			n++
		}
	}
	return n
}

// validateCallTurns requires every function call turn to follow a user
// turn and every function response turn to follow its call turn,
// answering each call.
func validateCallTurns(contents []Content) *Failure {
	for i := range contents {
		c := &contents[i]
		if calls := count(c, true); calls > 0 && c.Role == "model" {
			if i == 0 || contents[i-1].Role == "model" {
				return invalid(msgCallAfter)
			}
			if i+1 < len(contents) && count(&contents[i+1], false) != calls {
				return invalid(msgResponseCount)
			}
			if i+1 < len(contents) && !idsMatch(c, &contents[i+1]) {
				return invalid(msgResponseID)
			}
		}
		if count(c, false) > 0 {
			if i == 0 || contents[i-1].Role != "model" || count(&contents[i-1], true) == 0 {
				return invalid(msgResponseAfter)
			}
		}
	}
	return nil
}

// idsMatch reports whether the function responses answer the calls by
// their ids: a call Gemini gave an id must get a response with that id,
// and a response may name no call that was not made. Calls without ids
// are answered without them, matched by order.
func idsMatch(calls, responses *Content) bool {
	open := map[string]int{}
	for _, p := range calls.Parts {
		if p.FunctionCall != nil && p.FunctionCall.ID != "" {
			open[p.FunctionCall.ID]++
		}
	}
	for _, p := range responses.Parts {
		if r := p.FunctionResponse; r != nil && r.ID != "" {
			if open[r.ID] == 0 {
				return false
			}
			open[r.ID]--
		}
	}
	for _, n := range open {
		if n > 0 {
			return false
		}
	}
	return true
}

// validateSignatures checks every signature sent (it must be the model's
// own for that part, or a sentinel) and requires one on the first
// function call of each step of the current turn: the turn that began
// with the last user content that is not only function responses.
func (s *Server) validateSignatures(model string, contents []Content) *Failure {
	turn := 0
	for i := range contents {
		c := &contents[i]
		if c.Role != "model" && count(c, false) < len(c.Parts) {
			turn = i
		}
	}
	for i := range contents {
		c := &contents[i]
		if c.Role != "model" {
			continue
		}
		first := true
		for j := range c.Parts {
			p := &c.Parts[j]
			if p.ThoughtSignature != "" && !s.checkSignature(model, p) {
				return invalid(msgCorrupted)
			}
			if p.FunctionCall == nil {
				continue
			}
			if first && i > turn && p.ThoughtSignature == "" {
				return invalid(msgMissingSignature, p.FunctionCall.Name, i+1)
			}
			first = false
		}
	}
	return nil
}

// IsSentinel reports whether a signature as sent is one of the
// documented sentinels.
func IsSentinel(sig string) bool {
	raw, _ := decodeBytes(sig)
	for _, s := range Sentinels {
		if sig == s || string(raw) == s {
			return true
		}
	}
	return false
}
