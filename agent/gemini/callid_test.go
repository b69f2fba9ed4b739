package gemini

import (
	"strings"
	"testing"
)

// Every id Gemini sends comes back from agentui's id exactly; an id made
// up here is never sent, and is unique.
func FuzzCallID(f *testing.F) {
	for _, id := range []string{"", "fc-1", madeUpPrefix, madeUpPrefix + "x", madeUpPrefix + madeUpPrefix, "call_1"} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		local := callID(id)
		if id == "" {
			if !strings.HasPrefix(local, madeUpPrefix) || geminiID(local) != "" || local == callID("") {
				t.Fatalf("made-up id %q", local)
			}
			return
		}
		if got := geminiID(local); got != id {
			t.Fatalf("Gemini's id %q became %q and went back as %q", id, local, got)
		}
	})
}
