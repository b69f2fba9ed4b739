// Package demo is a deterministic model for demos, examples and tests. It
// needs no network and answers the last user message by a fixed grammar,
// documented in docs/demo-model.md; that grammar is a contract other tests
// rely on.
package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/ids"
)

// MaxCount is the largest N "count to N" accepts.
const MaxCount = 100000

// ModelName is the model name the demo reports with its usage.
const ModelName = "agentui-demo"

// Provider is the provider name the demo reports with its usage.
const Provider = "agentui"

// ErrFailed is the error the model returns for "fail".
var ErrFailed = errors.New("demo: the model failed, as asked")

// ErrUnreachable is the error the model returns for "fail at once", before
// any output: it wraps [agent.ErrModelUnreachable], so a client is told
// what a real model's outage tells it.
var ErrUnreachable = fmt.Errorf("demo: no output, as asked: %w", agent.ErrModelUnreachable)

// Model is the demo model. The zero value streams without delays.
type Model struct {
	wordDelay time.Duration
	name      string
}

// Option configures the demo model.
type Option func(*Model)

// WithWordDelay pauses between the words of prose replies ("You said: …"
// and thinking), so a browser shows them streaming. Counting is never
// delayed. The default is no delay.
func WithWordDelay(d time.Duration) Option { return func(m *Model) { m.wordDelay = d } }

// WithName sets the model name the demo reports with its usage (default
// ModelName): two demo models offered side by side (agent.Models) tell
// the page which one answered.
func WithName(name string) Option { return func(m *Model) { m.name = name } }

// New returns a demo model.
func New(opts ...Option) *Model {
	m := &Model{name: ModelName}
	for _, o := range opts {
		o(m)
	}
	return m
}

var (
	reCount    = regexp.MustCompile(`(?i)\bcount to (\d+)\b`)
	reWait     = regexp.MustCompile(`(?i)\bwait (\d+) ?ms\b`)
	reSet      = regexp.MustCompile(`(?i)^\s*set (\S+) to (.+?)\s*$`)
	reWeather  = regexp.MustCompile(`(?i)\bweather in ([^?!.,;]+)`)
	reResearch = regexp.MustCompile(`(?i)^\s*research (.+?)\s*$`)
	reDelete   = regexp.MustCompile(`(?i)\bdelete (\S+)`)
	reWhere    = regexp.MustCompile(`(?i)\bwhere am i\b`)
	reCall     = regexp.MustCompile(`(?is)^\s*call (\S+)\s*(\{.*\})?\s*$`)
)

// Stream answers the last user message. See docs/demo-model.md.
func (m *Model) Stream(ctx context.Context, req *agent.Request) iter.Seq2[agent.Chunk, error] {
	return func(yield func(agent.Chunk, error) bool) {
		// Most answers stream without a pause, so they would not notice
		// a context cancelled before the call: a call no one waits for
		// must not pass for an answered one.
		if err := ctx.Err(); err != nil {
			yield(agent.Chunk{}, err)
			return
		}
		t := turnOf(req)
		s := &stream{ctx: ctx, yield: yield, delay: m.wordDelay, name: m.name, usage: agent.Usage{InputTokens: countWords(req.LastTurn())}}
		s.answer(t, req)
	}
}

// turn is the model's view of the conversation: the last user message and
// what happened after it.
type turn struct {
	text    string                    // the last user message's text
	started bool                      // the model already answered it once (a tool round trip)
	calls   map[string]cmf.ToolCall   // this turn's calls, by tool name
	results map[string]cmf.ToolResult // their results, by tool name
}

func turnOf(req *agent.Request) turn {
	t := turn{calls: map[string]cmf.ToolCall{}, results: map[string]cmf.ToolResult{}}
	msgs := req.LastTurn()
	if len(msgs) == 0 || msgs[0].Role != cmf.RoleUser {
		return t
	}
	t.text = strings.TrimSpace(msgs[0].Text())
	names := map[string]string{} // call id → tool name
	for _, msg := range msgs[1:] {
		if msg.Role == cmf.RoleAssistant {
			t.started = true
		}
		for _, p := range msg.Content {
			switch p := p.(type) {
			case cmf.ToolCall:
				t.calls[p.Name] = p
				names[p.ToolCallID] = p.Name
			case cmf.ToolResult:
				if name, ok := names[p.ToolCallID]; ok {
					t.results[name] = p
				}
			}
		}
	}
	return t
}

