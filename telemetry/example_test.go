package telemetry_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/telemetry"
)

// The interceptor on a loop: one span per run, per model call and per
// tool call, named as the GenAI conventions say.
func ExampleInterceptor() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	ic, err := telemetry.Interceptor(telemetry.WithTracerProvider(tp), telemetry.WithAgentName("weather"), telemetry.WithModel(demo.ModelName, demo.Provider))
	if err != nil {
		panic(err)
	}
	loop, _ := agent.New(demo.New(), agent.WithTools(demo.Tools()...), agent.WithInterceptors(ic))
	ask := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: "weather in Paris"}}}
	for range loop.Run(context.Background(), &agent.Input{Messages: []cmf.Message{ask}}) {
	}
	for _, s := range spans.Ended() {
		fmt.Println(s.Name())
	}
	// Output:
	// chat agentui-demo
	// execute_tool get_weather
	// chat agentui-demo
	// invoke_agent weather
}
