package wire

import (
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/agentui/agentui/cmf"
)

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

// CheckID is the one rule for ids: a 400 naming what (`"threadId"`, "a
// message id"), never repeating the id, when id is longer than MaxIDBytes
// or holds a character no id needs (see idChar); else nil. The protocol
// decoders check every id of a request with it, before anything is
// stored or run, and the chat routes their path's id.
func CheckID(what, id string) error {
	if len(id) > MaxIDBytes {
		return BadRequest(what + " is longer than " + strconv.Itoa(MaxIDBytes) + " bytes")
	}
	for i := 0; i < len(id); {
		if c := id[i]; c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(id[i:])
		if r == utf8.RuneError && size == 1 || !idChar(r) {
			return BadRequest(what + " must be printable UTF-8, without control or bidirectional formatting characters")
		}
		i += size
	}
	return nil
}

// idChar reports whether r may be part of an id: any printable character
// (ids are names: UUIDs, nanoids, "call_…", a tenant's own), but no
// control character (C0, DEL, C1), bidirectional formatting character or
// line or paragraph separator. Ids go where such characters do harm: a
// chat id comes back in a response header (X-Resumable-Stream-Id, where a
// control byte makes Go's client refuse the response and a proxy answer
// 502), run ids in another, and ids are written to logs and shown in
// terminals and trace viewers, which a bidi override (U+202E) or an escape
// sequence makes show something other than what is there. These are the
// characters the telemetry package escapes in attributes.
func idChar(r rune) bool {
	return !unicode.IsControl(r) && !unicode.Is(unicode.Bidi_Control, r) && r != '\u2028' && r != '\u2029'
}

// CheckChatID refuses a chat route's id when it is missing or CheckID
// refuses it.
func CheckChatID(id string) error {
	if id == "" {
		return BadRequest("missing chat id")
	}
	return CheckID("the chat id", id)
}

// SchemeProviderFile is the URL scheme a decoder gives provider file
// handles (AG-UI "file" sources: an id the model provider resolves with
// the server's credentials); sanitizing drops them unless it is allowed.
const SchemeProviderFile = "provider-file"

// LastID is the id of a conversation's last message: the last of msgs,
// else of history ("" for none). A new message names it as its parent.
func LastID(history, msgs []cmf.Message) string {
	switch {
	case len(msgs) > 0:
		return msgs[len(msgs)-1].ID()
	case len(history) > 0:
		return history[len(history)-1].ID()
	}
	return ""
}
