package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/agentui/agentui/internal/testutil"
)

// receiver is an OTLP/HTTP receiver: it decodes what the exporters post
// to /v1/traces and /v1/metrics and keeps the span and metric names.
type receiver struct {
	mu      sync.Mutex
	spans   []string
	metrics []string
	service string
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
