package vercelai

import (
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/internal/wire"
)

// BenchmarkEncodeTextDelta: one text-delta chunk per op, flushed every 64
// chunks. Target: at most one allocation per delta (the encoder itself
// should allocate none).
func BenchmarkEncodeTextDelta(b *testing.B) {
	w := wire.NewSSEWriter(&testutil.DiscardWriter{})
	enc := New().NewEncoder(w, &wire.Turn{ChatID: "c", Intent: wire.Submit}, wire.Trusted{})
	enc.Encode(&agent.RunStarted{MessageID: "01a1ffb5-4fe8-7bde-a228-eebeaef46ef0"})
	enc.Encode(&agent.StepStarted{Step: 1})
	enc.Encode(&agent.PartStarted{Kind: agent.PartText, ID: "01a1ffb5-4fe8-7c97-8ffc-aceb825783af"})
	ev := &agent.PartDelta{Kind: agent.PartText, ID: "01a1ffb5-4fe8-7c97-8ffc-aceb825783af", Delta: "1234 "}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		enc.Encode(ev)
		if i++; i%64 == 0 {
			_ = w.Flush()
		}
	}
}
