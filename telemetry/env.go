package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// Providers are what FromEnv set up; Shutdown flushes and stops them.
type Providers struct {
	Tracer *sdktrace.TracerProvider // nil when traces are not exported
	Meter  *sdkmetric.MeterProvider // nil when metrics are not exported
	Desc   string                   // what is exported where, for a log line
	flush  []func(context.Context) error
}

// Shutdown exports what is still buffered and stops the exporters.
func (p *Providers) Shutdown(ctx context.Context) error {
	var errs []error
	for _, f := range p.flush {
		errs = append(errs, f(ctx))
	}
	return errors.Join(errs...)
}

// FromEnv sets up OTLP export as OpenTelemetry's standard variables say,
// and makes the providers and the W3C trace context propagator global:
//
//   - traces are exported when OTEL_EXPORTER_OTLP_ENDPOINT or
//     OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, unless
//     OTEL_TRACES_EXPORTER is "none"; metrics likewise (…_METRICS_…);
//   - the protocol is OTEL_EXPORTER_OTLP_{TRACES,METRICS}_PROTOCOL or
//     OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf" (the default) or
//     "grpc"; the exporters read the rest (headers, timeouts, TLS);
//   - the service is OTEL_SERVICE_NAME (default "agentui") with
//     OTEL_RESOURCE_ATTRIBUTES;
//   - spans keep the SDK's limits (OTEL_SPAN_*_LIMIT: 128 attributes, 128
//     events, …) and a bound of its own on string values,
//     DefaultAttributeValueLength bytes unless
//     OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT or
//     OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT sets one (negative: none), and
//     every string is exported cleaned (CleanExporter).
//
// It returns nil when nothing is to be exported: telemetry is off by
// default. What OpenTelemetry reports (an export that failed) goes to the
// standard log package unless SetLogger says otherwise.
func FromEnv(ctx context.Context) (*Providers, error) {
	traces, metrics := wanted("TRACES"), wanted("METRICS")
	if !traces && !metrics {
		return nil, nil
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(serviceName())))
	if err == nil {
		var env *resource.Resource
		if env, err = resource.New(ctx, resource.WithFromEnv()); err == nil {
			res, err = resource.Merge(res, env)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	p := &Providers{}
	var desc []string
	if traces {
		proto, err := protocol("TRACES")
		if err != nil {
			return nil, err
		}
		limits := sdktrace.NewSpanLimits()
		if limits.AttributeValueLengthLimit, err = valueLengthLimit(); err != nil {
			return nil, err
		}
		var exp sdktrace.SpanExporter
		if proto == "grpc" {
			exp, err = otlptracegrpc.New(ctx)
		} else {
			exp, err = otlptracehttp.New(ctx)
		}
		if err != nil {
			return nil, fmt.Errorf("OTLP trace exporter: %w", err)
		}
		p.Tracer = sdktrace.NewTracerProvider(sdktrace.WithBatcher(CleanExporter(exp, limits.AttributeValueLengthLimit)),
			sdktrace.WithRawSpanLimits(limits), sdktrace.WithResource(res))
		p.flush = append(p.flush, p.Tracer.Shutdown)
		otel.SetTracerProvider(p.Tracer)
		desc = append(desc, "traces over OTLP "+proto)
	}
	if metrics {
		proto, err := protocol("METRICS")
		if err != nil {
			return nil, err
		}
		var exp sdkmetric.Exporter
		if proto == "grpc" {
			exp, err = otlpmetricgrpc.New(ctx)
		} else {
			exp, err = otlpmetrichttp.New(ctx)
		}
		if err != nil {
			return nil, fmt.Errorf("OTLP metric exporter: %w", err)
		}
		p.Meter = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
		p.flush = append(p.flush, p.Meter.Shutdown)
		otel.SetMeterProvider(p.Meter)
		desc = append(desc, "metrics over OTLP "+proto)
	}
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	p.Desc = strings.Join(desc, ", ")
	return p, nil
}

// valueLengthLimit is the bound on string attribute values: the first of
// OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT and OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT
// that is set (the SDK reads them in this order, but takes one that does
// not parse for no limit), else DefaultAttributeValueLength.
func valueLengthLimit() (int, error) {
	for _, name := range []string{"OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT"} {
		v := os.Getenv(name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, fmt.Errorf("%s: %q is not a whole number of bytes", name, v)
		}
		return n, nil
	}
	return DefaultAttributeValueLength, nil
}

// SetLogger sends what OpenTelemetry reports to log: its errors (an
// export that failed or was refused) at Warn, its configuration errors
// at Error, and its other log lines below Info (its warnings at -1, its
// info at Debug), as logr's verbosity maps onto slog. Without it they go
// to the standard log package, outside the application's logs.
// OpenTelemetry's error handler and logger are global: the last call
// wins.
func SetLogger(log *slog.Logger) {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("telemetry: "+err.Error(), "component", "opentelemetry")
	}))
	otel.SetLogger(logr.FromSlogHandler(log.Handler()))
}

// wanted says whether a signal (TRACES, METRICS) has an OTLP endpoint and
// is not turned off.
func wanted(signal string) bool {
	if os.Getenv("OTEL_"+signal+"_EXPORTER") == "none" {
		return false
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT") != ""
}

// protocol is the signal's OTLP protocol: http/protobuf or grpc.
func protocol(signal string) (string, error) {
	name := "OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL"
	p := os.Getenv(name)
	if p == "" {
		name = "OTEL_EXPORTER_OTLP_PROTOCOL"
		p = os.Getenv(name)
	}
	switch p {
	case "", "http/protobuf":
		return "http/protobuf", nil
	case "grpc":
		return "grpc", nil
	}
	return "", fmt.Errorf("%s: %q is not a protocol agentui exports with (http/protobuf or grpc)", name, p)
}

func serviceName() string {
	if s := os.Getenv("OTEL_SERVICE_NAME"); s != "" {
		return s
	}
	return "agentui"
}
