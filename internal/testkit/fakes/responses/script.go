package responses

import (
	"strconv"
	"time"
)

// Reply is what the fake "model" answers one request with: output items
// streamed the way the Responses API streams them, or an error.
//
// The zero Reply is an empty completed response.
type Reply struct {
	// Output is what the model produces, in order.
	Output []Item
	// Incomplete ends the response with response.incomplete and this
	// reason ("max_output_tokens", "content_filter") instead of
	// response.completed.
	Incomplete string
	// Usage replaces the usage the fake computes.
	Usage *Usage

	// Status, when not 0 or 200, answers with this HTTP status and Error
	// as the body, before any byte of a stream (429, 500, 503, …).
	Status int
	// Error is the error body for Status, or the error of a failure in
	// the stream (FailCode).
	Error *Error
	// RetryAfter, with Status, sets retry-after-ms and retry-after.
	RetryAfter time.Duration

	// FailAfter, when > 0, ends the stream after this many deltas (text,
	// summary, argument fragments) have been sent: with an error event
	// and response.failed when Error is set, else by closing the
	// connection with no terminal event.
	FailAfter int
	// StreamError sends an error event and response.failed right after
	// response.in_progress, as the real API does for a request it refuses
	// once the stream has begun (a context window overflow). Error says
	// which.
	StreamError bool
	// Stall holds the stream open after the output, without a terminal
	// event, until the client goes away (to test cancellation).
	Stall bool
}

// Item is one output item of a reply. Exactly one field is set; use the
// constructors.
type Item struct {
	reasoning []string // summary parts; nil for none
	isReason  bool
	text      string
	citations []Citation
	refusal   string
	call      *call
	search    *search
}

type call struct{ name, args string }

type search struct{ query string }

// Citation is a url_citation annotation on a text item: the model cites
// URL (with Title) for the text between Start and End (byte offsets).
type Citation struct {
	URL, Title string
	Start, End int
}

// Reasoning is a reasoning item whose summary has these parts (none: an
// item with an empty summary, as when no summary was asked for).
func Reasoning(summary ...string) Item { return Item{reasoning: summary, isReason: true} }

// Text is an assistant message with one output_text part.
func Text(text string, citations ...Citation) Item { return Item{text: text, citations: citations} }

// Refusal is an assistant message with one refusal part.
func Refusal(text string) Item { return Item{refusal: text} }

// Call is a function_call item; its arguments are streamed in fragments.
func Call(name, args string) Item { return Item{call: &call{name: name, args: args}} }

// WebSearch is a web_search_call item for query (the provider's own
// search; a Text item after it cites what it found).
func WebSearch(query string) Item { return Item{search: &search{query: query}} }

// Usage is a response's token usage, as the API reports it.
type Usage struct {
	InputTokens, CachedTokens, CacheWriteTokens int64
	OutputTokens, ReasoningTokens               int64
}

// Error is the API's error object: {"error": {message, type, param, code}}.
// Param and Code are null when empty.
type Error struct {
	Message string
	Type    string
	Param   string
	Code    string
}

// RateLimited is a 429 a client should retry after retryAfter.
func RateLimited(model string, retryAfter time.Duration) Reply {
	return Reply{Status: 429, RetryAfter: retryAfter, Error: &Error{
		Message: "Rate limit reached for " + model + " in organization org-fake on tokens per min (TPM): Limit 30000, Used 29952, Requested 749. Please try again in " + strconv.FormatInt(retryAfter.Milliseconds(), 10) + "ms. Visit https://platform.openai.com/account/rate-limits to learn more.",
		Type:    "tokens", Code: "rate_limit_exceeded",
	}}
}

// Overloaded is a 503 a client should retry after retryAfter.
func Overloaded(retryAfter time.Duration) Reply {
	return Reply{Status: 503, RetryAfter: retryAfter, Error: &Error{
		Message: "That model is currently overloaded with other requests. You can retry your request, or contact us through our help center at help.openai.com if the error persists.",
		Type:    "server_error",
	}}
}

// ContextOverflow is the in-stream refusal of a conversation longer than
// the model's context window.
func ContextOverflow() Reply {
	return Reply{StreamError: true, Error: overflowError()}
}

func overflowError() *Error {
	return &Error{
		Message: "Your input exceeds the context window of this model. Please adjust your input and try again.",
		Type:    "invalid_request_error", Param: "input", Code: "context_length_exceeded",
	}
}

// FailMidStream streams the reply's output and fails with a server error
// after n deltas.
func FailMidStream(n int, output ...Item) Reply {
	return Reply{Output: output, FailAfter: n, Error: &Error{Message: "The server had an error while processing your request. Sorry about that!", Type: "server_error", Code: "server_error"}}
}

// CutMidStream streams the reply's output and closes the connection after
// n deltas, with no terminal event.
func CutMidStream(n int, output ...Item) Reply {
	return Reply{Output: output, FailAfter: n}
}
