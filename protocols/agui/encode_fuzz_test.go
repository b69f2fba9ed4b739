package agui_test

import (
	"testing"

	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/protocols/agui"
)

// FuzzEncodeFraming: whatever strings and JSON a run carries, each event
// stays one data line of JSON (a newline in tool input must not split a
// frame over two lines, which a client's parser rejects).
func FuzzEncodeFraming(f *testing.F) { testutil.FuzzFraming(f, agui.New()) }
