package history

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentui/agentui/cmf"
)

// MaxTitleRunes bounds a title, derived or set.
const MaxTitleRunes = 100

// derivedTitleRunes is how much of a first message a derived title keeps.
const derivedTitleRunes = 60

// Title derives a conversation's title from the first user message among
// msgs: its text, spaces collapsed, cut at a word boundary to about 60
// characters with "…". at is that message's index; -1 when no user
// message has text. Stores call it on Append, so a title costs nothing
// to list.
func Title(msgs []cmf.Message) (title string, at int) {
	for i := range msgs {
		if msgs[i].Role != cmf.RoleUser {
			continue
		}
		var b strings.Builder
		for _, p := range msgs[i].Content {
			if t, ok := p.(cmf.Text); ok {
				b.WriteString(t.Text)
				b.WriteByte(' ')
			}
		}
		if t := CleanTitle(b.String()); t != "" {
			return shorten(t, derivedTitleRunes), i
		}
	}
	return "", -1
}

// CleanTitle collapses runs of spaces and control characters into one
// space, trims the ends and bounds the length to [MaxTitleRunes], so a
// title shows on one line whatever a client sent.
func CleanTitle(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return shorten(b.String(), MaxTitleRunes)
}

// shorten cuts s to at most n runes, at the last space when one is near,
// marking the cut with "…".
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut, count := 0, 0
	for i := range s {
		if count == n-1 {
			cut = i
			break
		}
		count++
	}
	out := s[:cut]
	if sp := strings.LastIndexByte(out, ' '); sp > len(out)*2/3 {
		out = out[:sp]
	}
	return strings.TrimRight(out, " ") + "…"
}
