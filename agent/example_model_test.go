package agent_test

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
)

// shout is a Model: it answers the last user message in capitals, one
// word per chunk, and ends with the finish chunk every stream owes.
type shout struct{}

func (shout) Stream(ctx context.Context, req *agent.Request) iter.Seq2[agent.Chunk, error] {
	return func(yield func(agent.Chunk, error) bool) {
		var last string
		for m := range req.All() {
			if m.Role == cmf.RoleUser {
				last = m.Text()
			}
		}
		words := strings.Fields(strings.ToUpper(last))
		for i, w := range words {
			if ctx.Err() != nil {
				yield(agent.Chunk{}, ctx.Err()) // cancelled: say so and stop
				return
			}
			if i < len(words)-1 {
				w += " "
			}
			if !yield(agent.Chunk{Kind: agent.ChunkText, Delta: w}, nil) {
				return // the consumer stopped: release what you hold
			}
		}
		yield(agent.Chunk{Kind: agent.ChunkFinish, StopReason: cmf.StopEnd, Model: "shout-1",
			Usage: agent.Usage{InputTokens: int64(len(strings.Fields(last))), OutputTokens: int64(len(words))}}, nil)
	}
}

// A model of your own: implement Stream and hand it to agent.New. See
// docs/models.md for the chunk contract.
func Example_model() {
	loop, err := agent.New(shout{})
	if err != nil {
		panic(err)
	}
	user := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: "hello there"}}}
	user.SetID("u1")
	var deltas []string
	for ev, err := range loop.Run(context.Background(), &agent.Input{Messages: []cmf.Message{user}}) {
		if err != nil {
			panic(err)
		}
		switch ev := ev.(type) {
		case *agent.PartDelta:
			deltas = append(deltas, fmt.Sprintf("%q", ev.Delta))
		case *agent.RunFinished:
			fmt.Println(strings.Join(deltas, " "))
			fmt.Printf("%s %s %d+%d tokens\n", ev.StopReason, ev.Model, ev.Usage.InputTokens, ev.Usage.OutputTokens)
		}
	}
	// Output:
	// "HELLO " "THERE"
	// end shout-1 2+2 tokens
}
