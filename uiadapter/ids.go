package uiadapter

import "strconv"

// MaxIDBytes bounds every id a client sends: chat (thread) ids, run ids,
// message, tool call and approval ids, and the {id} of the chat routes.
//
// An id costs more than its length. A chat id is part of every key of its
// conversation and of every entry of its run's log, a run id comes back in
// a response header and in every run frame, and both label each span of a
// run: a 7 MB chat id grew Redis by 100 MB. The ids real clients send are
// far shorter: a UUID is 36 bytes, the AI SDK's generated ids 16, the tool
// call ids of OpenAI and Anthropic about 30. 256 leaves room for ids an
// application composes (a tenant, a user and a UUID) and keeps the worst
// case a few kilobytes per chat.
const MaxIDBytes = 256

// CheckID is the one bound on ids: a 400 naming what (`"threadId"`, "a
// message id") when id is longer than MaxIDBytes, else nil. The protocol
// decoders check every id of a request with it, before anything is
// stored or run, and the chat routes their path's id.
func CheckID(what, id string) error {
	if len(id) <= MaxIDBytes {
		return nil
	}
	return BadRequest(what + " is longer than " + strconv.Itoa(MaxIDBytes) + " bytes")
}

// checkChatID refuses a chat route's id when it is missing or too long.
func checkChatID(id string) error {
	if id == "" {
		return BadRequest("missing chat id")
	}
	return CheckID("the chat id", id)
}
