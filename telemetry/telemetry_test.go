package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/protocols/agui"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/telemetry"
)

// fixture serves /api/chat (no history) with the telemetry interceptor on
// the loop and the telemetry handler around the mux, recording spans and
// metrics in memory.
type fixture struct {
	url     string
	aguiURL string
	spans   *tracetest.SpanRecorder
	reader  *sdkmetric.ManualReader
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(f.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(f.reader))
	opts := []telemetry.Option{telemetry.WithTracerProvider(tp), telemetry.WithMeterProvider(mp),
		telemetry.WithPropagator(propagation.TraceContext{}), telemetry.WithAgentName("demo"), telemetry.WithModel("agentui-demo", "agentui")}
	ic := testutil.Must(telemetry.Interceptor(opts...))
	loop := testutil.Must(agent.New(demo.New(), agent.WithTools(demo.Tools()...), agent.WithInterceptors(ic)))
	h := testutil.Must(vercelai.Handler(loop))
	mux := http.NewServeMux()
	mux.Handle("POST /api/chat", h)
	mux.Handle("POST /api/agui", testutil.Must(agui.Handler(loop)))
	srv := httptest.NewServer(telemetry.Handler(mux, opts...))
	t.Cleanup(srv.Close)
	f.url = srv.URL + "/api/chat"
	f.aguiURL = srv.URL + "/api/agui"
	return f
}

// ended waits until n spans have ended (a run's span ends just after its
// stream) and returns them.
func (f *fixture) ended(t *testing.T, n int) []sdktrace.ReadOnlySpan {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, "the spans to end", func() bool { return len(f.spans.Ended()) >= n })
	return f.spans.Ended()
}