type stream struct {
	ctx     context.Context
	yield   func(agent.Chunk, error) bool
	delay   time.Duration
	name    string
	usage   agent.Usage
	stopped bool
}

func (s *stream) send(c *agent.Chunk) bool {
	if s.stopped {
		return false
	}
	if c.Kind == agent.ChunkText || c.Kind == agent.ChunkThinking || c.Kind == agent.ChunkToolCall {
		s.usage.OutputTokens++
	}
	if !s.yield(*c, nil) {
		s.stopped = true
	}
	return !s.stopped
}

// delta sends a text, reasoning or tool-call delta. It builds the chunk
// in the call rather than copying one: deltas are most of what a model
// sends.
func (s *stream) delta(kind agent.ChunkKind, delta string) bool {
	if s.stopped {
		return false
	}
	s.usage.OutputTokens++
	if !s.yield(agent.Chunk{Kind: kind, Delta: delta}, nil) {
		s.stopped = true
	}
	return !s.stopped
}

func (s *stream) fail(err error) {
	if !s.stopped {
		s.stopped = true
		s.yield(agent.Chunk{}, err)
	}
}

func (s *stream) finish(reason cmf.StopReason) {
	s.usage.TotalTokens = s.usage.InputTokens + s.usage.OutputTokens
	s.send(&agent.Chunk{Kind: agent.ChunkFinish, StopReason: reason, Usage: s.usage, Model: s.name, Provider: Provider})
}

// words streams text one word at a time (each delta keeps its trailing
// space), pausing between words when a delay is set.
func (s *stream) words(kind agent.ChunkKind, text string) bool {
	for i, w := range strings.SplitAfter(text, " ") {
		if w == "" {
			continue
		}
		if i > 0 && s.delay > 0 && !s.sleep(s.delay) {
			return false
		}
		if !s.delta(kind, w) {
			return false
		}
	}
	return true
}

func (s *stream) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.ctx.Done():
		s.fail(s.ctx.Err())
		return false
	}
}

func (s *stream) say(text string) {
	if s.words(agent.ChunkText, text) {
		s.finish(cmf.StopEnd)
	}
}

// callTool streams a tool call; its arguments arrive in two fragments, as
// real models send them.
func (s *stream) callTool(name string, args any) {
	raw, _ := json.Marshal(args)
	id := "call_" + ids.New()
	half := len(raw) / 2
	if s.send(&agent.Chunk{Kind: agent.ChunkToolCall, ToolCallID: id, ToolName: name}) &&
		s.send(&agent.Chunk{Kind: agent.ChunkToolCall, ToolCallID: id, Delta: string(raw[:half])}) &&
		s.send(&agent.Chunk{Kind: agent.ChunkToolCall, ToolCallID: id, Delta: string(raw[half:])}) {
		s.finish(cmf.StopCall)
	}
}

