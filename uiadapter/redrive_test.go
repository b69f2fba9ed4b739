package uiadapter_test

import (
	"bufio"
	"context"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/protocols/agui"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/runlog"
)

// dieMidStep leaves in the shared log what a run that can be run again
// leaves when its process dies while its model streams: as dieMidReply,
// with the run's input kept in its header.
func dieMidStep(t *testing.T, r *replica, protocol, chat string, stored ...cmf.Message) {
	t.Helper()
	hdr := runlog.Header{Run: "dead", Protocol: protocol, Base: 1, Turn: []cmf.Message{storyTurn()}, Reply: "a1",
		Lock: "the dead process's", Started: time.Now(), Input: []byte(`{}`)}
	leaveDeadLog(t, r, chat, hdr, []agent.Event{&agent.RunStarted{MessageID: "a1"}, &agent.StepStarted{Step: 1, MessageID: "a1"},
		&agent.PartStarted{Kind: agent.PartText, ID: "t"}, &agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: "Once upon"}}, stored...)
}

// A run whose process died while its model streamed goes on on the
// replica whose reader found it dead: the step is asked of the model
// again, and the reader's stream goes on, numbered on, to the reply's
// finish. The stored reply is the new step's, not the voided one's.
func TestADeadRunGoesOnOnAnotherReplica(t *testing.T) {
	rs := newReplicas(t)
	b := rs.start(nil)
	dieMidStep(t, b, "vercel-ai", "c", storyTurn())
	rest := restOf(t, b.follow("c"))
	for _, want := range []string{`"delta":"Once upon"`, `{"type":"text-end","id":"t"}`, `{"type":"finish-step"}`, `"type":"finish"`} {
		if !strings.Contains(rest, want) {
			t.Fatalf("the reader's stream lacks %s:\n%s", want, rest)
		}
	}
	if strings.Contains(rest, wire.DiedMessage) || !strings.Contains(rest, `{"type":"data-reset-step","data":{},"transient":true}`) {
		t.Fatalf("an AI SDK 6 reader's stream:\n%s", rest)
	}
	got := b.storedIn("c")
	if len(got) < 2 || got[0] != "u1 user: tell me a story" || slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "Once upon") }) {
		t.Fatalf("stored %q", got)
	}
	// A reader that comes once it is run again reads no voided step.
	req, _ := http.NewRequest(http.MethodGet, b.url+"/api/chat/c/stream", nil)
	req.Header.Set("Last-Event-ID", "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	late := strings.Join(testutil.ReadSSE(t, resp.Body), "\n")
	if strings.Contains(late, "Once upon") || !strings.Contains(late, `"type":"finish"`) {
		t.Fatalf("a late reader's stream:\n%s", late)
	}
}

