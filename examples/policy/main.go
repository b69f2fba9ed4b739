// Command policy serves the demo model under a Rego policy evaluated by the
// Open Policy Agent Go library: delete_file only under /tmp (denied before
// any approval is asked), payment card numbers in user text redacted before
// the model sees them (the message labelled PII), get_weather results
// labelled external. Every decision is logged with a decision field.
//
//	cd examples/policy && go run . -addr 127.0.0.1:8090
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"

	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/policy"
	"github.com/agentui/agentui/protocols/agui"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

//go:embed policy.rego
var regoSource string

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "address to listen on")
	flag.Parse()
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))

	rules, err := NewRego(context.Background(), regoSource)
	if err != nil {
		log.Fatal(err)
	}
	engine, err := policy.New([]policy.Policy{rules}, policy.WithLogger(logger))
	if err != nil {
		log.Fatal(err)
	}
	loop, err := agent.New(demo.New(), agent.WithTools(demo.Tools()...))
	if err != nil {
		log.Fatal(err)
	}
	opts := []uiadapter.Option{
		uiadapter.WithStore(history.NewMemory()),
		uiadapter.WithScope(uiadapter.SingleScope),
		uiadapter.WithGuard(engine),
		uiadapter.WithLogger(logger),
	}
	chat, err := vercelai.Handler(loop, opts...)
	if err != nil {
		log.Fatal(err)
	}
	ag, err := agui.Handler(loop, opts...)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /api/chat", chat)
	mux.Handle("GET /api/chat/{id}", vercelai.ConversationHandler(chat, nil))
	mux.Handle("POST /api/agui", ag)
	mux.Handle("POST /api/agui/connect", ag.ConnectHandler())

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("policy example listening on http://%s\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}

// NewRego compiles a Rego module of package agentui into a policy for
// every point. The module defines, per view: deny (a set of reasons),
// labels (a set) and redacted (the view's text with what must not pass
// replaced; "" to leave it).
func NewRego(ctx context.Context, module string) (policy.Policy, error) {
	query, err := rego.New(
		rego.Query("deny := data.agentui.deny; labels := data.agentui.labels; redacted := data.agentui.redacted"),
		rego.Module("policy.rego", module),
	).PrepareForEval(ctx)
	if err != nil {
		return policy.Policy{}, fmt.Errorf("rego: %w", err)
	}
	return policy.Policy{
		Name: "rego",
		// The module has no output rules: leaving the point out lets
		// replies stream word by word.
		Points: []agent.Point{agent.PointInput, agent.PointPreTool, agent.PointPostTool},
		// The policy reads args, content and names only: no capability
		// to see the subject, headers or labels.
		Decide: func(ctx context.Context, in *policy.Input) (policy.Decision, error) {
			var d policy.Decision
			var redacted *cmf.Message
			for i, v := range in.Views {
				doc := v.ToOPAInput()["input"].(map[string]any)
				doc["point"] = in.Point.String()
				rs, err := query.Eval(ctx, rego.EvalInput(doc))
				if err != nil {
					return policy.Decision{}, err
				}
				if len(rs) != 1 {
					return policy.Decision{}, errors.New("rego: the policy left deny, labels or redacted undefined")
				}
				b := rs[0].Bindings
				for _, r := range stringSet(b["deny"]) {
					d.Deny, d.Reason = r, r
				}
				d.Labels = append(d.Labels, stringSet(b["labels"])...)
				if text, _ := b["redacted"].(string); text != "" {
					if redacted == nil {
						redacted = in.Copy()
					}
					redacted.Content[i] = cmf.Text{Text: text}
					d.Reason = "redacted by the Rego policy"
				}
			}
			if d.Deny == "" && redacted != nil {
				d.Redacted = redacted
			}
			return d, nil
		},
	}, nil
}

// stringSet reads a Rego set (a JSON array) of strings.
func stringSet(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
