package vercelai_test

import (
	"testing"

	"github.com/agentui/agentui/internal/testutil"
	"github.com/agentui/agentui/protocols/vercelai"
)

// FuzzEncodeFraming: whatever strings and JSON a run carries, each event
// stays one data line of JSON (issue 11, defect 3: tool input with a
// newline split a frame).
func FuzzEncodeFraming(f *testing.F) { testutil.FuzzFraming(f, vercelai.New()) }
