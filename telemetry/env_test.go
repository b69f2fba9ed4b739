package telemetry_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentui/agentui/telemetry"
)

// What the HTTP instrumentation records from a request (a user agent
// that is not UTF-8, a path of megabytes) leaves CleanExporter cleaned:
// in attributes, events, links, names and statuses; a span with nothing
// to clean is passed on as it is.
func TestCleanExporter(t *testing.T) {
	mem := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(telemetry.CleanExporter(mem, 64)))
	tracer := tp.Tracer("test")
	_, plain := tracer.Start(context.Background(), "GET /api/chats", trace.WithAttributes(attribute.String("user_agent.original", "Mozilla/5.0")))
	plain.End()
	link := trace.Link{SpanContext: plain.SpanContext(), Attributes: []attribute.KeyValue{attribute.String("why", "\x1b]0;title\x07")}}
	_, s := tracer.Start(context.Background(), "GET\u202e", trace.WithLinks(link), trace.WithAttributes(
		attribute.String("user_agent.original", "agent\xff/1.0"),
		attribute.String("url.path", "/api/chat/"+strings.Repeat("p", 900<<10)),
		attribute.StringSlice("tags", []string{"ok", "bad\x00"}),
		attribute.Int("n", 1)))
	s.RecordError(errors.New("no such file: \x1b[31m/etc\x00"))
	s.SetStatus(codes.Error, "failed \xc3")
	s.End()

	spans := mem.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans", len(spans))
	}
	if got := spans[0].Attributes[0].Value.AsString(); got != "Mozilla/5.0" {
		t.Errorf("a clean span changed: %q", got)
	}
	got := spans[1]
	want := map[string]string{"user_agent.original": `agent\xff/1.0`, "url.path": "/api/chat/" + strings.Repeat("p", 64-len("/api/chat/…")) + "…"}
	for _, kv := range got.Attributes {
		if w, ok := want[string(kv.Key)]; ok && kv.Value.AsString() != w {
			t.Errorf("%s = %q, want %q", kv.Key, kv.Value.AsString(), w)
		}
		if kv.Key == "tags" && kv.Value.AsStringSlice()[1] != `bad\x00` || kv.Key == "n" && kv.Value.AsInt64() != 1 {
			t.Errorf("%s = %v", kv.Key, kv.Value.String())
		}
	}
	if got.Name != `GET\u202e` || got.Status.Description != `failed \xc3` ||
		got.Events[0].Attributes[1].Value.AsString() != `no such file: \x1b[31m/etc\x00` || got.Links[0].Attributes[0].Value.AsString() != `\x1b]0;title\x07` {
		t.Errorf("name %q, status %q, event %v, link %v", got.Name, got.Status.Description, got.Events[0].Attributes, got.Links[0].Attributes)
	}
}

// SetLogger: OpenTelemetry's errors (a failed export) are slog records.
func TestSetLogger(t *testing.T) {
	var buf bytes.Buffer
	telemetry.SetLogger(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { telemetry.SetLogger(slog.Default()) })
	otel.Handle(errors.New("traces export: 400 Bad Request"))
	if got := buf.String(); !strings.Contains(got, `level=WARN msg="telemetry: traces export: 400 Bad Request"`) {
		t.Fatalf("logged %q", got)
	}
}

// The provider FromEnv builds bounds string values while spans wait to be
// exported: DefaultAttributeValueLength, or what
// OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT says.
func TestFromEnvBoundsAttributeValues(t *testing.T) {
	collector := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(collector.Close)
	prev := otel.GetTracerProvider()
	t.Cleanup(func() { otel.SetTracerProvider(prev) })
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	for _, tc := range []struct {
		env  string
		want int
	}{{"", telemetry.DefaultAttributeValueLength}, {"100", 100}} {
		t.Setenv("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", tc.env)
		p, err := telemetry.FromEnv(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		rec := tracetest.NewSpanRecorder()
		p.Tracer.RegisterSpanProcessor(rec)
		_, s := p.Tracer.Tracer("test").Start(context.Background(), "GET", trace.WithAttributes(attribute.String("url.path", strings.Repeat("p", 900<<10))))
		s.End()
		if err := p.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := len(rec.Ended()[0].Attributes()[0].Value.AsString()); got != tc.want {
			t.Errorf("limit %q: a %d-byte value", tc.env, got)
		}
	}
	// The SDK would take a limit that does not parse for none.
	t.Setenv("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "1k")
	if _, err := telemetry.FromEnv(context.Background()); err == nil || err.Error() != `OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT: "1k" is not a whole number of bytes` {
		t.Fatalf("a bad limit: %v", err)
	}
}
