package agent

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentui/agentui/cmf"
)

type userKey struct{}

// perUser is what an application's run interceptor does with the user
// its HTTP middleware put in the context: instructions of the user's own,
// a tool only that user has, and model settings.
func perUser(next RunFunc) RunFunc {
	return func(ctx context.Context, in *Input) iter.Seq2[Event, error] {
		user, _ := ctx.Value(userKey{}).(string)
		own := *in // the caller's input stays as it was
		own.Instructions = in.Instructions + " Address the user as " + user + "."
		if user == "alice" {
			own.Tools = append(slices.Clip(in.Tools), FuncTool("vault", "Alice's vault.", func(context.Context, struct{}) (string, error) {
				return "gold", nil
			}))
			t := 0.2
			own.Settings = &ModelSettings{Temperature: &t}
		}
		return next(ctx, &own)
	}
}

func TestInterceptorChangesInstructionsToolsAndSettingsPerUser(t *testing.T) {
	for _, user := range []string{"alice", "bob"} {
		t.Run(user, func(t *testing.T) {
			m := &scripted{replies: []reply{
				{chunks: concat(toolCall("v1", "vault", `{}`), []Chunk{finish(cmf.StopCall)})},
				{chunks: text("done")},
			}}
			l := newLoop(t, m, nil, WithInterceptors(RunInterceptor(perUser)))
			in := &Input{Messages: []cmf.Message{userMsg("open the vault")}, Instructions: "Be brief."}
			ctx := context.WithValue(context.Background(), userKey{}, user)
			events, err := collect(t, l, ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if in.Instructions != "Be brief." || in.Tools != nil {
				t.Fatal("the interceptor changed the caller's input")
			}
			req := m.requests[0]
			if got := req.System[0].Text(); got != "Be brief. Address the user as "+user+"." {
				t.Fatalf("instructions: %q", got)
			}
			res := last[*ToolResult](t, events)
			hasVault := slices.ContainsFunc(req.Tools, func(s ToolSpec) bool { return s.Name == "vault" })
			switch user {
			case "alice":
				if !hasVault || res.IsError || string(res.Output) != `"gold"` || req.Settings == nil || *req.Settings.Temperature != 0.2 {
					t.Fatalf("alice: tools %v, result %s, settings %+v", req.Tools, res.Output, req.Settings)
				}
			case "bob":
				if hasVault || !res.IsError || req.Settings != nil {
					t.Fatalf("bob has alice's tool or settings: tools %v, result %s", req.Tools, res.Output)
				}
			}
		})
	}
}

// A run interceptor sees every event: here it counts usage, and sees how
// each run ended: finished, cancelled (RunFinished with StopAborted) or
// failed (the error).
func TestInterceptorSeesUsageAndOutcomes(t *testing.T) {
	var mu sync.Mutex
	var outcomes []string
	var tokens int64
	account := func(next RunFunc) RunFunc {
		return func(ctx context.Context, in *Input) iter.Seq2[Event, error] {
			return func(yield func(Event, error) bool) {
				outcome := "stopped early"
				defer func() {
					mu.Lock()
					outcomes = append(outcomes, outcome)
					mu.Unlock()
				}()
				for ev, err := range next(ctx, in) {
					switch {
					case err != nil:
						outcome = "failed: " + err.Error()
					default:
						if f, ok := ev.(*RunFinished); ok {
							outcome = string(f.StopReason)
							mu.Lock()
							tokens += f.Usage.InputTokens + f.Usage.OutputTokens
							mu.Unlock()
						}
					}
					if !yield(ev, err) {
						return
					}
				}
			}
		}
	}
	m := &scripted{replies: []reply{
		{chunks: text("one", "two")}, // 3 in, 2 out
		{chunks: []Chunk{{Kind: ChunkText, Delta: "wait"}}, block: true},
		{err: errors.New("model down")},
	}}
	l := newLoop(t, m, nil, WithInterceptors(RunInterceptor(account)))
	in := func() *Input { return &Input{Messages: []cmf.Message{userMsg("hi")}} }

	if _, err := collect(t, l, context.Background(), in()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for ev := range l.Run(ctx, in()) {
		if _, ok := ev.(*PartDelta); ok {
			cancel() // the user stopped the reply mid-stream
		}
	}
	if _, err := collect(t, l, context.Background(), in()); err == nil {
		t.Fatal("the failing model did not fail the run")
	}
	want := []string{string(cmf.StopEnd), string(cmf.StopAborted), "failed: model down"}
	if !slices.Equal(outcomes, want) || tokens != 5 {
		t.Fatalf("outcomes %q, tokens %d; want %q, 5", outcomes, tokens, want)
	}
}

// Model and tool interceptors see each call, and may change what goes in
// and what comes out; the first interceptor given is the outermost.
func TestInterceptorOrderModelAndToolCalls(t *testing.T) {
	var trace []string
	var mu sync.Mutex
	note := func(s string) {
		mu.Lock()
		trace = append(trace, s)
		mu.Unlock()
	}
	named := func(name string) Interceptor {
		return struct {
			RunInterceptor
		}{func(next RunFunc) RunFunc {
			return func(ctx context.Context, in *Input) iter.Seq2[Event, error] {
				note("run " + name)
				return next(ctx, in)
			}
		}}
	}
	models := ModelInterceptor(func(next ModelFunc) ModelFunc {
		return func(ctx context.Context, req *Request) iter.Seq2[Chunk, error] {
			note("model call with " + string(req.Messages[len(req.Messages)-1].Role))
			return next(ctx, req)
		}
	})
	tools := ToolInterceptor(func(next ToolFunc) ToolFunc {
		return func(ctx context.Context, call ToolCall) (json.RawMessage, error) {
			note("tool " + call.Name + " " + string(call.Args))
			call.Args = json.RawMessage(`{"city":"Oslo"}`) // a tool interceptor may rewrite the call
			out, err := next(ctx, call)
			return json.RawMessage(strings.Replace(string(out), "sunny", "SUNNY", 1)), err
		}
	})
	m := &scripted{replies: []reply{
		{chunks: concat(toolCall("w", "get_weather", `{"city":"Paris"}`), []Chunk{finish(cmf.StopCall)})},
		{chunks: text("ok")},
	}}
	l := newLoop(t, m, nil, WithInterceptors(named("outer"), models, named("inner"), tools))
	events, err := collect(t, l, context.Background(), &Input{Messages: []cmf.Message{userMsg("weather?")}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"run outer", "run inner", "model call with user", `tool get_weather {"city":"Paris"}`, "model call with tool"}
	if !slices.Equal(trace, want) {
		t.Fatalf("trace %q\nwant  %q", trace, want)
	}
	if res := last[*ToolResult](t, events); !strings.Contains(string(res.Output), `"city":"Oslo"`) || !strings.Contains(string(res.Output), "SUNNY") {
		t.Fatalf("result %s", res.Output)
	}
}

// A run's tool may not take a name another tool has.
func TestRunToolNameClash(t *testing.T) {
	l := newLoop(t, &scripted{}, nil)
	in := &Input{Messages: []cmf.Message{userMsg("hi")}, Tools: []Tool{{Name: "get_weather", Execute: func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil }}}}
	if _, err := collect(t, l, context.Background(), in); err == nil || !strings.Contains(err.Error(), "get_weather") {
		t.Fatalf("err = %v", err)
	}
}
