// Package telemetry traces and measures agentui with OpenTelemetry,
// following the GenAI semantic conventions (v1.41.0,
// go.opentelemetry.io/otel/semconv/v1.41.0): an invoke_agent span per run,
// a chat span per model call, an execute_tool span per server tool call,
// the GenAI client metrics (operation duration, token usage, time to first
// chunk), and agentui's own (runs by outcome, runs and streams in
// progress).
//
// [Interceptor] instruments a loop (agent.WithInterceptors); [Handler]
// wraps the HTTP handlers (server spans that continue the caller's trace
// context, request metrics, open streams). Both use the global providers
// unless given others; [FromEnv] sets up OTLP export from the standard
// OTEL_EXPORTER_OTLP_* variables, as the binary does.
package telemetry

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
)

// ScopeName is the instrumentation scope of agentui's spans and metrics.
const ScopeName = "github.com/agentui/agentui/telemetry"

// Option configures the instrumentation.
type Option func(*config)

type config struct {
	tp        trace.TracerProvider
	mp        metric.MeterProvider
	prop      propagation.TextMapPropagator
	agentName string
	model     string // gen_ai.request.model
	provider  string // gen_ai.provider.name, until a model call reports its own
}

// WithTracerProvider sets where spans go (default: otel's global one).
func WithTracerProvider(tp trace.TracerProvider) Option { return func(c *config) { c.tp = tp } }

// WithMeterProvider sets where metrics go (default: otel's global one).
func WithMeterProvider(mp metric.MeterProvider) Option { return func(c *config) { c.mp = mp } }

// WithPropagator sets how Handler reads the caller's trace context
// (default: otel's global propagator, which FromEnv sets to W3C trace
// context and baggage).
func WithPropagator(p propagation.TextMapPropagator) Option { return func(c *config) { c.prop = p } }

// WithAgentName names the agent (gen_ai.agent.name; the run span is then
// "invoke_agent <name>").
func WithAgentName(name string) Option { return func(c *config) { c.agentName = name } }

// WithModel names the model asked for (gen_ai.request.model; chat spans
// are "chat <model>") and its provider (gen_ai.provider.name, e.g.
// "openai"), which a model call's own report replaces.
func WithModel(model, provider string) Option {
	return func(c *config) { c.model, c.provider = model, provider }
}

func newConfig(opts []Option) config {
	c := config{}
	for _, o := range opts {
		o(&c)
	}
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	if c.prop == nil {
		c.prop = otel.GetTextMapPropagator()
	}
	return c
}

// instruments are the metrics the interceptor records.
type instruments struct {
	duration   genaiconv.ClientOperationDuration
	tokens     genaiconv.ClientTokenUsage
	firstChunk genaiconv.ClientOperationTimeToFirstChunk
	runs       metric.Int64Counter
	active     metric.Int64UpDownCounter
}

// interceptor is the agent.Interceptor Interceptor returns.
type interceptor struct {
	cfg    config
	tracer trace.Tracer
	m      instruments
}

// Interceptor returns the interceptor that traces and measures a loop's
// runs, model calls and tool calls. It fails only when a meter provider
// refuses an instrument.
func Interceptor(opts ...Option) (agent.Interceptor, error) {
	cfg := newConfig(opts)
	meter := cfg.mp.Meter(ScopeName)
	ic := &interceptor{cfg: cfg, tracer: cfg.tp.Tracer(ScopeName)}
	var err error
	if ic.m.duration, err = genaiconv.NewClientOperationDuration(meter); err != nil {
		return nil, err
	}
	if ic.m.tokens, err = genaiconv.NewClientTokenUsage(meter); err != nil {
		return nil, err
	}
	if ic.m.firstChunk, err = genaiconv.NewClientOperationTimeToFirstChunk(meter); err != nil {
		return nil, err
	}
	if ic.m.runs, err = meter.Int64Counter("agentui.runs", metric.WithUnit("{run}"),
		metric.WithDescription("Runs that ended, by outcome (agentui.run.outcome: finished, paused, cancelled, failed, max_steps).")); err != nil {
		return nil, err
	}
	if ic.m.active, err = meter.Int64UpDownCounter("agentui.runs.active", metric.WithUnit("{run}"),
		metric.WithDescription("Runs in progress.")); err != nil {
		return nil, err
	}
	return ic, nil
}

// Attribute keys of agentui's own.
const (
	RunOutcomeKey = attribute.Key("agentui.run.outcome")
	RunIDKey      = attribute.Key("agentui.run.id")
	ProtocolKey   = attribute.Key("agentui.protocol")
)

