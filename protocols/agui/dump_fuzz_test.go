package agui_test

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/protocols/agui"
)

// FuzzDump shows arbitrary stored messages (as history would hold them,
// extensions included) as the client's messages. Nothing panics, the
// result encodes as JSON, and the protocol's own decoder takes it back
// without panicking.
func FuzzDump(f *testing.F) {
	testutil.FuzzStored(f, func(t *testing.T, msgs []cmf.Message) {
		dumped := agui.Dump(msgs)
		body, err := json.Marshal(map[string]any{"threadId": "c", "runId": "r", "messages": dumped})
		if err != nil {
			t.Fatalf("the dump does not encode: %v", err)
		}
		_, _ = agui.New().Decode(httptest.NewRequest("POST", "/", nil), body)
	})
}
