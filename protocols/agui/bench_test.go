package agui

import (
	"strconv"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/internal/wire"
)

// BenchmarkEncodeTextDelta: one TEXT_MESSAGE_CONTENT event per op (with its
// timestamp), flushed every 64 events. Target: at most one allocation per
// delta.
func BenchmarkEncodeTextDelta(b *testing.B) {
	w := wire.NewSSEWriter(&testutil.DiscardWriter{})
	enc := New().NewEncoder(w, &wire.Turn{ChatID: "thread", RunID: "run", ProtocolVersion: "1.0"}, wire.Trusted{})
	enc.Encode(&agent.RunStarted{MessageID: "m"})
	enc.Encode(&agent.StepStarted{Step: 1, MessageID: "01a1ffb5-4fe8-7bde-a228-eebeaef46ef0"})
	enc.Encode(&agent.PartStarted{Kind: agent.PartText, ID: "t", MessageID: "01a1ffb5-4fe8-7bde-a228-eebeaef46ef0"})
	ev := &agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: "1234 "}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		enc.Encode(ev)
		if i++; i%64 == 0 {
			_ = w.Flush()
		}
	}
}

// BenchmarkDecodeResend: a RunAgentInput resending a thread of 250
// messages (what HttpAgent and CopilotKit send each turn), decoded whole.
func BenchmarkDecodeResend(b *testing.B) {
	var msgs []string
	for i := range 125 {
		id := strconv.Itoa(i)
		msgs = append(msgs, `{"id":"u`+id+`","role":"user","content":"What is the weather like in city number `+id+` today?"}`,
			`{"id":"a`+id+`","role":"assistant","content":"It is sunny in city number `+id+`, 21 degrees, with a light breeze from the west."}`)
	}
	body := []byte(`{"threadId":"t","runId":"r","protocolVersion":"1.0","state":{},"tools":[],"context":[],"forwardedProps":{},"messages":[` + strings.Join(msgs, ",") + `]}`)
	p := New()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Decode(nil, body); err != nil {
			b.Fatal(err)
		}
	}
}