func named(spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

func attr(s sdktrace.ReadOnlySpan, key string) attribute.Value {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// A run is one trace under the caller's: the HTTP server span continues
// the incoming traceparent, invoke_agent is its child, and each model call
// (chat) and tool call (execute_tool) is the run's child, with the GenAI
// attributes; the GenAI and agentui metrics count the same.
func TestSpansAndMetrics(t *testing.T) {
	f := newFixture(t)
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	testutil.PostStream(t, f.url, testutil.UserMessage("c1", "u1", "weather in Paris"),
		"Traceparent", "00-"+traceID+"-"+parentID+"-01")
	spans := f.ended(t, 5)

	server := named(spans, "POST /api/chat")
	run := named(spans, "invoke_agent demo")
	chats := named(spans, "chat agentui-demo")
	tools := named(spans, "execute_tool get_weather")
	if len(server) != 1 || len(run) != 1 || len(chats) != 2 || len(tools) != 1 {
		var names []string
		for _, s := range spans {
			names = append(names, s.Name())
		}
		t.Fatalf("spans %q", names)
	}
	if got := server[0].SpanContext().TraceID().String(); got != traceID || server[0].Parent().SpanID().String() != parentID {
		t.Fatalf("the server span is not the caller's child: trace %s, parent %s", got, server[0].Parent().SpanID())
	}
	if run[0].Parent().SpanID() != server[0].SpanContext().SpanID() {
		t.Fatal("invoke_agent is not the HTTP span's child")
	}
	for _, s := range append(chats, tools...) {
		if s.Parent().SpanID() != run[0].SpanContext().SpanID() || s.SpanContext().TraceID().String() != traceID {
			t.Fatalf("%s is not the run's child", s.Name())
		}
	}
	r := run[0]
	for key, want := range map[string]string{
		"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "demo", "gen_ai.conversation.id": "c1",
		"gen_ai.provider.name": "agentui", "gen_ai.response.model": "agentui-demo", "agentui.run.outcome": "finished",
		"agentui.protocol": "vercel-ai",
	} {
		if got := attr(r, key).String(); got != want {
			t.Errorf("invoke_agent %s = %q, want %q", key, got, want)
		}
	}
	if attr(r, "gen_ai.usage.output_tokens").AsInt64() <= 0 || attr(r, "gen_ai.response.finish_reasons").AsStringSlice()[0] != "stop" {
		t.Errorf("invoke_agent usage or finish reasons: %v", r.Attributes())
	}
	c := chats[0]
	if c.SpanKind() != trace.SpanKindClient || attr(c, "gen_ai.operation.name").AsString() != "chat" || attr(c, "gen_ai.request.model").AsString() != "agentui-demo" ||
		attr(c, "gen_ai.usage.input_tokens").AsInt64() <= 0 || attr(c, "gen_ai.response.finish_reasons").AsStringSlice()[0] != "tool-calls" {
		t.Errorf("chat span: %v %v", c.SpanKind(), c.Attributes())
	}
	tool := tools[0]
	if attr(tool, "gen_ai.operation.name").AsString() != "execute_tool" || attr(tool, "gen_ai.tool.name").AsString() != "get_weather" ||
		attr(tool, "gen_ai.tool.call.id").AsString() == "" || attr(tool, "gen_ai.tool.type").AsString() != "function" {
		t.Errorf("execute_tool span: %v", tool.Attributes())
	}

	m := collect(t, f.reader)
	if n := histogramCount(m["gen_ai.client.operation.duration"]); n != 2 {
		t.Errorf("gen_ai.client.operation.duration: %d model calls, want 2", n)
	}
	if n := histogramCount(m["gen_ai.client.operation.time_to_first_chunk"]); n != 2 {
		t.Errorf("time to first chunk: %d, want 2", n)
	}
	if in, out := tokenSum(m["gen_ai.client.token.usage"], "input"), tokenSum(m["gen_ai.client.token.usage"], "output"); in <= 0 || out <= 0 {
		t.Errorf("token usage: %d in, %d out", in, out)
	}
	if n := counter(m["agentui.runs"], "agentui.run.outcome", "finished"); n != 1 {
		t.Errorf("agentui.runs{finished} = %d", n)
	}
	if n := counter(m["agentui.runs.active"], "", ""); n != 0 {
		t.Errorf("agentui.runs.active = %d after the run", n)
	}
	if n := counter(m["agentui.streams.open"], "", ""); n != 0 {
		t.Errorf("agentui.streams.open = %d after the stream", n)
	}
	if histogramCount(m["http.server.request.duration"]) != 1 {
		t.Errorf("no HTTP server metric: %v", m["http.server.request.duration"])
	}
}

// The outcomes of a failed and of a cancelled run.
func TestFailedAndCancelledRuns(t *testing.T) {
	f := newFixture(t)
	testutil.PostStream(t, f.url, testutil.UserMessage("c1", "u1", "fail"))
	run := named(f.ended(t, 3), "invoke_agent demo")
	if len(run) != 1 || run[0].Status().Code != codes.Error || attr(run[0], "agentui.run.outcome").AsString() != "failed" || attr(run[0], "error.type").AsString() == "" {
		t.Fatalf("failed run: %v %v", run[0].Status(), run[0].Attributes())
	}

	// Without history a client that leaves cancels its run.
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.url, strings.NewReader(testutil.UserMessage("c2", "u1", "wait 60000 ms")))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	testutil.Eventually(t, 5*time.Second, "the cancelled run's span", func() bool {
		return len(named(f.spans.Ended(), "invoke_agent demo")) == 2
	})
	cancelled := named(f.spans.Ended(), "invoke_agent demo")[1]
	if got := attr(cancelled, "agentui.run.outcome").AsString(); got != "cancelled" || cancelled.Status().Code == codes.Error {
		t.Fatalf("cancelled run: outcome %q, status %v", got, cancelled.Status())
	}
	m := collect(t, f.reader)
	if counter(m["agentui.runs"], "agentui.run.outcome", "failed") != 1 || counter(m["agentui.runs"], "agentui.run.outcome", "cancelled") != 1 {
		t.Fatalf("agentui.runs: %+v", m["agentui.runs"])
	}
}

// Ids are the client's, so they are checked before a run starts: an id
// holding a terminal escape, a bidi override or NUL is refused and leaves
// no run span, and a printable id in any script is recorded as sent.
func TestClientIDsInSpans(t *testing.T) {
	f := newFixture(t)
	const bad = "c\x1b[2J\u202eexe.txt\x00"
	for _, post := range []struct{ url, body string }{
		{f.url, testutil.UserMessage(bad, "u1", "hello")},
		{f.aguiURL, testutil.AGUIInput("t1", bad, "hello")},
	} {
		resp, err := http.Post(post.url, "application/json", strings.NewReader(post.body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("POST %s with a control character in an id: %d, want 400", post.url, resp.StatusCode)
		}
	}
	const id = "chat-ü·東京"
	testutil.PostStream(t, f.url, testutil.UserMessage(id, "u1", "hello"))
	testutil.PostStream(t, f.aguiURL, testutil.AGUIInput("t1", id, "hello"))
	testutil.Eventually(t, 5*time.Second, "both runs' spans", func() bool {
		return len(named(f.spans.Ended(), "invoke_agent demo")) >= 2
	})
	runs := named(f.spans.Ended(), "invoke_agent demo")
	if len(runs) != 2 {
		t.Fatalf("%d run spans, want 2: a refused request started a run", len(runs))
	}
	for _, run := range runs {
		key := map[string]string{"vercel-ai": "gen_ai.conversation.id", "ag-ui": "agentui.run.id"}[attr(run, "agentui.protocol").AsString()]
		if got := attr(run, key).AsString(); got != id {
			t.Errorf("%s = %q, want %q", key, got, id)
		}
	}
}

func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

func histogramCount(a metricdata.Aggregation) uint64 {
	var n uint64
	switch h := a.(type) {
	case metricdata.Histogram[float64]:
		for _, p := range h.DataPoints {
			n += p.Count
		}
	case metricdata.Histogram[int64]:
		for _, p := range h.DataPoints {
			n += p.Count
		}
	}
	return n
}

func tokenSum(a metricdata.Aggregation, kind string) int64 {
	h, _ := a.(metricdata.Histogram[int64])
	var n int64
	for _, p := range h.DataPoints {
		if v, ok := p.Attributes.Value("gen_ai.token.type"); ok && v.AsString() == kind {
			n += p.Sum
		}
	}
	return n
}

// counter sums a counter's points, those with key=value when key is set.
func counter(a metricdata.Aggregation, key, value string) int64 {
	s, _ := a.(metricdata.Sum[int64])
	var n int64
	for _, p := range s.DataPoints {
		if v, ok := p.Attributes.Value(attribute.Key(key)); key == "" || ok && v.AsString() == value {
			n += p.Value
		}
	}
	return n
}
