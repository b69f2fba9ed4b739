package conformance

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	anthropicfake "github.com/agentui/agentui/internal/testkit/fakes/anthropic"
	geminifake "github.com/agentui/agentui/internal/testkit/fakes/gemini"
	responsesfake "github.com/agentui/agentui/internal/testkit/fakes/responses"
)

// The native models the servers of these tests offer (-models), two of
// each provider so a chat can switch within a provider and across them.
// Each is answered by its provider's validating fake.
var nativeModels = map[string][2]string{
	"anthropic": {"anthropic:claude-opus-4-6", "anthropic:claude-sonnet-4-6"},
	"responses": {"openai-responses:gpt-5", "openai-responses:o4-mini"},
	"gemini":    {"gemini:gemini-3-flash-preview", "gemini:gemini-3-pro-preview"},
}

// nativeSpecs are the models as -models lists them; the first is the
// default.
func nativeSpecs() []string {
	var out []string
	for _, p := range []string{"anthropic", "responses", "gemini"} {
		out = append(out, nativeModels[p][0], nativeModels[p][1])
	}
	return out
}

// providerFakes are the three providers' fakes, each answering every
// request with the scripted model below. They refuse what the real APIs
// refuse (a signature, thought signature or reasoning item that is
// missing, altered, moved or from another model; a tool result without
// its call), so a chat that passes replayed the right values.
type providerFakes struct {
	anthropic *anthropicfake.Server
	responses *responsesfake.Server
	gemini    *geminifake.Server
}

// anthropicCacheMin is the shortest prefix the Anthropic fake caches, in
// its tokens. The API's minimum is 1,024; the binary's instructions and
// tools are shorter, so the fake's is lowered for the cache to show.
const anthropicCacheMin = 256

func startProviderFakes(t *testing.T) *providerFakes {
	var ids atomic.Int64
	return &providerFakes{
		anthropic: anthropicfake.New(t, anthropicfake.WithMinCacheTokens(anthropicCacheMin), anthropicfake.WithResponder(func(r *anthropicfake.Request) anthropicfake.Reply {
			a := answer(anthropicSeen(r))
			content := []anthropicfake.Block{anthropicfake.Thinking(a.thinking)}
			if a.text != "" {
				content = append(content, anthropicfake.Text(a.text))
			}
			if a.call != "" {
				content = append(content, anthropicfake.ToolUse(fmt.Sprintf("toolu_%06d", ids.Add(1)), a.call, a.args))
			}
			return anthropicfake.Reply{Content: content}
		})),
		responses: responsesfake.New(t, responsesfake.WithResponder(func(r *responsesfake.Request) responsesfake.Reply {
			a := answer(responsesSeen(r))
			out := []responsesfake.Item{responsesfake.Reasoning(a.thinking)}
			if a.text != "" {
				out = append(out, responsesfake.Text(a.text))
			}
			if a.call != "" {
				out = append(out, responsesfake.Call(a.call, a.args))
			}
			return responsesfake.Reply{Output: out}
		})),
		gemini: geminifake.New(t, geminifake.WithResponder(func(r *geminifake.Request) geminifake.Reply {
			a := answer(geminiSeen(r))
			parts := []geminifake.ReplyPart{geminifake.Thought(a.thinking)}
			if a.text != "" {
				parts = append(parts, geminifake.Text(a.text))
			}
			if a.call != "" {
				parts = append(parts, geminifake.CallPart(a.call, a.args))
			}
			return geminifake.Reply{Parts: parts}
		})),
	}
}

// env points the models at the fakes: keys and base URLs, as an
// operator sets them.
func (f *providerFakes) env() []string {
	return []string{
		"ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL=" + f.anthropic.URL,
		"OPENAI_API_KEY=test-key", "OPENAI_BASE_URL=" + f.responses.URL,
		"GEMINI_API_KEY=test-key", "GOOGLE_API_KEY=", "GOOGLE_GEMINI_BASE_URL=" + f.gemini.URL,
	}
}

