package gemini_test

import (
	"context"
	"fmt"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/gemini"
	"github.com/agentui/agentui/cmf"
	fake "github.com/agentui/agentui/internal/testkit/fakes/gemini"
)

// A Gemini model streams its reply; the signature that comes with it is
// kept with the text part, tagged with the provider and model, for the
// next request to the same model.
func ExampleNew() {
	api := fake.Start() // stands in for https://generativelanguage.googleapis.com
	defer api.Close()
	api.Script(fake.Reply{Parts: []fake.ReplyPart{fake.Thought("A greeting."), fake.Text("Hello!")}})

	m, err := gemini.New("gemini-3-flash-preview", gemini.WithAPIKey("key"), gemini.WithBaseURL(api.URL), gemini.WithThinkingLevel("low"))
	if err != nil {
		panic(err)
	}
	req := &agent.Request{Messages: []cmf.Message{{Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: "Hi"}}}}}
	for c, err := range m.Stream(context.Background(), req) {
		if err != nil {
			panic(err)
		}
		switch c.Kind {
		case agent.ChunkThinking:
			fmt.Println("thinking:", c.Delta)
		case agent.ChunkText:
			if c.Opaque != nil {
				fmt.Printf("signed by %s %s\n", c.Opaque.Provider, c.Opaque.Model)
			} else {
				fmt.Println("text:", c.Delta)
			}
		case agent.ChunkFinish:
			fmt.Println("stop:", c.StopReason)
		}
	}
	// Output:
	// thinking: A greeting.
	// text: Hello!
	// signed by gemini gemini-3-flash-preview
	// stop: end
}
