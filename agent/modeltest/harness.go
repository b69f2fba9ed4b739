// Package modeltest is the contract suite for [agent.Model]: what every
// model must do, whichever provider it speaks to. A model package runs it
// in its own tests, against its provider's fake (or a real endpoint):
//
//	func TestContract(t *testing.T) {
//		modeltest.Run(t, modeltest.Harness{Provider: "acme", Model: "acme-1", OtherModel: "acme-2", Start: startFake})
//	}
//
// [Run] checks, each in a subtest of its own:
//
//   - usage: what a finish chunk reports follows the convention of
//     docs/models.md (total = input + output, cache reads and writes part
//     of input, reasoning part of output), with the numbers the API billed;
//   - stop reasons: the API's end, tool calls, output limit and content
//     filter come out as cmf.StopEnd, StopCall, StopMaxTokens and
//     StopRefusal;
//   - provider values: a value the model produces is tagged with its
//     provider and model and kept with its part, goes back byte-exact to
//     that model, and never to another (another provider's, another model's
//     of the same provider, one of unknown origin), also after a switch of
//     model between turns or within one;
//   - retries: a refusal worth retrying is sent again exactly as many times
//     as WithMaxRetries says, then fails as [agent.ErrModelBusy];
//   - faults: rate limits, server errors, a refused key, an invalid
//     request, a prompt over the context window and an address where
//     nothing listens each mean the agent error that docs/models.md's
//     table says, and the error carries neither the key nor the provider's
//     words;
//   - cancellation: a cancelled context ends the stream promptly with the
//     context's error.
//
// Every stream the suite reads is also held to the chunk contract: one
// finish chunk, last; valid stop reasons; every value tagged.
//
// A model without some capability (a model with no HTTP API, an API
// without cache writes) says so in [Harness.Absent], with the reason; the
// subtests that need it are skipped with that reason, so the report shows
// what was not checked.
package modeltest

import (
	"testing"

	"github.com/agentui/agentui/agent"
)

// Harness is what a model's tests give [Run]: how to start what its models
// talk to, and which capabilities they lack.
type Harness struct {
	// Provider is the tag of the values the model keeps
	// ([cmf.Opaque.Provider], e.g. "anthropic"); "" for a model that
	// keeps none.
	Provider string
	// Model is the name the suite builds models with ([Config.Model]),
	// which their values carry ([cmf.Opaque.Model]).
	Model string
	// OtherModel is another model of the same provider that the backend
	// serves too: values of one must never reach the other. Required
	// unless [ProviderValues] is absent.
	OtherModel string
	// Start starts a backend for one subtest (the provider's fake, on
	// loopback) and stops it when t ends.
	Start func(t *testing.T) Backend
	// Absent names the capabilities the model or its backend does not
	// have, each with the reason (required). Their subtests are skipped
	// with that reason; every other subtest runs.
	Absent map[Capability]string
}

// Backend is what a model talks to in one subtest: a provider's fake that
// the suite scripts and reads back.
type Backend interface {
	// Model builds a model over this backend, as cfg says.
	Model(cfg Config) (agent.Model, error)
	// Script queues the answers to the next requests, one a request, in
	// order. A request the backend refuses of its own accord (as the API
	// refuses a value that does not verify) takes none.
	Script(answers ...Answer)
	// Requests returns the body of every request the backend got, refused
	// ones included, oldest first.
	Requests() [][]byte
}

// Config says how to build a model.
type Config struct {
	// Model is the model's name: [Harness.Model] or [Harness.OtherModel].
	Model string
	// APIKey is the key the model must send. The suite makes the
	// provider's error messages echo it, and checks that no error does.
	APIKey string
	// MaxRetries is how many times a refused request may be sent again
	// (the model's WithMaxRetries).
	MaxRetries int
	// BaseURL, when set, is the base URL the model must use instead of
	// the backend's: an address where nothing listens.
	BaseURL string
}

