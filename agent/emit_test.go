package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentui/agentui/cmf"
)

// research streams three progress updates and a data part, then returns
// its result.
var research = FuncTool("research", "Researches a topic.", func(ctx context.Context, in struct {
	Topic string `json:"topic"`
}) (map[string]string, error) {
	e := Emitter(ctx)
	for i := 1; i <= 3; i++ {
		if err := e.Progress(map[string]any{"step": i}); err != nil {
			return nil, err
		}
	}
	if err := e.Source("https://example.com/"+in.Topic, in.Topic); err != nil {
		return nil, err
	}
	if err := e.Data("source", in.Topic, map[string]string{"url": "https://example.com/" + in.Topic}, false); err != nil {
		return nil, err
	}
	return map[string]string{"summary": in.Topic + " is interesting"}, nil
})

// A tool's progress comes before its result, in order, from the run's own
// stream; the model sees only the result, and the recorded conversation
// keeps the result and the data part, not the progress.
func TestToolEmitterStreamsProgress(t *testing.T) {
	m := &scripted{replies: []reply{
		{chunks: concat(toolCall("r1", "research", `{"topic":"owls"}`), toolCall("r2", "research", `{"topic":"bats"}`), []Chunk{finish(cmf.StopCall)})},
		{chunks: text("done")},
	}}
	l := newLoop(t, m, nil, WithTools(research))
	events, err := collect(t, l, context.Background(), &Input{Messages: []cmf.Message{userMsg("research")}})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, ev := range events {
		switch e := ev.(type) {
		case *ToolProgress:
			seen = append(seen, e.ToolCallID+" progress "+string(e.Output))
		case *Data:
			seen = append(seen, "data "+e.Name)
		case *ToolResult:
			seen = append(seen, e.ToolCallID+" result "+string(e.Output))
		}
	}
	for _, id := range []string{"r1", "r2"} {
		var mine []string
		for _, s := range seen {
			if strings.HasPrefix(s, id+" ") {
				mine = append(mine, strings.TrimPrefix(s, id+" "))
			}
		}
		topic := map[string]string{"r1": "owls", "r2": "bats"}[id]
		want := []string{`progress {"step":1}`, `progress {"step":2}`, `progress {"step":3}`, fmt.Sprintf(`result {"summary":"%s is interesting"}`, topic)}
		if strings.Join(mine, "|") != strings.Join(want, "|") {
			t.Fatalf("%s: %q\nwant %q", id, mine, want)
		}
	}
	for _, msg := range m.requests[1].Messages {
		if strings.Contains(fmt.Sprint(msg.Content), "step") {
			t.Fatalf("the model saw progress: %v", msg.Content)
		}
	}
	msgs := record(events).Messages()
	if got := len(msgs[0].Data()); got != 2 {
		t.Fatalf("recorded %d data parts, want 2", got)
	}
	var sources []string
	for _, p := range msgs[0].Content {
		if r, ok := p.(cmf.ResourceRef); ok && r.ResourceType == cmf.ResourceURI && r.ResourceRequestID != "" {
			sources = append(sources, r.URI+" "+r.Name)
		}
	}
	slices.Sort(sources) // the two calls run at once
	if len(sources) != 2 || sources[0] != "https://example.com/bats bats" || sources[1] != "https://example.com/owls owls" {
		t.Fatalf("recorded sources %q", sources)
	}
	if err := msgs[0].Validate(); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(msgs)
	if strings.Contains(string(b), `"step"`) {
		t.Fatalf("progress was recorded: %s", b)
	}
}

// A consumer that stops while a tool streams leaves no goroutine behind
// (goleak, TestMain): the tool's emitter returns the run's error.
func TestToolEmitterStopped(t *testing.T) {
	errs := make(chan error, 1)
	blocked := FuncTool("chatty", "Talks a lot.", func(ctx context.Context, _ struct{}) (string, error) {
		for {
			if err := Emitter(ctx).Progress("more"); err != nil {
				errs <- err
				return "", err
			}
		}
	})
	m := &scripted{replies: []reply{{chunks: concat(toolCall("c", "chatty", `{}`), []Chunk{finish(cmf.StopCall)})}}}
	l := newLoop(t, m, nil, WithTools(blocked))
	n := 0
	for ev := range l.Run(context.Background(), &Input{Messages: []cmf.Message{userMsg("go")}}) {
		if _, ok := ev.(*ToolProgress); ok {
			if n++; n == 5 {
				break
			}
		}
	}
	if err := <-errs; err == nil {
		t.Fatal("the emitter kept going")
	}
	if Emitter(context.Background()).Progress("nobody") != nil {
		t.Fatal("a nil emitter failed")
	}
}
