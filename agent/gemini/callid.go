package gemini

import (
	"strings"

	"github.com/agentui/agentui/internal/ids"
)

// Gemini often sends a function call without an id. agentui needs one
// for every call (the UI shows it, the history pairs the call with its
// result), so this package makes one up; but Gemini must get its calls
// back as it sent them, and a response answers a call by the call's own
// id or by none. So an id made up here starts with madeUpPrefix and is
// never sent: the call and its response go to Gemini without an id.
//
// The mark is in the id itself, not in the part's provider values, since
// the id is what always survives: a client's thread without history, or
// one that drops provider values, keeps it, as the tool result refers to
// it. An id Gemini sent that happens to start with madeUpPrefix is kept
// apart by a second prefix, so no id of Gemini's is ever taken for one
// made up, and each comes back exactly as Gemini sent it.
const madeUpPrefix = "gemini-local-"

// callID is agentui's id for a call Gemini sent with id ("" for none).
func callID(id string) string {
	switch {
	case id == "":
		// Unique in the whole chat, not only in this reply.
		return madeUpPrefix + ids.New()
	case strings.HasPrefix(id, madeUpPrefix):
		return madeUpPrefix + id
	}
	return id
}

// geminiID is the id to send Gemini for the call agentui knows as id: the
// one Gemini gave it, or "" for one made up here. Ids of other providers'
// calls go as they are.
func geminiID(id string) string {
	rest, ok := strings.CutPrefix(id, madeUpPrefix)
	switch {
	case !ok:
		return id
	case strings.HasPrefix(rest, madeUpPrefix):
		return rest // Gemini's own, kept apart by callID
	}
	return ""
}
