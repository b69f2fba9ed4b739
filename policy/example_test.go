package policy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path"
	"regexp"
	"strings"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/policy"
)

// Policies in plain Go, no engine to deploy: delete_file only under /tmp,
// card numbers redacted from user text (the message labelled PII). Give
// the engine to the handlers with uiadapter.WithGuard(engine).
func ExampleEngine() {
	card := regexp.MustCompile(`\b(?:\d[ -]?){12,18}\d\b`)
	engine, err := policy.New([]policy.Policy{
		{Name: "tmp-only", Points: []agent.Point{agent.PointPreTool},
			Decide: func(_ context.Context, in *policy.Input) (policy.Decision, error) {
				var p string
				raw, _ := in.Views[0].GetArg("path")
				_ = json.Unmarshal(raw, &p)
				// Judge the cleaned path: "/tmp/../etc/passwd" is /etc/passwd.
				if in.Tool == "delete_file" && !strings.HasPrefix(path.Clean(p), "/tmp/") {
					return policy.Deny("files may be deleted only under /tmp"), nil
				}
				return policy.Allow(), nil
			}},
		{Name: "card-numbers", Points: []agent.Point{agent.PointInput},
			Decide: func(_ context.Context, in *policy.Input) (policy.Decision, error) {
				m := in.Copy()
				found := false
				for i, p := range m.Content {
					if t, ok := p.(cmf.Text); ok && card.MatchString(t.Text) {
						m.Content[i], found = cmf.Text{Text: card.ReplaceAllString(t.Text, "[card number]")}, true
					}
				}
				if !found {
					return policy.Allow(), nil
				}
				d := policy.Redact(m, "a payment card number")
				d.Labels = []string{"PII"}
				return d, nil
			}},
	}, policy.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()

	for _, p := range []string{"/etc/passwd", "/tmp/../etc/passwd", "/tmp//x.txt"} {
		call := &cmf.Message{Role: cmf.RoleAssistant, Content: []cmf.Part{
			cmf.ToolCall{ToolCallID: "c1", Name: "delete_file", Arguments: json.RawMessage(`{"path":"` + p + `"}`)}}}
		v, _ := engine.Check(ctx, &agent.Check{Point: agent.PointPreTool, Tool: "delete_file", Message: call})
		fmt.Printf("pre-tool %s: %q\n", p, v.Deny)
	}

	user := &cmf.Message{Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: "pay with 4111 1111 1111 1111"}}}
	v, _ := engine.Check(ctx, &agent.Check{Point: agent.PointInput, Message: user})
	fmt.Println("input:", v.Message.Text(), v.Labels)
	// Output:
	// pre-tool /etc/passwd: "files may be deleted only under /tmp"
	// pre-tool /tmp/../etc/passwd: "files may be deleted only under /tmp"
	// pre-tool /tmp//x.txt: ""
	// input: pay with [card number] [PII]
}
