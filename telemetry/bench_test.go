package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/telemetry"
)

// discard is a span exporter that drops what it is given: tracing on,
// exporting to nowhere.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkTracing is S1 (8 clients stream `count to 1000` replies, 1,007
// frames each, from one handler without history) with telemetry off (no
// interceptor, no HTTP wrapper: what a server without it runs) and on
// (spans batched to an exporter that drops them, metrics recorded).
// events/s is frames per second over all clients. make bench-telemetry
// runs five interleaved rounds (docs/benchmarks.md).
func BenchmarkTracing(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := map[bool]string{false: "off", true: "on"}[on]
		b.Run(name, func(b *testing.B) {
			var loopOpts []agent.Option
			var wrap func(http.Handler) http.Handler
			if on {
				tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discard{}))
				mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
				b.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
				opts := []telemetry.Option{telemetry.WithTracerProvider(tp), telemetry.WithMeterProvider(mp)}
				loopOpts = append(loopOpts, agent.WithInterceptors(testutil.Must(telemetry.Interceptor(opts...))))
				wrap = func(h http.Handler) http.Handler { return telemetry.Handler(h, opts...) }
			}
			loop := testutil.Must(agent.New(demo.New(), append(loopOpts, agent.WithTools(demo.Tools()...))...))
			var h http.Handler = testutil.Must(vercelai.Handler(loop))
			if wrap != nil {
				h = wrap(h)
			}
			srv := httptest.NewServer(h)
			b.Cleanup(srv.Close)
			testutil.StreamS1(b, srv.URL)
		})
	}
}
