package agent

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/agentui/agentui/cmf"
)

// A run's Model picks the model of a set its calls go to; none picks the
// first; a name the set lacks fails the call.
func TestModelsRouteByName(t *testing.T) {
	a := &scripted{replies: []reply{{chunks: text("from a")}, {chunks: text("from a again")}}}
	b := &scripted{replies: []reply{{chunks: text("from b")}}}
	set, err := NewModels(Named{"a", a}, Named{"b", b})
	if err != nil {
		t.Fatal(err)
	}
	l := newLoop(t, set, nil)
	if got := l.ModelNames(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("ModelNames = %v", got)
	}
	for _, c := range []struct{ model, want string }{{"b", "from b"}, {"", "from a"}, {"a", "from a again"}} {
		events, err := collect(t, l, context.Background(), &Input{Messages: []cmf.Message{userMsg("hi")}, Model: c.model})
		if err != nil {
			t.Fatal(err)
		}
		if got := last[*PartEnded](t, events).Part.(cmf.Text).Text; got != c.want {
			t.Errorf("model %q: %q, want %q", c.model, got, c.want)
		}
	}
	_, err = collect(t, l, context.Background(), &Input{Messages: []cmf.Message{userMsg("hi")}, Model: "c"})
	if !errors.Is(err, ErrUnknownModel) {
		t.Fatalf("an unknown model: %v", err)
	}
	if _, err := NewModels(Named{"a", a}, Named{"a", b}); err == nil {
		t.Fatal("two models with one name")
	}
	if set.Has("c") || !set.Has("") || !set.Has("b") {
		t.Fatal("Has is wrong")
	}
	if newLoop(t, a, nil).ModelNames() != nil {
		t.Fatal("a loop over one model names models")
	}
}
