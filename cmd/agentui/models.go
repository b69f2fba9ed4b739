package main

import (
	"errors"
	"flag"
	"os"
	"strings"
)

// declareModelFlags declares the flags beside -model that choose models.
func declareModelFlags(str func(p *string, name, def, usage string), o *options) {
	str(&o.models, "models", "", "comma-separated models a request may pick (each as -model takes: anthropic:<id>, openai-responses:<id>, gemini:<id>, openai:<id>, demo), the first the default; instead of -model")
	str(&o.anthropicThinking, "anthropic-thinking", "adaptive", "how Claude models think: adaptive (Claude 4.6 and later), none (the model's default), or a budget of at least 1024 tokens (models up to Claude 4.6)")
}

// modelChoice is -model, or the list -models gives; both given (as flags
// or in the environment) is an error, since each names the default.
func (o *options) modelChoice(fs *flag.FlagSet) (model string, models []string, err error) {
	models = splitList(o.models)
	if len(models) == 0 {
		return o.model, nil, nil
	}
	modelGiven := false
	fs.Visit(func(f *flag.Flag) { modelGiven = modelGiven || f.Name == "model" })
	if v, ok := os.LookupEnv("AGENTUI_MODEL"); ok && strings.TrimSpace(v) != "" {
		modelGiven = true
	}
	if modelGiven {
		return "", nil, errors.New("-model and -models: give one (the first of -models is the default)")
	}
	return "", models, nil
}
