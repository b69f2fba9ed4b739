package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracev1 "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/agentui/agentui/internal/testkit/testutil"
)

// receiver is an OTLP/HTTP receiver: it decodes what the exporters post
// to /v1/traces and /v1/metrics and keeps the span and metric names (and
// the spans, and how many bytes of spans came).
type receiver struct {
	mu      sync.Mutex
	spans   []string
	metrics []string
	service string
	all     []*tracev1.Span
	bytes   int
	// refuse, when set, is the status every export of spans gets.
	refuse int
}

// addSpans keeps the span names and the service of an export (rc.mu
// held).
func (rc *receiver) addSpans(req *colltrace.ExportTraceServiceRequest) {
	for _, rs := range req.ResourceSpans {
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				rc.service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				rc.spans = append(rc.spans, s.Name)
			}
			rc.all = append(rc.all, ss.Spans...)
		}
	}
}

// addMetrics keeps the metric names of an export (rc.mu held).
func (rc *receiver) addMetrics(req *collmetrics.ExportMetricsServiceRequest) {
	for _, rm := range req.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				rc.metrics = append(rc.metrics, m.Name)
			}
		}
	}
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var reply proto.Message
	switch r.URL.Path {
	case "/v1/traces":
		if rc.refuse != 0 {
			http.Error(w, "refused", rc.refuse)
			return
		}
		rc.bytes += len(body)
		var req colltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rc.addSpans(&req)
		reply = &colltrace.ExportTraceServiceResponse{}
	case "/v1/metrics":
		var req collmetrics.ExportMetricsServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rc.addMetrics(&req)
		reply = &collmetrics.ExportMetricsServiceResponse{}
	default:
		http.NotFound(w, r)
		return
	}
	b, _ := proto.Marshal(reply)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

// grpcReceiver is an OTLP/gRPC trace receiver keeping the span names.
type grpcReceiver struct {
	colltrace.UnimplementedTraceServiceServer
	rc *receiver
}

func (g *grpcReceiver) Export(_ context.Context, req *colltrace.ExportTraceServiceRequest) (*colltrace.ExportTraceServiceResponse, error) {
	g.rc.mu.Lock()
	defer g.rc.mu.Unlock()
	g.rc.addSpans(req)
	return &colltrace.ExportTraceServiceResponse{}, nil
}

// metricsReceiver is the metrics half (its Export has another signature).
type metricsReceiver struct {
	collmetrics.UnimplementedMetricsServiceServer
	rc *receiver
}

func (m *metricsReceiver) Export(_ context.Context, req *collmetrics.ExportMetricsServiceRequest) (*collmetrics.ExportMetricsServiceResponse, error) {
	m.rc.mu.Lock()
	defer m.rc.mu.Unlock()
	m.rc.addMetrics(req)
	return &collmetrics.ExportMetricsServiceResponse{}, nil
}

