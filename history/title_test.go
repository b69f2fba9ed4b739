package history_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
)

func TestTitle(t *testing.T) {
	user := func(texts ...string) cmf.Message {
		m := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser}
		for _, s := range texts {
			m.Content = append(m.Content, cmf.Text{Text: s})
		}
		return m
	}
	long := strings.Repeat("word ", 40)
	for _, c := range []struct {
		msgs  []cmf.Message
		title string
		at    int
	}{
		{nil, "", -1},
		{[]cmf.Message{user("   ")}, "", -1},
		{[]cmf.Message{{Role: cmf.RoleAssistant, Content: []cmf.Part{cmf.Text{Text: "hi"}}}, user("a\tb", "c")}, "a b c", 1},
		{[]cmf.Message{user("\x00bell\x07 ring")}, "bell ring", 0},
		{[]cmf.Message{user(long)}, strings.TrimSpace(strings.Repeat("word ", 11)) + "…", 0},
		{[]cmf.Message{user(strings.Repeat("é", 100))}, strings.Repeat("é", 59) + "…", 0},
	} {
		title, at := history.Title(c.msgs)
		if title != c.title || at != c.at {
			t.Errorf("Title(%v) = %q, %d; want %q, %d", c.msgs, title, at, c.title, c.at)
		}
	}
	if got := history.CleanTitle(strings.Repeat("x", 500)); utf8.RuneCountInString(got) != history.MaxTitleRunes {
		t.Errorf("CleanTitle keeps %d runes", utf8.RuneCountInString(got))
	}
}

func FuzzCleanTitle(f *testing.F) {
	f.Add("  a\nb\t c ")
	f.Add(strings.Repeat("ü ", 80))
	f.Fuzz(func(t *testing.T, s string) {
		got := history.CleanTitle(s)
		if !utf8.ValidString(got) || utf8.RuneCountInString(got) > history.MaxTitleRunes {
			t.Fatalf("CleanTitle(%q) = %q", s, got)
		}
		if strings.ContainsAny(got, "\n\r\t\x00") || got != strings.TrimSpace(got) || strings.Contains(got, "  ") {
			t.Fatalf("CleanTitle(%q) = %q: not one clean line", s, got)
		}
		if history.CleanTitle(got) != got && !strings.HasSuffix(got, "…") {
			t.Fatalf("CleanTitle is not idempotent on %q", got)
		}
	})
}
