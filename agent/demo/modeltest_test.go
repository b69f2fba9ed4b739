package demo_test

import (
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/agent/modeltest"
)

// The demo keeps the part of the contract that applies to a model with
// no provider behind it: its usage and its cancellation.
func TestContract(t *testing.T) {
	modeltest.Run(t, modeltest.Harness{
		Model: demo.ModelName,
		Start: func(*testing.T) modeltest.Backend { return demoBackend{} },
		Absent: map[modeltest.Capability]string{
			modeltest.Scripted:       "the demo answers by its grammar (docs/demo-model.md); nothing scripts it",
			modeltest.ProviderValues: "the demo keeps no provider values",
			modeltest.Faults:         "the demo calls no API, so no API refuses it",
			modeltest.Retries:        "the demo calls no API, so nothing is retried",
			modeltest.CacheWrites:    "the demo has no prompt cache",
		},
	})
}

// demoBackend builds the demo; it has nothing to script and receives no
// requests.
type demoBackend struct{}

func (demoBackend) Model(cfg modeltest.Config) (agent.Model, error) {
	return demo.New(demo.WithName(cfg.Model)), nil
}

func (demoBackend) Script(...modeltest.Answer) { panic("modeltest: the demo cannot be scripted") }

func (demoBackend) Requests() [][]byte { return nil }
