package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"path"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/policy"
)

// delete_file is judged on the path as the file system reads it: ".."
// and "." elements and doubled slashes cannot take a path out of /tmp
// while it still starts with "/tmp/".
func TestRegoJudgesTheCleanedPath(t *testing.T) {
	ctx := context.Background()
	rules, err := NewRego(ctx, regoSource)
	if err != nil {
		t.Fatal(err)
	}
	engine, err := policy.New([]policy.Policy{rules}, policy.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path    string
		allowed bool
	}{
		{`"/tmp/x.txt"`, true},
		{`"/tmp//x.txt"`, true},
		{`"/tmp/./x.txt"`, true},
		{`"//tmp/a/../x.txt"`, true},
		{`"/tmp/a/b/../../x.txt"`, true},
		{`"/tmp/../etc/passwd"`, false},
		{`"/tmp/../../etc/passwd"`, false},
		{`"/tmp/./../etc/passwd"`, false},
		{`"/tmp/x/../../etc/passwd"`, false},
		{`"/tmp/.."`, false},
		{`"/tmp/"`, false}, // /tmp itself
		{`"/tmp"`, false},
		{`"tmp/x.txt"`, false},
		{`"../tmp/x.txt"`, false},
		{`"/etc/passwd"`, false},
		{`""`, false},
		{`42`, false},
		{`null`, false},
		{`["/tmp/x"]`, false},
		{``, false}, // no path
	} {
		args := `{"path":` + tc.path + `}`
		if tc.path == "" {
			args = `{}`
		}
		m := &cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant, Content: []cmf.Part{
			cmf.ToolCall{ToolCallID: "c1", Name: "delete_file", Arguments: json.RawMessage(args)},
		}}
		v, err := engine.Check(ctx, &agent.Check{Point: agent.PointPreTool, Tool: "delete_file", Message: m})
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if allowed := v.Deny == ""; allowed != tc.allowed {
			t.Errorf("delete_file %s: allowed %v, want %v (%q)", tc.path, allowed, tc.allowed, v.Deny)
		}
	}
}

// The policy's clean is Go's path.Clean: every path of up to seven of
// "/", "." and "a", and a few longer ones.
func TestRegoCleanIsPathClean(t *testing.T) {
	ctx := context.Background()
	query, err := rego.New(rego.Query("out := data.agentui.clean(input)"), rego.Module("policy.rego", regoSource)).PrepareForEval(ctx)
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"/tmp/../etc/passwd", "a/b/../../../c", "/../../x/./y//z/..", "abc/def/ghi/../jkl/./../../mno", "..a/.a./a..", "/…/ü/../ß"}
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		paths = append(paths, prefix)
		if n == 0 {
			return
		}
		for _, c := range []string{"/", ".", "a"} {
			gen(prefix+c, n-1)
		}
	}
	gen("", 7)
	for _, p := range paths {
		rs, err := query.Eval(ctx, rego.EvalInput(p))
		if err != nil {
			t.Fatalf("clean(%q): %v", p, err)
		}
		if len(rs) != 1 {
			t.Fatalf("clean(%q) is undefined", p)
		}
		if got, want := rs[0].Bindings["out"], path.Clean(p); got != want {
			t.Errorf("clean(%q) = %q, path.Clean says %q", p, got, want)
		}
	}
	if t.Failed() {
		t.Logf("%d paths, %d with ..", len(paths), strings.Count(strings.Join(paths, "\n"), ".."))
	}
}
