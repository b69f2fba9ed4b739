package uiadapter_test

import (
	"context"
	"iter"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
)

// A run interceptor knows whose run it wraps (agent.RunInfoFrom): here
// each user gets instructions of their own, and the model sees them.
func TestInterceptorInstructionsPerUser(t *testing.T) {
	perUser := agent.RunInterceptor(func(next agent.RunFunc) agent.RunFunc {
		return func(ctx context.Context, in *agent.Input) iter.Seq2[agent.Event, error] {
			ri, ok := agent.RunInfoFrom(ctx)
			if !ok {
				t.Error("a run without RunInfo")
			}
			own := *in
			own.Instructions = "You help " + ri.Scope + " in " + ri.ChatID + " over " + ri.Protocol + "."
			return next(ctx, &own)
		}
	})
	loop := testutil.Must(agent.New(demo.New(), agent.WithTools(demo.Tools()...), agent.WithInterceptors(perUser)))
	f := newHistoryFixtureWith(t, history.NewMemory(), loop)
	for _, user := range []string{"alice", "bob"} {
		got := f.chat(user, testutil.UserMessage("c-"+user, "u1", "/context")).Text()
		if want := "You help " + user + " in c-" + user + " over vercel-ai."; !strings.Contains(got, want) {
			t.Errorf("%s: the model saw %s\nwant %q", user, got, want)
		}
	}
}
