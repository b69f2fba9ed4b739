package vercelai_test

import (
	"encoding/json"
	"testing"

	"github.com/agentui/agentui/internal/testutil"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

// FuzzEncodeFraming runs a whole run through the encoder with arbitrary
// strings and JSON values in every field: each event stays one data line
// of JSON (issue 11, defect 3: tool input with a newline split a frame).
func FuzzEncodeFraming(f *testing.F) {
	f.Add("x", []byte(`{"a":1}`))
	f.Add("line\nbreak\r\n\u2028", []byte("{\n  \"city\":\r\n \"Ber\\nlin\u2028\"\n}"))
	f.Add("data: [DONE]\n\n", []byte("[1,\n2]"))
	f.Add("\x00\x1f\"\\", []byte("\"\u2029\""))
	f.Fuzz(func(t *testing.T, s string, raw []byte) {
		if !json.Valid(raw) {
			return // the agent hands encoders only valid JSON
		}
		turn := &uiadapter.Turn{ChatID: s, RunID: s}
		testutil.CheckFrames(t, testutil.Encode(vercelai.New(), turn, testutil.EventsWith(s, raw)...))
	})
}