func (s *stream) answer(t turn, req *agent.Request) {
	lower := strings.ToLower(t.text)
	if strings.Contains(lower, "think") && !t.started {
		if !s.words(agent.ChunkThinking, "Thinking about: "+t.text) {
			return
		}
	}
	switch {
	case strings.Contains(lower, "/context"):
		s.describeContext(req)
	case lower == "markdown":
		s.say(MarkdownSample)
	case lower == "fail":
		if s.delta(agent.ChunkText, "Working on it") {
			s.fail(ErrFailed)
		}
	case lower == "fail at once":
		s.fail(ErrUnreachable)
	case reCall.MatchString(t.text) && isOffered(req, reCall.FindStringSubmatch(t.text)[1]):
		name := reCall.FindStringSubmatch(t.text)[1]
		if r, ok := t.results[name]; ok {
			if r.IsError {
				s.say(name + " failed: " + errorText(r))
			} else {
				s.say(name + " returned: " + string(r.Content))
			}
			return
		}
		s.callTool(name, callArgs(t.text))
	case reSet.MatchString(t.text):
		g := reSet.FindStringSubmatch(t.text)
		s.setState(req.State, g[1], g[2])
	case reCount.MatchString(t.text) && countOK(reCount.FindStringSubmatch(t.text)[1]):
		n, _ := strconv.Atoi(reCount.FindStringSubmatch(t.text)[1])
		s.count(n)
	case reWait.MatchString(t.text):
		ms, err := strconv.Atoi(reWait.FindStringSubmatch(t.text)[1])
		if err != nil {
			ms = 0
		}
		if s.sleep(time.Duration(ms) * time.Millisecond) {
			s.say("done")
		}
	case reResearch.MatchString(t.text):
		topic := reResearch.FindStringSubmatch(t.text)[1]
		s.tool(t, "research", map[string]string{"topic": topic}, func(out map[string]any) string {
			return "Research on " + topic + ": " + str(out["summary"])
		}, func(errText string) string { return "I could not research " + topic + ": " + errText })
	case reWeather.MatchString(t.text):
		city := strings.TrimSpace(reWeather.FindStringSubmatch(t.text)[1])
		s.tool(t, "get_weather", map[string]string{"city": city}, func(out map[string]any) string {
			return "The weather in " + city + " is " + str(out["forecast"]) + ", " + str(out["temperature_c"]) + "°C."
		}, func(errText string) string { return "I could not get the weather in " + city + ": " + errText })
	case reDelete.MatchString(t.text):
		path := strings.TrimRight(reDelete.FindStringSubmatch(t.text)[1], "?!,;:")
		s.tool(t, "delete_file", map[string]string{"path": path}, func(out map[string]any) string {
			if deleted := str(out["deleted"]); deleted != "" {
				return "Deleted " + deleted + "." // the approver may have edited the path
			}
			return "Deleted " + path + "."
		}, func(errText string) string {
			if rest, ok := strings.CutPrefix(errText, deniedPrefix); ok {
				if reason, ok := strings.CutPrefix(rest, " Reason: "); ok {
					return "Okay, I did not delete " + path + " (reason: " + reason + ")."
				}
				return "Okay, I did not delete " + path + "."
			}
			return "Deleting " + path + " failed: " + errText
		})
	case reWhere.MatchString(t.text):
		s.tool(t, "get_location", map[string]string{}, func(out map[string]any) string {
			return "You are in " + str(out["city"]) + "."
		}, func(errText string) string { return "I could not find your location: " + errText })
	default:
		s.words(agent.ChunkText, "You said: "+t.text)
		s.finish(cmf.StopEnd)
	}
}

// MarkdownSample is the demo's answer to "markdown": a heading, bold and
// italic text, inline code, a list, a fenced Go block and a table, so a
// page can show how it renders each.
const MarkdownSample = "## A markdown sample\n\n" +
	"Some **bold** text, some *italics* and `inline code`.\n\n" +
	"- first item\n- second item\n- third item\n\n" +
	"```go\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n```\n\n" +
	"| Tool | Runs |\n|---|---|\n| get_weather | on the server |\n| get_location | in the page |\n"

// deniedPrefix starts the result the agent loop gives a denied call.
const deniedPrefix = "The user denied this tool call."

// tool calls name with args on the first answer, and turns its result into
// text on the second.
func (s *stream) tool(t turn, name string, args any, ok func(map[string]any) string, failed func(string) string) {
	r, done := t.results[name]
	if !done {
		s.callTool(name, args)
		return
	}
	if r.IsError {
		s.say(failed(errorText(r)))
		return
	}
	var out map[string]any
	_ = json.Unmarshal(r.Content, &out)
	s.say(ok(out))
}

func (s *stream) count(n int) {
	var text string // the numbers still to send, each followed by a space
	for i := 1; i <= n; i++ {
		if text == "" {
			// Every countBatch numbers: stop if the run is cancelled, and
			// write the next batch's text at once; each delta is a slice
			// of it, so a delta costs no allocation of its own.
			if i > 1 && s.ctx.Err() != nil {
				s.fail(s.ctx.Err())
				return
			}
			text = countText(i, min(n, i+countBatch-1))
		}
		end := strings.IndexByte(text, ' ') + 1
		if !s.delta(agent.ChunkText, text[:end]) {
			return
		}
		text = text[end:]
	}
	s.finish(cmf.StopEnd)
}

// countBatch is how many numbers count writes in one go.
const countBatch = 1024

