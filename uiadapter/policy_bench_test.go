package uiadapter_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/policy"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

// BenchmarkPolicyS1 is S1 (8 clients stream `count to 1000`, no history)
// with no guard, with a trivial Go policy (allow) at the input and tool
// points (text streams as it comes), and at every point, output included
// (each text part is held until it is decided, so a reply's 1,000 deltas
// stream as one: compare replies/s). make bench-policy runs five
// interleaved rounds (docs/benchmarks.md).
func BenchmarkPolicyS1(b *testing.B) {
	allow := func(context.Context, *policy.Input) (policy.Decision, error) { return policy.Allow(), nil }
	for _, tc := range []struct {
		name   string
		points []agent.Point // nil: no guard
		frames int64
	}{
		{"none", nil, 1007},
		{"trivial", []agent.Point{agent.PointInput, agent.PointPreTool, agent.PointPostTool}, 1007},
		{"trivial-all", []agent.Point{agent.PointInput, agent.PointPreTool, agent.PointPostTool, agent.PointOutput}, 8},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var opts []uiadapter.Option
			if tc.points != nil {
				engine := testutil.Must(policy.New([]policy.Policy{{Name: "allow", Points: tc.points, Decide: allow}},
					policy.WithLogger(slog.New(slog.DiscardHandler))))
				opts = append(opts, uiadapter.WithGuard(engine))
			}
			loop := testutil.Must(agent.New(demo.New(), agent.WithTools(demo.Tools()...)))
			srv := httptest.NewServer(testutil.Must(vercelai.Handler(loop, opts...)))
			b.Cleanup(srv.Close)
			testutil.StreamS1Frames(b, srv.URL, tc.frames)
		})
	}
}
