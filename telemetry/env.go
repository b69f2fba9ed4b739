package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

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
//     OTEL_RESOURCE_ATTRIBUTES.
//
// It returns nil when nothing is to be exported: telemetry is off by
// default.
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
		var exp sdktrace.SpanExporter
		if proto == "grpc" {
			exp, err = otlptracegrpc.New(ctx)
		} else {
			exp, err = otlptracehttp.New(ctx)
		}
		if err != nil {
			return nil, fmt.Errorf("OTLP trace exporter: %w", err)
		}
		p.Tracer = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
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
