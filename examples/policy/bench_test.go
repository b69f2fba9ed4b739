package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/policy"
)

// BenchmarkRegoPreTool is one tool call decided by the Rego policy through
// the engine: the cost a pre-tool check adds to each tool call.
func BenchmarkRegoPreTool(b *testing.B) {
	for _, path := range []string{"/tmp/x.txt", "/etc/passwd", "/tmp/../etc/passwd"} {
		b.Run(path, func(b *testing.B) {
			ctx := context.Background()
			rules, err := NewRego(ctx, regoSource)
			if err != nil {
				b.Fatal(err)
			}
			engine, err := policy.New([]policy.Policy{rules}, policy.WithLogger(slog.New(slog.DiscardHandler)))
			if err != nil {
				b.Fatal(err)
			}
			m := &cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant, Content: []cmf.Part{
				cmf.ToolCall{ToolCallID: "c1", Name: "delete_file", Arguments: json.RawMessage(`{"path":"` + path + `"}`)},
			}}
			check := &agent.Check{Point: agent.PointPreTool, Tool: "delete_file", Message: m}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := engine.Check(ctx, check); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