// setenv sets env for the servers this process runs.
func (f *providerFakes) setenv(t *testing.T) {
	for _, kv := range f.env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// seen is what the scripted model reads of a request: the user's text
// messages, and the tool results the request ends with (this step
// answers them).
type seen struct {
	users   []string
	results []string
}

// scripted is what the scripted model says: it always thinks first, then
// says text, calls a tool, or both.
type scripted struct {
	thinking, text string
	call, args     string
}

// answer is the scripted model: "delete <path>" asks for delete_file
// (which needs the user's approval), "weather" calls get_weather (which
// runs at once), tool results get "Done (turn N): <results>", anything
// else "Reply N: <text>", N being the user messages the request holds,
// so a reply shows that the whole history reached the model.
func answer(s seen) scripted {
	n := len(s.users)
	last := ""
	if n > 0 {
		last = s.users[n-1]
	}
	switch {
	case len(s.results) > 0:
		return scripted{thinking: "The tool has answered; I report it.", text: fmt.Sprintf("Done (turn %d): %s", n, strings.Join(s.results, "; "))}
	case strings.Contains(last, "delete "):
		path := strings.Fields(last[strings.Index(last, "delete ")+len("delete "):])[0]
		args, _ := json.Marshal(map[string]string{"path": path})
		return scripted{thinking: "The user wants " + path + " deleted; the user must approve it.", text: "I will delete " + path + ".", call: "delete_file", args: string(args)}
	case strings.Contains(last, "weather"):
		return scripted{thinking: "I should look the weather up.", call: "get_weather", args: `{"city":"Paris"}`}
	}
	return scripted{thinking: "A plain message: I answer it.", text: fmt.Sprintf("Reply %d: %s", n, last)}
}

// anthropicSeen reads a Messages API request.
func anthropicSeen(r *anthropicfake.Request) seen {
	var s seen
	msgs := r.Messages()
	for i, m := range msgs {
		if m["role"] != "user" {
			continue
		}
		var texts, results []string
		switch c := m["content"].(type) {
		case string:
			texts = append(texts, c)
		case []any:
			for _, b := range c {
				b, _ := b.(map[string]any)
				switch b["type"] {
				case "text":
					texts = append(texts, fmt.Sprint(b["text"]))
				case "tool_result":
					results = append(results, textOf(b["content"]))
				}
			}
		}
		switch {
		case len(results) > 0 && i == len(msgs)-1:
			s.results = results
		case len(results) == 0 && len(texts) > 0:
			s.users = append(s.users, strings.Join(texts, ""))
		}
	}
	return s
}

// responsesSeen reads a Responses API request.
func responsesSeen(r *responsesfake.Request) seen {
	var s seen
	items := r.Items()
	for _, it := range items {
		if t := it["type"]; (t == nil || t == "message") && it["role"] == "user" {
			s.users = append(s.users, textOf(it["content"]))
		}
	}
	for i := len(items) - 1; i >= 0 && items[i]["type"] == "function_call_output"; i-- {
		s.results = append([]string{textOf(items[i]["output"])}, s.results...)
	}
	return s
}

// geminiSeen reads a streamGenerateContent request.
func geminiSeen(r *geminifake.Request) seen {
	var s seen
	if r.Parsed == nil {
		return s
	}
	contents := r.Parsed.Contents
	for i, c := range contents {
		if c.Role != "user" {
			continue
		}
		var texts, results []string
		for _, p := range c.Parts {
			switch {
			case p.FunctionResponse != nil:
				results = append(results, string(p.FunctionResponse.Response))
			case p.Text != nil && !p.Thought:
				texts = append(texts, *p.Text)
			}
		}
		switch {
		case len(results) > 0 && i == len(contents)-1:
			s.results = results
		case len(results) == 0 && len(texts) > 0:
			s.users = append(s.users, strings.Join(texts, ""))
		}
	}
	return s
}

// textOf is the text of a content value: a string, or blocks with text.
func textOf(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var b strings.Builder
		for _, x := range v {
			if m, ok := x.(map[string]any); ok {
				if t, ok := m["text"].(string); ok {
					b.WriteString(t)
				}
			}
		}
		return b.String()
	}
	return ""
}
