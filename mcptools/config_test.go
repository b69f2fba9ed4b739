package mcptools_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/mcptools"
)

func TestParseConfig(t *testing.T) {
	t.Setenv("MCP_TEST_TOKEN", "s3cret")
	servers, err := mcptools.ParseConfig([]byte(`{"servers": [
		{"name": "files", "command": ["mcp-files", "${HOME}"], "approval": "always", "tools": ["read"]},
		{"name": "search", "url": "https://search.example.com/mcp", "headers": {"Authorization": "Bearer ${MCP_TEST_TOKEN}"}, "timeout": "20s", "approval": "never"},
		{"url": "http://127.0.0.1:9/mcp"}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 3 || servers[0].Approval != mcptools.ApproveAlways || servers[0].Command[1] == "${HOME}" || servers[0].Tools[0] != "read" ||
		servers[1].Headers["Authorization"] != "Bearer s3cret" || servers[1].CallTimeout != 20*time.Second || servers[1].Approval != mcptools.ApproveNever ||
		servers[2].Approval != mcptools.ApproveUnlessReadOnly || servers[2].CallTimeout != 0 {
		t.Fatalf("%+v", servers)
	}
	for _, c := range []struct{ config, want string }{
		{`{"servers": [{"url": "http://x", "aproval": "always"}]}`, `unknown field "aproval"`},
		{`{"servers": [{"url": "http://x", "approval": "sometimes"}]}`, `approval "sometimes"`},
		{`{"servers": [{"url": "http://x", "timeout": "soon"}]}`, `timeout "soon"`},
		{`{"servers": [{"url": "http://x", "headers": {"A": "${MCP_TEST_UNSET}"}}]}`, `environment variables not set: MCP_TEST_UNSET`},
		{`{"servers": [{"name": "x"}]}`, `give a command (stdio) or a url`},
		{`{"servers": []}`, `no servers`},
		{`[1, 2]`, `config: json`},
	} {
		_, err := mcptools.ParseConfig([]byte(c.config))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want %q", c.config, err, c.want)
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"servers": [{"name": "a", "url": "http://x", "headers": {"A": "${X}"}, "timeout": "1s"}]}`))
	f.Add([]byte(`{"servers": [{"command": ["x", "$Y"], "approval": "always"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		servers, err := mcptools.ParseConfig(data)
		if err == nil && len(servers) == 0 {
			t.Fatal("no error and no servers")
		}
	})
}