// A reader whose client can replace a step's parts or its thread gets
// the voided step replaced: AI SDK 7's reset-step (the step that replaces
// it goes on under the same step-start), AG-UI's MESSAGES_SNAPSHOT of the
// thread without it.
func TestAVoidedStepIsReplacedForClientsThatCan(t *testing.T) {
	t.Run("AI SDK 7", func(t *testing.T) {
		rs := newReplicas(t)
		b := rs.startWith(vercelai.New(vercelai.WithAISDK7()), testutil.DemoLoop(t, nil), nil)
		dieMidStep(t, b, "vercel-ai", "c", storyTurn())
		rest := restOf(t, b.follow("c"))
		reset := strings.Index(rest, `{"type":"reset-step"}`)
		if reset < 0 || strings.Count(rest, `{"type":"start-step"}`) != 1 || !strings.Contains(rest[reset:], `"delta":"said: "`) {
			t.Fatalf("an AI SDK 7 reader's stream:\n%s", rest)
		}
	})
	t.Run("AG-UI", func(t *testing.T) {
		rs := newReplicas(t)
		b := rs.startWith(agui.New(), testutil.DemoLoop(t, nil), nil)
		dieMidStep(t, b, "ag-ui", "c", storyTurn())
		resp, err := http.Post(b.url+"/api/agui/connect", "application/json", strings.NewReader(`{"threadId":"c","runId":"r","messages":[],"tools":[],"context":[],"state":{},"forwardedProps":{}}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		rest := strings.Join(testutil.ReadSSE(t, resp.Body), "\n")
		snapshots := strings.Split(rest, `"type":"MESSAGES_SNAPSHOT"`)
		if len(snapshots) != 3 {
			t.Fatalf("an AG-UI reader's stream has %d snapshots, want the connect's and the reset's:\n%s", len(snapshots)-1, rest)
		}
		last := snapshots[2]
		if strings.Contains(last[:strings.Index(last, "\n")], "Once upon") || !strings.Contains(last, `"delta":"said: "`) || !strings.Contains(last, "RUN_FINISHED") {
			t.Fatalf("after the reset:\n%s", last)
		}
	})
}

// A step whose tool call had begun when its server died is kept (the
// model is not asked again, which would name the call anew), and the
// call's guarantee holds through the ledger: a finished call gives its
// recorded result, a started one is run again only when its tool is
// idempotent, and reported unknown otherwise.
func TestARedrivenRunKeepsItsToolCallsGuarantees(t *testing.T) {
	for _, c := range []struct {
		name       string
		idempotent bool
		finished   bool
		runs       int32
		result     string
	}{
		{"idempotent, started", true, false, 1, "sunny in Paris"},
		{"at most once, started", false, false, 0, agent.OutcomeUnknown},
		{"at most once, finished", false, true, 0, "recorded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var runs atomic.Int32
			weather := agent.FuncTool("get_weather", "Weather.", func(_ context.Context, in demo.WeatherInput) (string, error) {
				runs.Add(1)
				return "sunny in " + in.City, nil
			})
			weather.Idempotent = c.idempotent
			rs := newReplicas(t)
			b := rs.startWith(vercelai.New(), testutil.DemoLoopWith(t, weather), nil)
			ctx := context.Background()
			key := history.Key{Scope: "single", Chat: "c"}
			l := b.store.(history.Ledger)
			if _, _, err := l.BeginCall(ctx, key, "c1", history.CallRecord{Tool: "get_weather", Started: time.Now()}); err != nil {
				t.Fatal(err)
			}
			if c.finished {
				if err := l.FinishCall(ctx, key, "c1", history.CallRecord{Tool: "get_weather", Output: []byte(`"recorded"`)}); err != nil {
					t.Fatal(err)
				}
			}
			hdr := runlog.Header{Run: "dead", Protocol: "vercel-ai", Base: 1, Turn: []cmf.Message{storyTurn()}, Reply: "a1",
				Lock: "the dead process's", Started: time.Now(), Input: []byte(`{}`)}
			leaveDeadLog(t, b, "c", hdr, []agent.Event{&agent.RunStarted{MessageID: "a1"}, &agent.StepStarted{Step: 1, MessageID: "a1"},
				&agent.PartEnded{Kind: agent.PartToolCall, ID: "c1", Part: cmf.ToolCall{ToolCallID: "c1", Name: "get_weather", Arguments: []byte(`{"city":"Paris"}`)}}},
				storyTurn())
			rest := restOf(t, b.follow("c"))
			if strings.Contains(rest, "data-reset-step") || !strings.Contains(rest, `"type":"finish"`) {
				t.Fatalf("the reader's stream:\n%s", rest)
			}
			if got := runs.Load(); got != c.runs {
				t.Fatalf("the tool ran %d times, want %d", got, c.runs)
			}
			stored := strings.Join(b.storedIn("c"), "\n")
			if strings.Count(stored, "tool: ") != 1 || !strings.Contains(rest, c.result) {
				t.Fatalf("stored:\n%s\nstream:\n%s", stored, rest)
			}
		})
	}
}

// A replica that shuts down while another shares its run log hands its
// run over at the next step boundary instead of cutting it: the other
// runs the next step, and the client reading the reply on the first
// reads it to its end, with no error, as one reply.
func TestShutdownHandsRunsOver(t *testing.T) {
	gate := make(chan struct{})
	var runs atomic.Int32
	weather := agent.FuncTool("get_weather", "Weather.", func(ctx context.Context, in demo.WeatherInput) (map[string]any, error) {
		runs.Add(1)
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return map[string]any{"forecast": "sunny", "temperature_c": 21}, nil
	})
	rs := newReplicas(t)
	a := rs.startWith(vercelai.New(), testutil.DemoLoopWith(t, weather), nil)
	b := rs.startWith(vercelai.New(), testutil.DemoLoopWith(t, weather), nil)
	reader := bufio.NewReader(a.send("c", "u1", "what is the weather in Paris?").Body)
	testutil.Eventually(t, 10*time.Second, "the tool to run", func() bool { return runs.Load() == 1 })
	shut := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() { shut <- a.h.Shutdown(ctx) }()
	testutil.Eventually(t, 10*time.Second, "the replica to shut down", func() bool { return strings.Contains(a.logs.String(), "handing the runs in progress over") })
	close(gate)
	rest := restOf(t, reader)
	if err := <-shut; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if !strings.Contains(rest, `"delta":"21°C."`) || strings.Count(rest, `"type":"start"`) != 1 || strings.Contains(rest, `"type":"error"`) || !strings.HasSuffix(strings.TrimSpace(rest), "data: [DONE]") {
		t.Fatalf("the client's stream on the replica that shut down:\n%s", rest)
	}
	if !strings.Contains(b.logs.String(), "goes on here") || runs.Load() != 1 {
		t.Fatalf("the other replica did not take the run over (tool runs %d):\n%s", runs.Load(), b.logs.String())
	}
	got := strings.Join(b.storedIn("c"), "\n")
	if strings.Count(got, "The weather in Paris") != 1 || strings.Contains(got, "aborted") {
		t.Fatalf("stored:\n%s", got)
	}
}

// Alone, a replica that shuts down cuts its runs at the grace period,
// as before: nobody would go on with them.
func TestShutdownAloneCutsRuns(t *testing.T) {
	gate := make(chan struct{})
	defer close(gate)
	weather := agent.FuncTool("get_weather", "Weather.", func(ctx context.Context, in demo.WeatherInput) (string, error) {
		select {
		case <-gate:
		case <-ctx.Done():
		}
		return "", ctx.Err()
	})
	a := newReplicas(t).startWith(vercelai.New(), testutil.DemoLoopWith(t, weather), nil)
	reader := bufio.NewReader(a.send("c", "u1", "what is the weather in Paris?").Body)
	if _, err := reader.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_ = a.h.Shutdown(ctx)
	if rest := restOf(t, reader); !strings.Contains(rest, wire.ShutdownMessage) || strings.Contains(a.logs.String(), "handing the runs") {
		t.Fatalf("a lone replica's stream at shutdown:\n%s", rest)
	}
}
