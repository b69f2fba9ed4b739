package testutil

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/cmf"
)

// DemoLoop is the demo model with its tools, except that delete_file
// deletes nothing: it counts its runs in deleted, so a test can tell
// whether an approval really ran the tool. It still needs approval.
func DemoLoop(t testing.TB, deleted *atomic.Int32) *agent.Loop {
	t.Helper()
	del := agent.FuncTool("delete_file", "Deletes a file.", func(_ context.Context, in demo.DeleteInput) (map[string]string, error) {
		deleted.Add(1)
		return map[string]string{"deleted": in.Path}, nil
	})
	del.NeedsApproval = agent.Always
	return DemoLoopWith(t, del)
}

// DemoLoopWith is the demo model with its tools, replaced by those of
// replace that have their names.
func DemoLoopWith(t testing.TB, replace ...agent.Tool) *agent.Loop {
	t.Helper()
	tools := demo.Tools()
	for i := range tools {
		for _, r := range replace {
			if tools[i].Name == r.Name {
				tools[i] = r
			}
		}
	}
	loop, err := agent.New(demo.New(), agent.WithTools(tools...))
	if err != nil {
		t.Fatal(err)
	}
	return loop
}

// StoredConversation is a conversation as history stores it, recorded from
// the demo loop: reasoning and a server tool, a denied and an approved
// approval, a call left waiting for the client, and a UI data record. The
// fuzz targets of what reads stored messages start from it.
func StoredConversation(t testing.TB) []cmf.Message {
	t.Helper()
	loop := DemoLoopWith(t)
	var conv []cmf.Message
	turn := func(text string, resume ...agent.Resolution) *agent.RunFinished {
		if text != "" {
			u := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: text}}}
			u.SetID("u-" + text)
			conv = append(conv, u)
		}
		rec := agent.NewRecorder()
		var fin *agent.RunFinished
		for ev, err := range loop.Run(context.Background(), &agent.Input{Messages: conv, Resume: resume}) {
			if err != nil {
				t.Fatal(err)
			}
			rec.Add(ev)
			if f, ok := ev.(*agent.RunFinished); ok {
				fin = f
			}
		}
		conv = append(conv, rec.Messages()...)
		return fin
	}
	turn("think: weather in Oslo")
	fin := turn("delete /tmp/a")
	turn("", agent.Resolution{ToolCallID: fin.Pending[0].ToolCallID, Kind: agent.Deny, Reason: "keep it"})
	fin = turn("delete /tmp/b")
	turn("", agent.Resolution{ToolCallID: fin.Pending[0].ToolCallID, Kind: agent.Approve})
	turn("where am i")
	conv[1].AddData(cmf.DataRecord{Name: "weather", ID: "d1", Value: []byte(`{"t":21}`), Index: 1})
	return conv
}

// FuzzStored runs check on arbitrary stored messages: the fuzz input is a
// JSON array of CMF messages, seeded with StoredConversation whole and
// message by message; input that does not decode is skipped. Seeds added
// to f before the call are kept.
func FuzzStored(f *testing.F, check func(t *testing.T, msgs []cmf.Message)) {
	conv := StoredConversation(f)
	all, _ := json.Marshal(conv)
	f.Add(all)
	for _, m := range conv {
		one, _ := json.Marshal([]cmf.Message{m})
		f.Add(one)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var msgs []cmf.Message
		if json.Unmarshal(data, &msgs) != nil {
			return
		}
		check(t, msgs)
	})
}
