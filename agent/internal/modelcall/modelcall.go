// Package modelcall is what the model packages (agent/anthropic,
// agent/gemini, agent/openai, agent/openai/responses) share about a call
// to a provider's API: which refusals are tried again, and how (one
// meaning of WithMaxRetries for all of them), and what a failure that
// outlasted the retries means to the person waiting for the reply (the
// agent package's errors, which a server turns into one sentence each).
package modelcall
