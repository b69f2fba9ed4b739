package uiadapter

import "testing"

// Any bytes a client sends as a frame decode to a frame, an error to
// answer its request with, or nothing to answer; never a panic, and
// never a send or resume that failed its checks.
func FuzzWebSocketFrame(f *testing.F) {
	for _, seed := range []string{
		`{"type":"send","requestId":"r","id":"c","trigger":"submit-message","messages":[],"body":{"busy":"queue"},"headers":{"x":"y"}}`,
		`{"type":"resume","requestId":"r","id":"c","lastSequence":4}`,
		`{"type":"abort","requestId":"r"}`,
		`{"type":"nope","requestId":"r"}`,
		`{"type":"send","requestId":"r","id":1}`,
		`{"requestId":"r","lastSequence":-1}`,
		`not json`, `[]`, `{"requestId":"\u001b"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, err := parseFrame(data)
		if err == nil && fr.Type != "abort" && (fr.ID == nil || fr.check() != nil) {
			t.Fatalf("a frame that fails its checks passed: %s", data)
		}
		if err == nil && fr.RequestID == "" {
			t.Fatalf("a frame without a requestId passed: %s", data)
		}
	})
}
