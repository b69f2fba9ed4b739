package testutil

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/policy"
)

// cardNumber matches payment card numbers: 13 to 19 digits, in groups
// or not.
var cardNumber = regexp.MustCompile(`\b(?:\d[ -]?){12,18}\d\b`)

// DemoPolicies are pure-Go policies over the demo's tools, for tests:
//
//   - tmp-only: delete_file only under /tmp (denied before approval);
//   - card-numbers: card numbers in user text redacted, the message
//     labelled PII;
//   - external-data: get_weather results labelled external;
//   - restricted-cities: the weather in a city named "Area 51" needs
//     the user's approval;
//   - no-passwords: a user message with "password:" is refused;
//   - broken: fails on a user message that says "break the policy";
//   - no-secrets: a tool result that holds "SECRET" is withheld.
func DemoPolicies() []policy.Policy {
	return []policy.Policy{
		{Name: "tmp-only", Points: []agent.Point{agent.PointPreTool}, Decide: func(_ context.Context, in *policy.Input) (policy.Decision, error) {
			if in.Tool != "delete_file" {
				return policy.Allow(), nil
			}
			var path string
			raw, _ := in.Views[0].GetArg("path")
			_ = json.Unmarshal(raw, &path)
			if strings.HasPrefix(path, "/tmp/") {
				return policy.Allow(), nil
			}
			return policy.Deny("files may be deleted only under /tmp"), nil
		}},
		{Name: "card-numbers", Points: []agent.Point{agent.PointInput}, Capabilities: cmf.CapReadLabels, Decide: func(_ context.Context, in *policy.Input) (policy.Decision, error) {
			found := false
			for _, v := range in.Views {
				if text, ok := v.Content(); ok && v.Kind() == cmf.ContentText && cardNumber.MatchString(text) {
					found = true
				}
			}
			if !found {
				return policy.Allow(), nil
			}
			m := in.Copy()
			for i, p := range m.Content {
				if t, ok := p.(cmf.Text); ok {
					m.Content[i] = cmf.Text{Text: cardNumber.ReplaceAllString(t.Text, "[card number]")}
				}
			}
			d := policy.Redact(m, "a payment card number")
			d.Labels = []string{"PII"}
			return d, nil
		}},
		{Name: "external-data", Points: []agent.Point{agent.PointPostTool}, Decide: func(_ context.Context, in *policy.Input) (policy.Decision, error) {
			if in.Tool == "get_weather" {
				return policy.Label("external"), nil
			}
			return policy.Allow(), nil
		}},
		{Name: "restricted-cities", Points: []agent.Point{agent.PointPreTool}, Decide: func(_ context.Context, in *policy.Input) (policy.Decision, error) {
			if raw, ok := in.Views[0].GetArg("city"); ok && in.Tool == "get_weather" && strings.Contains(string(raw), "Area 51") {
				return policy.RequireApproval("a restricted city"), nil
			}
			return policy.Allow(), nil
		}},
		{Name: "no-passwords", Points: []agent.Point{agent.PointInput}, Decide: func(_ context.Context, in *policy.Input) (policy.Decision, error) {
			for _, v := range in.Views {
				if text, _ := v.Content(); strings.Contains(strings.ToLower(text), "password:") {
					return policy.Deny("do not paste passwords into the chat"), nil
				}
			}
			return policy.Allow(), nil
		}},
		{Name: "no-secrets", Points: []agent.Point{agent.PointPostTool}, Decide: func(_ context.Context, in *policy.Input) (policy.Decision, error) {
			for _, v := range in.Views {
				if text, _ := v.Content(); strings.Contains(text, "SECRET") {
					return policy.Deny("the result holds a secret"), nil
				}
			}
			return policy.Allow(), nil
		}},
		{Name: "broken", Points: []agent.Point{agent.PointInput}, Decide: func(_ context.Context, in *policy.Input) (policy.Decision, error) {
			if text, _ := in.Views[0].Content(); strings.Contains(text, "break the policy") {
				return policy.Decision{}, errBroken
			}
			return policy.Allow(), nil
		}},
	}
}

var errBroken = errors.New("the policy broke, as asked")

// DemoEngine is an engine over [DemoPolicies].
func DemoEngine(t testing.TB, opts ...policy.Option) *policy.Engine {
	t.Helper()
	return Must(policy.New(DemoPolicies(), opts...))
}
