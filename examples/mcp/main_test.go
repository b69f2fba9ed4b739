package mcp_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/agentui/agentui/internal/testkit/testutil"
)

// The README's commands, against the binary started as the README starts
// it, with the README's servers.json: the approval asked for notes_add,
// and notes_tidy's progress and result.
func TestExample(t *testing.T) {
	// servers.json starts notes with go run, within the binary's start-up
	// bound: build it first, so that the run only links.
	if out, err := exec.Command("go", "build", "-o", os.DevNull, "./notes").CombinedOutput(); err != nil {
		t.Fatalf("go build ./notes: %v\n%s", err, out)
	}
	p := testutil.RunProgram(t, "../../cmd/agentui", nil, "-addr", "127.0.0.1:0", "-mcp", "servers.json")
	if !strings.Contains(p.Line, "3 MCP tools from 1 servers") {
		t.Fatalf("the binary's first line: %s", p.Line)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	out := p.RunREADME(t, testutil.ShellBlocks(string(readme))[0], "127.0.0.1:8080")
	for _, want := range []string{
		`"type":"tool-approval-request"`, `"toolName":"notes_add"`,
		`"output":{"progress":1,"total":3,"message":"pass 1"},"preliminary":true`,
		`"output":{"progress":3,"total":3,"message":"pass 3"},"preliminary":true`,
		`"delta":"\"Tidied "`, `"delta":"passes.\""`,
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("the README's commands printed no %s:\n%s", want, out)
		}
	}
}
