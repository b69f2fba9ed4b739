package agent_test

import (
	"context"
	"fmt"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/cmf"
)

// A tool that streams: the demo's research tool reports three progress
// updates and cites a source before its result; the run's consumer (a
// protocol encoder, here a loop) sees them in order.
func ExampleEmitter() {
	loop, err := agent.New(demo.New(), agent.WithTools(demo.Tools()...))
	if err != nil {
		panic(err)
	}
	ask := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: "research owls"}}}
	for ev := range loop.Run(context.Background(), &agent.Input{Messages: []cmf.Message{ask}}) {
		switch e := ev.(type) {
		case *agent.ToolProgress:
			fmt.Println("progress:", string(e.Output))
		case *agent.Source:
			fmt.Println("source:", e.URL)
		case *agent.ToolResult:
			fmt.Println("result:", string(e.Output))
		}
	}
	// Output:
	// progress: {"step":1,"of":3,"status":"Searching for owls"}
	// progress: {"step":2,"of":3,"status":"Reading 3 sources"}
	// progress: {"step":3,"of":3,"status":"Summarizing"}
	// source: https://example.com/research/owls
	// result: {"topic":"owls","summary":"3 sources agree that owls is worth a closer look.","sources":3}
}