// Answer is what the backend answers one request with: a streamed reply,
// or with Fault set, a refusal.
type Answer struct {
	// Reasoning is reasoning the model streams first, with the value the
	// API gives for it (a signature, encrypted content), where it gives
	// one: an API that signs the reply rather than its reasoning signs
	// the reply.
	Reasoning string
	// Text is answer text.
	Text string
	// Call is a tool call, after the text.
	Call *Call
	// Stop is how the API says the reply ended.
	Stop Stop
	// Usage is what the API bills for the reply, written the way the API
	// writes it; nil leaves it to the backend.
	Usage *Usage
	// Stall keeps the stream open after the content, without ending it,
	// until the client goes away.
	Stall bool

	// Fault, when set, refuses the request as the API refuses it, with
	// its status and error body. A refusal worth retrying asks to be
	// retried at once (as the API's retry hints can), so that no test
	// waits on a backoff.
	Fault Fault
	// Message is the message of the refusal's error body, where the API
	// puts its message (for ContextOverflow, after the API's own words,
	// which a model may need to tell the refusal).
	Message string
}

// Call is a tool call in an [Answer].
type Call struct {
	Name string
	Args string // a JSON object
}

// Usage is what an API bills for one reply, counted as agentui counts
// ([agent.Usage]): Input is every input token, CachedInput (read from the
// prompt cache) and CacheWrite (written to it) among them; Output is every
// output token, Reasoning among them. A backend writes it in its API's
// terms (an API that counts cached tokens apart from the input gets
// Input - CachedInput - CacheWrite as its input).
type Usage struct {
	Input, CachedInput, CacheWrite int64
	Output, Reasoning              int64
}

// Stop is how an API says a reply ended.
type Stop int

const (
	// EndTurn is the API's normal end, or its end for tool calls when the
	// reply calls one.
	EndTurn Stop = iota
	// MaxTokens is the API's end at the output limit.
	MaxTokens
	// ContentFilter is the API's end when its content filter stopped the
	// reply (a refusal, a safety block).
	ContentFilter
)

// Fault is how an API refuses a request.
type Fault int

// The faults, each as the API writes it. The zero Fault answers.
const (
	_              Fault = iota
	RateLimited          // 429
	ServerError          // 500
	Overloaded           // 503, or the API's own (Anthropic's 529)
	InvalidRequest       // 400: a request the API will not take
	BadKey               // the API's refusal of a wrong key: 401, or its own (Gemini's 400 API_KEY_INVALID)
	// ContextOverflow is the API's refusal of a prompt over the model's
	// context window: its status and code, or its error in the stream.
	ContextOverflow
)

func (f Fault) String() string {
	switch f {
	case RateLimited:
		return "rate limited"
	case ServerError:
		return "server error"
	case Overloaded:
		return "overloaded"
	case InvalidRequest:
		return "invalid request"
	case BadKey:
		return "bad key"
	case ContextOverflow:
		return "context overflow"
	}
	return "no fault"
}

// Capability is something a model or its backend may not have; a harness
// lists those it lacks in [Harness.Absent].
type Capability string

// The capabilities the suite's subtests need.
const (
	// Scripted: the backend answers as [Backend.Script] says, and records
	// what it got. Without it only what needs no script is checked.
	Scripted Capability = "scripted answers"
	// ProviderValues: the model keeps values its provider needs back
	// (cmf.Opaque: signatures, encrypted reasoning).
	ProviderValues Capability = "provider values"
	// Faults: the backend refuses as [Answer.Fault] says, and the model
	// can be pointed where nothing listens ([Config.BaseURL]).
	Faults Capability = "faults"
	// Retries: [Config.MaxRetries] bounds how often a refused request is
	// sent again.
	Retries Capability = "retries"
	// CacheWrites: the API reports tokens written to its prompt cache.
	CacheWrites Capability = "cache writes"
)

var capabilities = []Capability{Scripted, ProviderValues, Faults, Retries, CacheWrites}
