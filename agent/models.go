package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
)

// Models is a [Model] that serves each call with the model its request
// names ([Request.Model]), from a fixed set the server offers, so that a
// user may pick one per chat or per turn. A call that names none goes to
// the first. Each model keeps to its own provider's rules: the opaque
// values one produced reach only it ([cmf.Opaque.From]), so a chat that
// switches model loses nothing the new one could use.
type Models struct {
	names  []string
	models map[string]Model
}

// Named is a model and the name requests pick it by.
type Named struct {
	Name  string
	Model Model
}

// ErrUnknownModel fails a call that names a model the set does not have.
var ErrUnknownModel = errors.New("agent: no such model")

// NewModels returns the set; the first is the default. Names must be
// unique and not empty.
func NewModels(models ...Named) (*Models, error) {
	if len(models) == 0 {
		return nil, errors.New("agent: NewModels needs a model")
	}
	m := &Models{models: make(map[string]Model, len(models))}
	for _, n := range models {
		switch {
		case n.Name == "" || n.Model == nil:
			return nil, errors.New("agent: a model needs a name and a model")
		case m.models[n.Name] != nil:
			return nil, fmt.Errorf("agent: two models named %q", n.Name)
		}
		m.names = append(m.names, n.Name)
		m.models[n.Name] = n.Model
	}
	return m, nil
}

// Names are the models' names, the default first.
func (m *Models) Names() []string { return slices.Clone(m.names) }

// Has reports whether name is one of the models ("" is the default).
func (m *Models) Has(name string) bool { return name == "" || m.models[name] != nil }

// Stream calls the model req names.
func (m *Models) Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error] {
	name := req.Model
	if name == "" {
		name = m.names[0]
	}
	model := m.models[name]
	if model == nil {
		return func(yield func(Chunk, error) bool) { yield(Chunk{}, fmt.Errorf("%w: %q", ErrUnknownModel, name)) }
	}
	return model.Stream(ctx, req)
}

// ModelNames is implemented by agents that serve several models ([Loop]
// over [Models]): a handler checks a request's model against it.
type ModelNames interface {
	// ModelNames are the names a run's [Input.Model] may take, the
	// default first; nil when the agent serves one model.
	ModelNames() []string
}

// ModelNames are the names of the loop's models when its model is a
// [Models], else nil.
func (l *Loop) ModelNames() []string {
	if m, ok := l.model.(*Models); ok {
		return m.Names()
	}
	return nil
}