// common are the attributes every span of a run carries.
func common(ctx context.Context) []attribute.KeyValue {
	ri, ok := agent.RunInfoFrom(ctx)
	if !ok {
		return nil
	}
	return []attribute.KeyValue{semconv.GenAIConversationID(cleaned(ri.ChatID)), RunIDKey.String(cleaned(ri.RunID)), ProtocolKey.String(ri.Protocol)}
}

func (ic *interceptor) WrapRun(next agent.RunFunc) agent.RunFunc {
	return func(ctx context.Context, in *agent.Input) iter.Seq2[agent.Event, error] {
		return func(yield func(agent.Event, error) bool) {
			name := "invoke_agent"
			attrs := append(common(ctx), semconv.GenAIOperationNameInvokeAgent)
			if ic.cfg.agentName != "" {
				name += " " + ic.cfg.agentName
				attrs = append(attrs, semconv.GenAIAgentName(ic.cfg.agentName))
			}
			if ic.cfg.model != "" {
				attrs = append(attrs, semconv.GenAIRequestModel(ic.cfg.model))
			}
			ctx, span := ic.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
			ic.m.active.Add(ctx, 1)
			outcome, provider := "cancelled", ic.cfg.provider // a consumer that stops early cancels the run
			defer func() {
				ic.m.active.Add(ctx, -1)
				ic.m.runs.Add(ctx, 1, metric.WithAttributes(RunOutcomeKey.String(outcome)))
				span.SetAttributes(RunOutcomeKey.String(outcome))
				if provider != "" {
					span.SetAttributes(semconv.GenAIProviderNameKey.String(provider))
				}
				span.End()
			}()
			for ev, err := range next(ctx, in) {
				switch e := ev.(type) {
				case *agent.StepFinished:
					if e.Provider != "" {
						provider = cleaned(e.Provider)
					}
				case *agent.RunFinished:
					outcome = runOutcome(e.StopReason)
					span.SetAttributes(
						semconv.GenAIUsageInputTokens(int(e.Usage.InputTokens)),
						semconv.GenAIUsageOutputTokens(int(e.Usage.OutputTokens)),
						semconv.GenAIResponseFinishReasons(agent.FinishReason(e.StopReason)),
					)
					if e.Model != "" {
						span.SetAttributes(semconv.GenAIResponseModel(cleaned(e.Model)))
					}
				}
				if err != nil {
					outcome = "failed"
					span.RecordError(err)
					span.SetStatus(codes.Error, cleaned(err.Error()))
					span.SetAttributes(semconv.ErrorTypeKey.String("agent_error"))
				}
				if !yield(ev, err) {
					return
				}
			}
		}
	}
}

// runOutcome names how a run ended.
func runOutcome(r cmf.StopReason) string {
	switch r {
	case cmf.StopPaused:
		return "paused"
	case cmf.StopAborted:
		return "cancelled"
	case cmf.StopMaxTurns:
		return "max_steps"
	}
	return "finished"
}

