package vercelai_test

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/protocols/vercelai"
)

// FuzzDump shows arbitrary stored messages (as history would hold them,
// extensions included) as the client's messages. Nothing panics, the
// result encodes as JSON, and the protocol's own decoder takes it back
// without panicking.
func FuzzDump(f *testing.F) {
	testutil.FuzzStored(f, func(t *testing.T, msgs []cmf.Message) {
		dumped := vercelai.Dump(msgs)
		body, err := json.Marshal(map[string]any{"id": "c", "messages": dumped})
		if err != nil {
			t.Fatalf("the dump does not encode: %v", err)
		}
		_, _ = vercelai.New().Decode(httptest.NewRequest("POST", "/", nil), body)
	})
}
