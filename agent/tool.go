package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentui/agentui/cmf"
	"github.com/google/jsonschema-go/jsonschema"
)

// Tool is a tool the model can call.
//
// A tool with an Execute function runs on the server. A tool without one is
// a client tool: the model's call is handed to the frontend, and the run
// resumes when the frontend sends the output.
type Tool struct {
	Name        string
	Description string
	// InputSchema is the JSON Schema of the arguments. Arguments are
	// validated against it before the tool runs (or is shown for
	// approval); invalid arguments become an error result the model sees.
	// Nil accepts any JSON object.
	InputSchema json.RawMessage
	// Execute runs the tool with validated arguments and returns its
	// result as JSON. An error becomes an error result the model sees.
	// Execute must return when ctx is cancelled.
	Execute func(ctx context.Context, args json.RawMessage) (json.RawMessage, error)
	// NeedsApproval, when set and true for the arguments, pauses the run
	// for the user's approval before Execute runs. Use [Always] for tools
	// that always need it.
	NeedsApproval func(args json.RawMessage) bool
	// Object is the tool's access profile, and Data the policy for its
	// output (labels its results get, the actions allowed on them): a
	// [Guard] sees them in the extensions of the call and of its result,
	// and Data's ApplyLabels are added to every result the tool returns.
	// Nil for none.
	Object *cmf.ObjectSecurityProfile
	Data   *cmf.DataPolicy
	// Idempotent says the tool may run twice for one call: a call that
	// started and never finished (its run stopped, its server died) runs
	// again when the run goes on, with the same [IdempotencyKey]. False,
	// the default, is at-most-once: such a call is not run again, and its
	// result says its outcome is unknown ([OutcomeUnknown]). With history
	// a [Ledger] keeps this promise across requests and replicas.
	Idempotent bool
}

// Always is a NeedsApproval predicate for tools that always need approval.
func Always(json.RawMessage) bool { return true }

// Spec is the tool's description for the model.
func (t *Tool) Spec() ToolSpec {
	return ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.InputSchema}
}

// FuncTool makes a server tool from a typed Go function. The input schema
// is generated from In (json tags name the properties, "jsonschema" tags
// describe them); arguments are decoded into In, and the result is encoded
// as JSON. It panics if In has no JSON Schema (a channel, a func, a map with
// non-string keys): that is a programming error, found at startup.
func FuncTool[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error)) Tool {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("agent: tool %s: %v", name, err))
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		panic(fmt.Sprintf("agent: tool %s: %v", name, err))
	}
	return Tool{
		Name:        name,
		Description: description,
		InputSchema: raw,
		Execute: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			var in In
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, fmt.Errorf("invalid arguments: %w", err)
			}
			out, err := fn(ctx, in)
			if err != nil {
				return nil, err
			}
			return json.Marshal(out)
		},
	}
}

// tool is a Tool with its schema resolved once.
type tool struct {
	Tool
	schema *jsonschema.Resolved // nil: any object
}

func compileTool(t Tool) (*tool, error) {
	if t.Name == "" {
		return nil, errors.New("agent: a tool has no name")
	}
	c := &tool{Tool: t}
	if len(t.InputSchema) == 0 {
		return c, nil
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(t.InputSchema, &s); err != nil {
		return nil, fmt.Errorf("agent: tool %s: input schema: %w", t.Name, err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("agent: tool %s: input schema: %w", t.Name, err)
	}
	c.schema = r
	return c, nil
}

// validate checks arguments: a JSON object that matches the schema.
func (t *tool) validate(args json.RawMessage) error {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return errors.New("arguments must be a JSON object")
	}
	var v map[string]any
	if err := json.Unmarshal(trimmed, &v); err != nil {
		return fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	if t.schema == nil {
		return nil
	}
	if err := t.schema.Validate(v); err != nil {
		return fmt.Errorf("arguments do not match the schema: %v", err)
	}
	return nil
}

func (t *tool) needsApproval(args json.RawMessage) bool {
	return t.NeedsApproval != nil && t.NeedsApproval(args)
}

func (t *tool) isClient() bool { return t.Execute == nil }