func (ic *interceptor) WrapModel(next agent.ModelFunc) agent.ModelFunc {
	return func(ctx context.Context, req *agent.Request) iter.Seq2[agent.Chunk, error] {
		return func(yield func(agent.Chunk, error) bool) {
			name := "chat"
			attrs := append(common(ctx), semconv.GenAIOperationNameChat)
			if ic.cfg.model != "" {
				name += " " + ic.cfg.model
				attrs = append(attrs, semconv.GenAIRequestModel(ic.cfg.model))
			}
			if st := req.Settings; st != nil {
				if st.Temperature != nil {
					attrs = append(attrs, semconv.GenAIRequestTemperature(*st.Temperature))
				}
				if st.MaxOutputTokens != nil {
					attrs = append(attrs, semconv.GenAIRequestMaxTokens(int(*st.MaxOutputTokens)))
				}
			}
			ctx, span := ic.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
			start := time.Now()
			first := true
			provider, model := ic.cfg.provider, ic.cfg.model
			var failed error
			defer func() {
				op := genaiconv.OperationNameAttr("chat")
				metricAttrs := []attribute.KeyValue{}
				if model != "" {
					metricAttrs = append(metricAttrs, semconv.GenAIRequestModel(ic.cfg.model), semconv.GenAIResponseModel(model))
				}
				if failed != nil {
					metricAttrs = append(metricAttrs, semconv.ErrorTypeKey.String("model_error"))
					span.RecordError(failed)
					span.SetStatus(codes.Error, cleaned(failed.Error()))
					span.SetAttributes(semconv.ErrorTypeKey.String("model_error"))
				}
				if provider != "" {
					span.SetAttributes(semconv.GenAIProviderNameKey.String(provider))
				}
				ic.m.duration.Record(ctx, time.Since(start).Seconds(), op, genaiconv.ProviderNameAttr(provider), metricAttrs...)
				span.End()
			}()
			for c, err := range next(ctx, req) {
				if err != nil {
					failed = err
				}
				if first && err == nil {
					first = false
					ic.m.firstChunk.Record(ctx, time.Since(start).Seconds(), genaiconv.OperationNameAttr("chat"), genaiconv.ProviderNameAttr(provider))
				}
				if c.Kind == agent.ChunkFinish {
					if c.Provider != "" {
						provider = cleaned(c.Provider)
					}
					if c.Model != "" {
						model = cleaned(c.Model)
						span.SetName("chat " + model)
						span.SetAttributes(semconv.GenAIResponseModel(model))
					}
					span.SetAttributes(
						semconv.GenAIUsageInputTokens(int(c.Usage.InputTokens)),
						semconv.GenAIUsageOutputTokens(int(c.Usage.OutputTokens)),
						semconv.GenAIResponseFinishReasons(agent.FinishReason(c.StopReason)),
					)
					pn := genaiconv.ProviderNameAttr(provider)
					ic.m.tokens.Record(ctx, c.Usage.InputTokens, genaiconv.OperationNameAttr("chat"), pn, genaiconv.TokenTypeInput, semconv.GenAIResponseModel(model))
					ic.m.tokens.Record(ctx, c.Usage.OutputTokens, genaiconv.OperationNameAttr("chat"), pn, genaiconv.TokenTypeOutput, semconv.GenAIResponseModel(model))
				}
				if !yield(c, err) {
					return
				}
			}
		}
	}
}

func (ic *interceptor) WrapTool(next agent.ToolFunc) agent.ToolFunc {
	return func(ctx context.Context, call agent.ToolCall) (json.RawMessage, error) {
		name := cleaned(call.Name)
		attrs := append(common(ctx), semconv.GenAIOperationNameExecuteTool,
			semconv.GenAIToolName(name), semconv.GenAIToolCallID(cleaned(call.ID)), semconv.GenAIToolType("function"))
		ctx, span := ic.tracer.Start(ctx, "execute_tool "+name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
		defer span.End()
		out, err := next(ctx, call)
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, cleaned(err.Error()))
			span.SetAttributes(semconv.ErrorTypeKey.String("tool_error"))
		}
		return out, err
	}
}

// Handler wraps h (agentui's handlers, or the whole mux) with HTTP server
// spans that continue the caller's W3C trace context (otelhttp), HTTP
// server metrics, and agentui.streams.open: the event streams being
// written.
func Handler(h http.Handler, opts ...Option) http.Handler {
	cfg := newConfig(opts)
	open, err := cfg.mp.Meter(ScopeName).Int64UpDownCounter("agentui.streams.open", metric.WithUnit("{stream}"),
		metric.WithDescription("Event streams (SSE responses) being written."))
	if err == nil {
		h = countStreams(h, open)
	}
	return otelhttp.NewHandler(h, "agentui", otelhttp.WithTracerProvider(cfg.tp), otelhttp.WithMeterProvider(cfg.mp), otelhttp.WithPropagators(cfg.prop),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			if r.Pattern != "" {
				return r.Pattern
			}
			return r.Method
		}))
}

// countStreams counts the responses that start an event stream while
// they are written.
func countStreams(h http.Handler, open metric.Int64UpDownCounter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &streamWriter{ResponseWriter: w}
		defer func() {
			if sw.stream {
				open.Add(r.Context(), -1)
			}
		}()
		sw.onStream = func() { open.Add(r.Context(), 1) }
		h.ServeHTTP(sw, r)
	})
}

// streamWriter notices a response that is an event stream.
type streamWriter struct {
	http.ResponseWriter
	stream   bool
	wrote    bool
	onStream func()
}

func (w *streamWriter) WriteHeader(code int) {
	if !w.wrote {
		w.wrote = true
		if code == http.StatusOK && w.Header().Get("Content-Type") == "text/event-stream" {
			w.stream = true
			w.onStream()
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *streamWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flushes,
// deadlines).
func (w *streamWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
