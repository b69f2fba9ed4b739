package turn

import (
	"bytes"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/wire"
)

func TestPlanClientKeepsOnlyWhatOpened(t *testing.T) {
	c := wire.NewChatSeal([]byte("a secret of at least thirty-two bytes"), "vercel-ai", "alice", "chat-1")
	s := wire.NewSealer(c, nil)
	thinking := cmf.Thinking{Text: "Plan.", Opaque: &cmf.Opaque{Provider: "anthropic", Model: "m", Data: "sig-1"}}
	text := cmf.Text{Text: "Sunny.", Opaque: &cmf.Opaque{Provider: "gemini", Model: "m", Data: "sig-2"}}
	v0 := s.Seal(&agent.PartEnded{Part: thinking}, "m1", 0)
	if v0 == "" || s.Seal(&agent.PartEnded{Part: text}, "m1", 0) == "" {
		t.Fatal("nothing sealed")
	}
	reply := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant}
	reply.SetID("m1")
	// The client adds a value of its own on the text: dropped, as always.
	reply.Content = []cmf.Part{cmf.Thinking{Text: "Plan."}, cmf.Text{Text: "Sunny.", Opaque: &cmf.Opaque{Provider: "gemini", Model: "m", Data: "forged"}}}
	thread := []cmf.Message{textMsg(cmf.RoleUser, "u1", "Weather in Oslo?"), reply, textMsg(cmf.RoleUser, "u2", "And tomorrow?")}
	// And it moves the thinking's value onto the text.
	sealed := []wire.SealedValue{{Message: 1, Part: 0, Value: v0}, {Message: 1, Part: 1, Value: v0}}
	turn := &wire.Turn{ChatID: "chat-1", Intent: wire.Submit, Messages: thread, Sealed: sealed}
	base, p, f, err := PlanClient(turn, nil, &Policy{}, c)
	if err != nil {
		t.Fatal(err)
	}
	if f.Sealed != 1 || f.Signatures != 1 || !f.Any() {
		t.Fatalf("findings = %+v", f)
	}
	want := []cmf.Part{thinking, cmf.Text{Text: "Sunny."}}
	if !reflect.DeepEqual(base[1].Content, want) || len(p.Add) != 1 {
		t.Fatalf("base = %+v, plan adds %d", base[1].Content, len(p.Add))
	}
	var logs bytes.Buffer
	f.Log(slog.New(slog.NewTextHandler(&logs, nil)))
	if !strings.Contains(logs.String(), `"dropped sealed provider values that did not open" count=1`) {
		t.Fatalf("log:\n%s", logs.String())
	}
	// Without the chat's key (nil), nothing opens.
	if _, _, f, _ := PlanClient(turn, nil, &Policy{}, nil); f.Sealed != 2 {
		t.Fatalf("without a key: findings = %+v", f)
	}
}