// With OTEL_EXPORTER_OTLP_PROTOCOL=grpc the binary exports over OTLP/gRPC.
func TestExportsOTLPOverGRPC(t *testing.T) {
	rc := &receiver{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	colltrace.RegisterTraceServiceServer(gs, &grpcReceiver{rc: rc})
	collmetrics.RegisterMetricsServiceServer(gs, &metricsReceiver{rc: rc})
	go func() { _ = gs.Serve(ln) }()
	t.Cleanup(gs.Stop)
	p := testutil.RunProgram(t, ".", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + ln.Addr().String(), "OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "OTEL_EXPORTER_OTLP_INSECURE=true"},
		"-addr", "127.0.0.1:0", "-demo-delay", "0s")
	testutil.PostStream(t, p.URL+"/api/chat", testutil.UserMessage("c1", "u1", "hello"))
	p.Signal(t, syscall.SIGTERM)
	if err := p.Exited(t, 20*time.Second); err != nil {
		t.Fatalf("exit: %v\n%s", err, p.Stderr)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if !slices.Contains(rc.spans, "invoke_agent agentui") || !slices.Contains(rc.metrics, "agentui.runs") {
		t.Fatalf("over gRPC: spans %q, metrics %q", rc.spans, rc.metrics)
	}
}

// With OTEL_EXPORTER_OTLP_ENDPOINT set, the real binary exports its
// spans and metrics over OTLP/HTTP (protobuf), and flushes them when it
// stops.
func TestExportsOTLP(t *testing.T) {
	rc := &receiver{}
	collector := httptest.NewServer(rc)
	t.Cleanup(collector.Close)
	p := testutil.RunProgram(t, ".", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + collector.URL, "OTEL_SERVICE_NAME=agentui-test"},
		"-addr", "127.0.0.1:0", "-demo-delay", "0s")
	testutil.PostStream(t, p.URL+"/api/chat", testutil.UserMessage("c1", "u1", "weather in Paris"))
	p.Signal(t, syscall.SIGTERM)
	if err := p.Exited(t, 20*time.Second); err != nil {
		t.Fatalf("exit: %v\n%s", err, p.Stderr)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, want := range []string{"POST /api/chat", "invoke_agent agentui", "chat agentui-demo", "execute_tool get_weather"} {
		if !slices.Contains(rc.spans, want) {
			t.Errorf("no %q span among %q", want, rc.spans)
		}
	}
	for _, want := range []string{"gen_ai.client.token.usage", "gen_ai.client.operation.duration", "agentui.runs", "http.server.request.duration"} {
		if !slices.Contains(rc.metrics, want) {
			t.Errorf("no %q metric among %q", want, rc.metrics)
		}
	}
	if rc.service != "agentui-test" {
		t.Errorf("service.name %q", rc.service)
	}
}

// An exporter flood, over real sockets: while clients send 6 MB
// chat ids, user agents that are not UTF-8, 900 KB paths and ids full of
// terminal escapes, every ordinary user's run still reaches the
// collector, every string exported is valid UTF-8 with nothing hidden and
// at most 1 KiB, and nothing reaches stderr outside slog.
func TestExportSurvivesHostileClients(t *testing.T) {
	t.Parallel()
	rc := &receiver{}
	collector := httptest.NewServer(rc)
	t.Cleanup(collector.Close)
	p := testutil.RunProgram(t, ".", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + collector.URL, "OTEL_METRICS_EXPORTER=none"},
		"-addr", "127.0.0.1:0", "-demo-delay", "0s")
	send := func(method, path, body string, header ...string) {
		req, _ := http.NewRequest(method, p.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	huge := strings.Repeat("h", 6<<20)
	longPath := "/api/chat/" + strings.Repeat("p", 900<<10) + "/stream"
	const users = 10
	for i := range users {
		for range 2 {
			send("POST", "/api/chat", testutil.UserMessage(huge+strconv.Itoa(i), "m1", "count to 3"))
			send("POST", "/api/chat", testutil.UserMessage("ua-"+strconv.Itoa(i), "m1", "count to 3"), "User-Agent", "agent\xff\xfe/1.0")
			send("GET", longPath, "")
			send("POST", "/api/chat", testutil.UserMessage("\x1b[2J\u202eexe.txt\x00-"+strconv.Itoa(i), "m1", "count to 3"))
		}
		testutil.PostStream(t, p.URL+"/api/chat", testutil.UserMessage("user-"+strconv.Itoa(i), "m1", "count to 3"))
	}
	p.Signal(t, syscall.SIGTERM)
	if err := p.Exited(t, 30*time.Second); err != nil {
		t.Fatalf("exit: %v\n%.2000s", err, p.Stderr)
	}

	rc.mu.Lock()
	defer rc.mu.Unlock()
	arrived, longest := map[string]bool{}, 0
	check := func(where, s string) {
		longest = max(longest, len(s))
		if !utf8.ValidString(s) || len(s) > 1024 || strings.ContainsFunc(s, func(r rune) bool {
			return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
		}) {
			t.Errorf("%s: a %d-byte value %.80q", where, len(s), s)
		}
	}
	for _, s := range rc.all {
		check("span name", s.Name)
		for _, kv := range s.Attributes {
			v := kv.GetValue().GetStringValue()
			check(s.Name+" "+kv.Key, v)
			if kv.Key == "gen_ai.conversation.id" && strings.HasPrefix(s.Name, "invoke_agent") {
				arrived[v] = true
			}
		}
	}
	n := 0
	for i := range users {
		if arrived["user-"+strconv.Itoa(i)] {
			n++
		}
	}
	t.Logf("ordinary users' runs exported: %d of %d; spans received %d, %d bytes; longest string %d bytes", n, users, len(rc.all), rc.bytes, longest)
	if n != users {
		t.Errorf("%d of %d ordinary users' runs reached the collector", n, users)
	}
	for _, line := range strings.Split(strings.TrimSpace(p.Stderr.String()), "\n") {
		if !strings.HasPrefix(line, "time=") || strings.Contains(line, "telemetry: ") {
			t.Errorf("stderr: %.300s", line)
		}
	}
}

// When the collector refuses spans, the binary says so through slog, at
// WARN, like everything else it logs.
func TestExportErrorsAreLogged(t *testing.T) {
	rc := &receiver{refuse: http.StatusBadRequest}
	collector := httptest.NewServer(rc)
	t.Cleanup(collector.Close)
	p := testutil.RunProgram(t, ".", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + collector.URL, "OTEL_METRICS_EXPORTER=none"},
		"-addr", "127.0.0.1:0", "-demo-delay", "0s")
	testutil.PostStream(t, p.URL+"/api/chat", testutil.UserMessage("c1", "m1", "hello"))
	p.Signal(t, syscall.SIGTERM)
	if err := p.Exited(t, 20*time.Second); err != nil {
		t.Fatalf("exit: %v\n%s", err, p.Stderr)
	}
	logged := false
	for _, line := range strings.Split(strings.TrimSpace(p.Stderr.String()), "\n") {
		if !strings.HasPrefix(line, "time=") {
			t.Errorf("not through slog: %s", line)
		}
		logged = logged || strings.Contains(line, "level=WARN") && strings.Contains(line, "400")
	}
	if !logged {
		t.Errorf("no WARN about the refused export:\n%s", p.Stderr)
	}
}
