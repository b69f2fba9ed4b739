package server

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/anthropic"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/agent/gemini"
	"github.com/agentui/agentui/agent/openai"
	"github.com/agentui/agentui/agent/openai/responses"
	"github.com/agentui/agentui/telemetry"
)

// modelSpecs are the model specs the server offers, the default first:
// -models, else -model.
func modelSpecs(cfg Config) ([]string, error) {
	switch {
	case len(cfg.Models) > 0 && cfg.Model != "":
		return nil, errors.New("-model and -models: give one (the first of -models is the default)")
	case len(cfg.Models) > 0:
		return cfg.Models, nil
	case cfg.Model == "":
		return nil, errors.New("no -model")
	}
	return []string{cfg.Model}, nil
}

// newModels builds the models the specs name as one agent.Models, each
// named by its spec: a request picks one by that name (useChat's body
// "model", AG-UI's forwardedProps.model) and GET /api/models lists them.
// Even a single model is a set of one, so the page learns its name the
// same way.
func newModels(cfg Config, specs []string) (*agent.Models, error) {
	flag := "-model"
	if len(cfg.Models) > 0 {
		flag = "-models"
	}
	if _, err := anthropicThinking(cfg.AnthropicThinking); err != nil {
		return nil, err
	}
	named := make([]agent.Named, 0, len(specs))
	for _, spec := range specs {
		m, err := newModel(cfg, flag, spec)
		if err != nil {
			return nil, err
		}
		named = append(named, agent.Named{Name: spec, Model: m})
	}
	models, err := agent.NewModels(named...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return models, nil
}

// Model specs: a provider and the model id its API takes.
const (
	specOpenAI    = "openai:"           // Chat Completions, any OpenAI-compatible endpoint
	specResponses = "openai-responses:" // OpenAI's Responses API
	specAnthropic = "anthropic:"        // Anthropic's Messages API
	specGemini    = "gemini:"           // the Gemini Developer API
)

// newModel builds the model one spec of flag names. A spec whose key is
// missing fails now, not as "An error occurred." in every chat.
func newModel(cfg Config, flag, spec string) (agent.Model, error) {
	provider, id, _ := strings.Cut(spec, ":")
	needs := func(key, hint string, alt ...string) error {
		for _, v := range append([]string{key}, alt...) {
			if strings.TrimSpace(os.Getenv(v)) != "" {
				return nil
			}
		}
		return fmt.Errorf("%s %s needs %s", flag, spec, hint)
	}
	var (
		m   agent.Model
		err error
	)
	switch {
	case spec == "demo":
		return demo.New(demo.WithWordDelay(cfg.DemoDelay)), nil
	case provider == "demo":
		// A second demo model under its own name: a set to pick from
		// without any provider's key (the page's model picker).
		return demo.New(demo.WithWordDelay(cfg.DemoDelay), demo.WithName(id)), nil
	case id == "":
		return nil, fmt.Errorf("unknown %s %q (want demo, openai:<model>, openai-responses:<model>, anthropic:<model> or gemini:<model>)", flag, spec)
	case provider+":" == specOpenAI:
		if err := needs("OPENAI_API_KEY", "OPENAI_API_KEY (any value for a server that takes none, with OPENAI_BASE_URL)"); err != nil {
			return nil, err
		}
		m, err = openai.New(id)
	case provider+":" == specResponses:
		if err := needs("OPENAI_API_KEY", "OPENAI_API_KEY"); err != nil {
			return nil, err
		}
		m, err = responses.New(id)
	case provider+":" == specAnthropic:
		if err := needs("ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY"); err != nil {
			return nil, err
		}
		thinking, _ := anthropicThinking(cfg.AnthropicThinking) // checked by newModels
		m, err = anthropic.New(id, thinking...)
	case provider+":" == specGemini:
		if err := needs("GEMINI_API_KEY", "GEMINI_API_KEY or GOOGLE_API_KEY", "GOOGLE_API_KEY"); err != nil {
			return nil, err
		}
		m, err = gemini.New(id)
	default:
		return nil, fmt.Errorf("unknown %s %q (want demo, openai:<model>, openai-responses:<model>, anthropic:<model> or gemini:<model>)", flag, spec)
	}
	if err != nil {
		// A base URL that is not one, say: the package's own words.
		return nil, fmt.Errorf("%s %s: %w", flag, spec, err)
	}
	return m, nil
}

// anthropicThinking is how the binary asks Claude to think
// (-anthropic-thinking): "adaptive" (the default: the model decides, its
// reasoning summarized so the page can show it; Claude 4.6 and later),
// "none" (no thinking configuration: the model's own default, which is no
// thinking before Claude 4.6), or a number of tokens (manual extended
// thinking with that budget, summarized, for models up to Claude 4.6).
func anthropicThinking(s string) ([]anthropic.Option, error) {
	switch s {
	case "", "adaptive":
		return []anthropic.Option{anthropic.WithThinking(anthropic.ThinkingAdaptive), anthropic.WithThinkingDisplay("summarized")}, nil
	case "none":
		return nil, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1024 {
		return nil, fmt.Errorf("-anthropic-thinking %q: want adaptive, none, or a budget of at least 1024 tokens", s)
	}
	return []anthropic.Option{anthropic.WithThinkingBudget(n), anthropic.WithThinkingDisplay("summarized")}, nil
}

// modelIdentity is the model a spec asks for and its provider, as
// telemetry names them (gen_ai.provider.name).
func modelIdentity(spec string) (name, provider string) {
	for _, p := range []struct{ prefix, provider string }{
		{specOpenAI, "openai"}, {specResponses, "openai"}, {specAnthropic, anthropic.Provider}, {specGemini, "gcp.gemini"},
	} {
		if id, ok := strings.CutPrefix(spec, p.prefix); ok {
			return id, p.provider
		}
	}
	return demo.ModelName, demo.Provider
}

// telemetryModel names the model for telemetry when the server runs one;
// with several, each call's own report names its model and provider.
func telemetryModel(specs []string) []telemetry.Option {
	opts := []telemetry.Option{telemetry.WithAgentName("agentui")}
	if len(specs) == 1 {
		opts = append(opts, telemetry.WithModel(modelIdentity(specs[0])))
	}
	return opts
}

// describeModels says which models the server runs, for its start-up
// line: "model demo", or "models a (default), b".
func describeModels(specs []string) string {
	if len(specs) == 1 {
		return "model " + specs[0]
	}
	return "models " + specs[0] + " (default), " + strings.Join(specs[1:], ", ")
}
