package agent_test

import (
	"context"
	"fmt"
	"iter"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/cmf"
)

// An interceptor that gives each run the instructions of its user and
// counts the tokens it used. In a server, the user comes from the run's
// context: agent.RunInfoFrom(ctx).Scope, or the app's own value.
func ExampleWithInterceptors() {
	var tokens int64
	meter := agent.RunInterceptor(func(next agent.RunFunc) agent.RunFunc {
		return func(ctx context.Context, in *agent.Input) iter.Seq2[agent.Event, error] {
			own := *in // change a copy: the input is the caller's
			own.Instructions = "Answer in French."
			return func(yield func(agent.Event, error) bool) {
				for ev, err := range next(ctx, &own) {
					if fin, ok := ev.(*agent.RunFinished); ok {
						tokens += fin.Usage.InputTokens + fin.Usage.OutputTokens
					}
					if !yield(ev, err) {
						return
					}
				}
			}
		}
	})
	loop, err := agent.New(demo.New(), agent.WithInterceptors(meter))
	if err != nil {
		panic(err)
	}
	hello := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: "hello"}}}
	for range loop.Run(context.Background(), &agent.Input{Messages: []cmf.Message{hello}}) {
	}
	fmt.Println("tokens used:", tokens)
	// Output: tokens used: 4
}
