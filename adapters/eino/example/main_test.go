package main

import (
	"os"
	"strings"
	"testing"

	"github.com/agentui/agentui/internal/testkit/agentexample"
	"github.com/agentui/agentui/internal/testkit/testutil"
)

// The example as its README runs it: the weather and an approval asked.
func TestExample(t *testing.T) {
	p := testutil.RunProgram(t, ".", nil, "-addr", "127.0.0.1:0")
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	out := p.RunREADME(t, testutil.ShellBlocks(string(readme))[0], "127.0.0.1:8082")
	for _, want := range []string{`"toolName":"get_weather"`, `"output":{"city":"Paris","forecast":"sunny","temperature_c":21}`, `"delta":"sunny, "`,
		`"type":"tool-approval-request"`, `"toolName":"delete_file"`} {
		if !strings.Contains(out, want) {
			t.Fatalf("the README's commands printed no %s:\n%s", want, out)
		}
	}
}

// The real clients against the example (agentexample.RealClients).
func TestRealClients(t *testing.T) {
	agentexample.RealClients(t, testutil.BuildProgram(t, "."))
}

// Two replicas on one Redis (agentexample.AcrossReplicas): the approval
// asked on A is answered on B, which resumes the Eino run from the checkpoint A wrote.
func TestAcrossReplicas(t *testing.T) {
	agentexample.AcrossReplicas(t, testutil.BuildProgram(t, "."))
}
