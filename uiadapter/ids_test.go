package uiadapter_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/agentui/agentui/uiadapter"
)

// CheckID refuses exactly the ids longer than MaxIDBytes, counted in
// bytes whatever they hold, with a short 400 that names the id and never
// repeats it.
func FuzzCheckID(f *testing.F) {
	for _, s := range []string{"", "c1", "01a21a5b-7fb8-7caf-a2ff-d889d985dfc2", strings.Repeat("x", uiadapter.MaxIDBytes),
		strings.Repeat("x", uiadapter.MaxIDBytes+1), strings.Repeat("é", uiadapter.MaxIDBytes/2+1), "\x00\xff\u202e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		err := uiadapter.CheckID(`"threadId"`, id)
		if len(id) <= uiadapter.MaxIDBytes {
			if err != nil {
				t.Fatalf("a %d-byte id refused: %v", len(id), err)
			}
			return
		}
		var e *uiadapter.Error
		if !errors.As(err, &e) || e.Status != http.StatusBadRequest || e.Message != `"threadId" is longer than 256 bytes` {
			t.Fatalf("a %d-byte id: %v", len(id), err)
		}
	})
}