// countText is "from from+1 … to " (each number followed by a space). It
// counts on decimal digits rather than formatting each number: the
// demo stands in for a model, so its own cost should not hide the
// server's in a benchmark.
func countText(from, to int) string {
	var b strings.Builder
	b.Grow((to - from + 1) * (len(strconv.Itoa(to)) + 1))
	digits := strconv.AppendInt(make([]byte, 0, 20), int64(from), 10)
	for i := from; i <= to; i++ {
		b.Write(digits)
		b.WriteByte(' ')
		j := len(digits) - 1
		for ; j >= 0 && digits[j] == '9'; j-- {
			digits[j] = '0'
		}
		if j >= 0 {
			digits[j]++
		} else {
			digits = append([]byte{'1'}, digits...)
		}
	}
	return b.String()
}

// setState changes the shared state: a snapshot when the client's state is
// absent or empty, else an RFC 6902 add or replace of /key.
func (s *stream) setState(state json.RawMessage, key, value string) {
	v := json.RawMessage(value)
	if !json.Valid(v) || strings.HasPrefix(value, "{") || strings.HasPrefix(value, "[") || strings.HasPrefix(value, `"`) {
		v, _ = json.Marshal(value)
	}
	var cur map[string]json.RawMessage
	hasState := json.Unmarshal(state, &cur) == nil && len(cur) > 0
	if !hasState {
		snap, _ := json.Marshal(map[string]json.RawMessage{key: v})
		if !s.send(&agent.Chunk{Kind: agent.ChunkStateSnapshot, Value: snap}) {
			return
		}
	} else {
		op := "add"
		if _, exists := cur[key]; exists {
			op = "replace"
		}
		patch, _ := json.Marshal([]map[string]any{{"op": op, "path": "/" + escapePointer(key), "value": v}})
		if !s.send(&agent.Chunk{Kind: agent.ChunkStateDelta, Value: patch}) {
			return
		}
	}
	s.say("Set " + key + " to " + value + ".")
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// describeContext answers with a JSON description of every message the
// model received, so tests can see what sanitization and history merging
// delivered.
func (s *stream) describeContext(req *agent.Request) {
	type msg struct {
		Role  string   `json:"role"`
		Parts []string `json:"parts"`
		Text  string   `json:"text"`
	}
	out := make([]msg, 0, req.Len())
	for m := range req.All() {
		d := msg{Role: string(m.Role), Parts: []string{}}
		for _, p := range m.Content {
			d.Parts = append(d.Parts, describePart(p))
		}
		d.Text = firstRunes(m.Text(), 200)
		out = append(out, d)
	}
	b, _ := json.Marshal(out)
	if s.send(&agent.Chunk{Kind: agent.ChunkText, Delta: string(b)}) {
		s.finish(cmf.StopEnd)
	}
}

func describePart(p cmf.Part) string {
	switch p := p.(type) {
	case cmf.ToolCall:
		return "tool_call:" + p.Name
	case cmf.ToolResult:
		return "tool_result:" + p.ToolName
	}
	if src, ok := cmf.Media(p); ok {
		if src.Type == cmf.SourceBase64 {
			return string(p.ContentType()) + ":base64"
		}
		scheme := ""
		if u, err := url.Parse(src.Data); err == nil {
			scheme = strings.ToLower(u.Scheme)
		}
		return string(p.ContentType()) + ":" + scheme
	}
	return string(p.ContentType())
}

func firstRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

func countOK(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 1 && n <= MaxCount
}

func isOffered(req *agent.Request, name string) bool {
	if builtin[name] {
		return false
	}
	for _, t := range req.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

func errorText(r cmf.ToolResult) string {
	var s string
	if json.Unmarshal(r.Content, &s) == nil {
		return s
	}
	return string(r.Content)
}

func str(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func countWords(msgs []cmf.Message) int64 {
	var n int64
	for i := range msgs {
		n += int64(len(strings.Fields(msgs[i].Text())))
	}
	return n
}

// callArgs is the arguments "call <name> <JSON>" gives: the JSON, {} when
// none, and text that is not JSON as a string (which the loop refuses, as
// it would a real model's). A function of its own: answer's frame is on
// the stack of every streamed event (internal/server TestStreamFitsStartingStack).
func callArgs(text string) any {
	raw := reCall.FindStringSubmatch(text)[2]
	switch {
	case raw == "":
		return map[string]any{}
	case json.Valid([]byte(raw)):
		return json.RawMessage(raw)
	}
	return raw
}
