package modeltest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
)

// key is the API key the suite builds models with ([Config.APIKey]).
const key = "modeltest-key-5f1c9a7e3b"

// Run runs the contract suite on the models h builds, each check a
// subtest of t.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if err := h.check(); err != nil {
		t.Fatal(err)
	}
	s := &suite{h: h}
	t.Run("usage", s.usage)
	t.Run("stop reasons", s.stopReasons)
	t.Run("values of other models are not sent", s.foreignValues)
	t.Run("own values come back", s.ownValues)
	t.Run("retries are bounded", s.retries)
	t.Run("faults mean the agent errors", s.faults)
	t.Run("cancellation", s.cancellation)
}

// check says what a harness lacks that the suite needs.
func (h *Harness) check() error {
	if h.Start == nil || h.Model == "" {
		return errors.New("modeltest: a Harness needs Start and Model")
	}
	for c, why := range h.Absent {
		if !slices.Contains(capabilities, c) {
			return fmt.Errorf("modeltest: Harness.Absent names %q, which is not a capability", c)
		}
		if strings.TrimSpace(why) == "" {
			return fmt.Errorf("modeltest: Harness.Absent[%q] needs the reason it is absent", c)
		}
	}
	if _, absent := h.Absent[ProviderValues]; !absent && (h.Provider == "" || h.OtherModel == "" || h.OtherModel == h.Model) {
		return errors.New("modeltest: a model that keeps provider values needs a Provider, and an OtherModel besides Model")
	}
	return nil
}

type suite struct {
	h Harness
}

func (s *suite) lacks(c Capability) bool {
	_, absent := s.h.Absent[c]
	return absent
}

// needs skips the test, saying why, when the harness lacks one of caps.
func (s *suite) needs(t *testing.T, caps ...Capability) {
	t.Helper()
	for _, c := range caps {
		if why, absent := s.h.Absent[c]; absent {
			t.Skipf("needs %s, which the harness says are absent: %s", c, why)
		}
	}
}

func (s *suite) start(t *testing.T) Backend {
	t.Helper()
	b := s.h.Start(t)
	if b == nil {
		t.Fatal("modeltest: Harness.Start returned no backend")
	}
	return b
}

// model builds a model over b; cfg's zero fields are the harness's model
// and the suite's key.
func (s *suite) model(t *testing.T, b Backend, cfg Config) agent.Model {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = s.h.Model
	}
	if cfg.APIKey == "" {
		cfg.APIKey = key
	}
	m, err := b.Model(cfg)
	if err != nil {
		t.Fatalf("building the model (%+v): %v", cfg, err)
	}
	return m
}

// result is what one call streamed.
type result struct {
	chunks []agent.Chunk
	finish *agent.Chunk
	err    error
}

// text is the answer text the call streamed.
func (r *result) text() string {
	var b strings.Builder
	for _, c := range r.chunks {
		if c.Kind == agent.ChunkText {
			b.WriteString(c.Delta)
		}
	}
	return b.String()
}

// call makes one call of model (named name) and holds what streams to
// the chunk contract.
func (s *suite) call(t *testing.T, ctx context.Context, m agent.Model, name string, req *agent.Request) result {
	t.Helper()
	var r result
	for c, err := range m.Stream(ctx, req) {
		if err != nil {
			r.err = err
			break
		}
		if r.finish != nil {
			t.Errorf("a chunk of kind %d came after the finish chunk", c.Kind)
		}
		if c.Kind == agent.ChunkFinish {
			fin := c
			r.finish = &fin
		}
		if c.Opaque != nil {
			s.checkTag(t, c.Opaque, name, "a chunk")
		}
		r.chunks = append(r.chunks, c)
	}
	switch {
	case r.err != nil && r.finish != nil:
		t.Errorf("the stream failed after its finish chunk: %v", r.err)
	case r.err == nil && r.finish == nil:
		t.Error("the stream ended with neither a finish chunk nor an error")
	case r.finish != nil:
		checkFinish(t, r.finish)
	}
	return r
}

// checkTag holds a value the model produced to its tag: the provider's,
// and the model's that produced it.
func (s *suite) checkTag(t *testing.T, o *cmf.Opaque, model, where string) {
	t.Helper()
	if o.Provider != s.h.Provider || o.Model != model {
		t.Errorf("a value on %s is tagged provider %q, model %q; want %q, %q", where, o.Provider, o.Model, s.h.Provider, model)
	}
	if o.Data == "" {
		t.Errorf("a value on %s has no data", where)
	}
}

// checkFinish holds a finish chunk to the conventions of docs/models.md.
func checkFinish(t *testing.T, c *agent.Chunk) {
	t.Helper()
	if !c.StopReason.Valid() {
		t.Errorf("the stop reason %q is not one of cmf's", c.StopReason)
	}
	u := c.Usage
	if u.IsZero() {
		return // a model that reports no usage
	}
	if u.InputTokens < 0 || u.OutputTokens < 0 || u.ReasoningTokens < 0 || u.CachedInputTokens < 0 || u.CacheWriteTokens < 0 {
		t.Errorf("usage %+v has a negative count", u)
	}
	if u.TotalTokens != u.InputTokens+u.OutputTokens {
		t.Errorf("usage %+v: total is not input + output", u)
	}
	if u.ReasoningTokens > u.OutputTokens {
		t.Errorf("usage %+v: reasoning tokens are part of the output, so no more than it", u)
	}
	if u.CachedInputTokens+u.CacheWriteTokens > u.InputTokens {
		t.Errorf("usage %+v: cache reads and writes are part of the input, so no more than it", u)
	}
}

// runTurn runs one turn through the agent loop, as a server does, and
// returns the messages it added (what a server stores) and how it ended.
func runTurn(t *testing.T, loop *agent.Loop, in *agent.Input) ([]cmf.Message, *agent.RunFinished, error) {
	t.Helper()
	rec := agent.NewRecorder()
	var fin *agent.RunFinished
	for ev, err := range loop.Run(context.Background(), in) {
		if err != nil {
			return rec.Messages(), nil, err
		}
		rec.Add(ev)
		if f, ok := ev.(*agent.RunFinished); ok {
			fin = f
		}
	}
	return rec.Messages(), fin, nil
}

func user(text string) cmf.Message {
	return cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: text}}}
}

func ask(text string) *agent.Request {
	return &agent.Request{Messages: []cmf.Message{user(text)}}
}

// lookup is the tool the suite's scripted calls call.
var lookup = agent.FuncTool("lookup", "Looks up the weather in a city.", func(_ context.Context, in struct {
	Q string `json:"q"`
}) (map[string]string, error) {
	return map[string]string{"city": in.Q, "forecast": "sunny"}, nil
})

var lookupSpec = agent.ToolSpec{Name: "lookup", Description: "Looks up the weather in a city.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)}

const lookupArgs = `{"q":"Oslo"}`

// contains reports whether a request body carries s, as it is or escaped
// as a JSON string.
func contains(body []byte, s string) bool {
	if strings.Contains(string(body), s) {
		return true
	}
	q, _ := json.Marshal(s)
	return strings.Contains(string(body), string(q[1:len(q)-1]))
}
