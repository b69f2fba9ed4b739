package testutil

import (
	"net/http/httptest"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/uiadapter"
)

// Encode runs events through a protocol's encoder as the handler does
// (Encode each, Close, Flush) and returns the SSE body.
func Encode(p uiadapter.Protocol, turn *uiadapter.Turn, events ...agent.Event) string {
	rec := httptest.NewRecorder()
	w := uiadapter.NewSSEWriter(rec)
	enc := p.NewEncoder(w, turn)
	for _, ev := range events {
		_ = enc.Encode(ev)
	}
	_ = enc.Close()
	_ = w.Flush()
	return rec.Body.String()
}
