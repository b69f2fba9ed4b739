package gemini

import (
	"encoding/json"
	"strconv"
)

// Reply is what the "model" answers to one request: a stream of parts,
// or an error before the first byte.
//
// As Gemini 3 streams, each scripted part is one chunk; the last chunk
// carries the finish reason, the grounding sources and the usage. The
// fake signs as Gemini 3 does: the first function call of the reply gets
// a thought signature; a reply without calls ends with an empty text part
// that carries one. Part.Sign signs a part of the test's choosing too;
// Unsigned turns signatures off (a model without thinking).
type Reply struct {
	Parts []ReplyPart
	// Finish is the finish reason; "" is STOP.
	Finish string
	// Sources are web results the reply is grounded on (google_search):
	// sent as groundingMetadata.groundingChunks in the last chunk.
	Sources []Source
	// Unsigned: issue no thought signatures but the parts' own (Sign).
	Unsigned bool
	// Blocked refuses the prompt itself: promptFeedback.blockReason
	// (e.g. "PROHIBITED_CONTENT"), no candidates.
	Blocked string
	// Cut ends the stream after the parts, without a finish reason (a
	// connection cut mid-stream).
	Cut bool
	// StreamError ends the stream after the parts with an error object
	// in the stream, as the API does when a stream fails after it began.
	StreamError *Failure
	// Fail answers with an HTTP error instead of a stream.
	Fail *Failure
	// ModelVersion names the model in the chunks; "" is the model asked
	// for.
	ModelVersion string
	// Usage, when set, is the usage every chunk reports instead of the
	// counts the fake keeps (to test how a client reads usage).
	Usage *Usage
	// Stall holds the stream open after the parts, without a finish
	// reason, until the client goes away (to test cancellation).
	Stall bool
}

// Usage is a reply's usageMetadata, as the API counts: the prompt
// includes the cached tokens; the thoughts are not among the candidates'.
// The total is what the API adds up: prompt, candidates, thoughts and
// tool-use prompt.
type Usage struct {
	PromptTokenCount        int
	CachedContentTokenCount int
	CandidatesTokenCount    int
	ThoughtsTokenCount      int
	ToolUsePromptTokenCount int
}

// ReplyPart is one part of a scripted reply.
type ReplyPart struct {
	Text    string
	Thought bool // a thought summary (thought: true)
	Call    *Call
	// Sign gives this part a thought signature (besides the ones the
	// fake issues as Gemini 3 does).
	Sign bool
}

// Call is a function call in a scripted reply. ID is optional: Gemini
// often sends none.
type Call struct {
	ID   string
	Name string
	Args string // a JSON object; "" is {}
}

// Source is a web result a grounded reply cites.
type Source struct {
	URI   string
	Title string
}

// Failure is an error answer: an HTTP status, the Google API error
// status, a message, and the retry hints the real API gives.
type Failure struct {
	Code    int
	Status  string
	Message string
	// RetryDelay is a google.rpc.RetryInfo retryDelay ("0.05s"), in the
	// error's details.
	RetryDelay string
	// RetryAfter is a Retry-After header value (seconds).
	RetryAfter string
	// Details are further error details (e.g. an ErrorInfo).
	Details []map[string]any
}

// Text is a reply part of answer text.
func Text(s string) ReplyPart { return ReplyPart{Text: s} }

// Thought is a reply part of thought summary.
func Thought(s string) ReplyPart { return ReplyPart{Text: s, Thought: true} }

// CallPart is a reply part that calls a function.
func CallPart(name, args string) ReplyPart {
	return ReplyPart{Call: &Call{Name: name, Args: args}}
}

// Say is a reply of text fragments, one chunk each.
func Say(fragments ...string) Reply {
	r := Reply{}
	for _, f := range fragments {
		r.Parts = append(r.Parts, Text(f))
	}
	return r
}

// Calls is a reply that calls functions in parallel, after an optional
// thought.
func Calls(calls ...ReplyPart) Reply { return Reply{Parts: calls} }

// RateLimited is the 429 the API answers when a quota is exhausted, with
// the delay it asks for in a RetryInfo detail.
func RateLimited(retryDelay string) Reply {
	return Reply{Fail: &Failure{Code: 429, Status: "RESOURCE_EXHAUSTED",
		Message:    "You exceeded your current quota, please check your plan and billing details.",
		RetryDelay: retryDelay,
		Details: []map[string]any{{
			"@type":      "type.googleapis.com/google.rpc.QuotaFailure",
			"violations": []map[string]any{{"quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}},
		}}}}
}

// Overloaded is the 503 the API answers when the model is overloaded.
func Overloaded() Reply {
	return Reply{Fail: &Failure{Code: 503, Status: "UNAVAILABLE", Message: "The model is overloaded. Please try again later."}}
}

// InvalidArgument is a 400 with the given message.
func InvalidArgument(message string) Reply {
	return Reply{Fail: &Failure{Code: 400, Status: "INVALID_ARGUMENT", Message: message}}
}

// Overflow is the 400 the API answers for a prompt longer than the
// context window.
func Overflow(tokens, limit int) Reply {
	return InvalidArgument(overflowMessage(tokens, limit))
}

func overflowMessage(tokens, limit int) string {
	return "The input token count (" + strconv.Itoa(tokens) + ") exceeds the maximum number of tokens allowed (" + strconv.Itoa(limit) + ")."
}

// failureBody renders f as the API's error JSON.
func failureBody(f *Failure) []byte {
	details := append([]map[string]any{}, f.Details...)
	if f.RetryDelay != "" {
		details = append(details, map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f.RetryDelay})
	}
	b, _ := json.Marshal(apiError{Error: errorBody{Code: f.Code, Message: f.Message, Status: f.Status, Details: details}})
	return b
}
