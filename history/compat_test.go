package history_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/history/redisstore"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/protocols/agui"
	"github.com/agentui/agentui/protocols/vercelai"
)

var update = flag.Bool("update", false, "rewrite the golden dumps of the current format")

// The stored format before the typed UI extension (agentui.calls and
// agentui.data under custom extensions), as the previous version wrote it:
// stored-v0.json, one conversation with every tool call state (a server
// tool, an approval denied with a reason, one approved, a client tool
// answered, an approval still pending) and a UI data record. The other
// files are what that version's dumps and pending-call scan made of it.
// Those must not change: a chat stored before still loads, shows and
// carries on the same.
const legacyChat = "testdata/stored-v0.json"

func readLegacy(t *testing.T) (raw []json.RawMessage, msgs []cmf.Message) {
	t.Helper()
	b, err := os.ReadFile(legacyChat)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"agentui.calls"`)) || !bytes.Contains(b, []byte(`"agentui.data"`)) {
		t.Fatal("the golden file is not in the legacy format")
	}
	msgs = make([]cmf.Message, len(raw))
	for i := range raw {
		if err := json.Unmarshal(raw[i], &msgs[i]); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	return raw, msgs
}

// checkLegacy compares what a store loaded with the previous version's
// view of the same chat.
func checkLegacy(t *testing.T, msgs []cmf.Message) {
	t.Helper()
	golden(t, "stored-v0.vercel.json", vercelai.Dump(msgs))
	golden(t, "stored-v0.agui.json", agui.Dump(msgs))
	type pendingCall struct { // the previous version's agent.PendingCall
		Kind                             int
		ToolCallID, ToolName, ApprovalID string
		Input                            json.RawMessage
	}
	var pending []pendingCall
	for _, p := range cmf.PendingToolCalls(msgs) {
		kind := 2
		if p.Status() == cmf.CallAwaitingApproval {
			kind = 1
		}
		pending = append(pending, pendingCall{kind, p.Call.ToolCallID, p.Call.Name, p.ApprovalID, p.Call.Arguments})
	}
	golden(t, "stored-v0.pending.json", pending)
	for i := range msgs {
		if e := msgs[i].Extensions; e != nil && len(e.Custom) > 0 {
			t.Fatalf("message %d keeps legacy records: %s", i, e.Custom)
		}
	}
}

func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from what the previous version made of the chat:\n%s", name, got)
	}
}

func TestLegacyStoredChatLoadsFromMemory(t *testing.T) {
	_, msgs := readLegacy(t)
	store := history.NewMemory()
	key := history.Key{Scope: "s", Chat: "c"}
	ctx := context.Background()
	if _, err := store.Write(ctx, key, 0, history.KeepAll, msgs...); err != nil {
		t.Fatal(err)
	}
	conv, err := store.Load(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	checkLegacy(t, conv.Messages)
}

// TestLegacyStoredChatLoadsFromRedis puts the legacy bytes into Redis as
// the previous version laid them out, and loads them with this one.
func TestLegacyStoredChatLoadsFromRedis(t *testing.T) {
	raw, _ := readLegacy(t)
	rdb := testutil.Redis(t)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, rdb, prefix)
	ctx := context.Background()
	base := prefix + "{s:c}:"
	vals := make([]any, len(raw))
	for i := range raw {
		vals[i] = []byte(raw[i])
	}
	if err := rdb.RPush(ctx, base+"msgs", vals...).Err(); err != nil {
		t.Fatal(err)
	}
	rdb.Set(ctx, base+"ver", 1, 0)
	rdb.Set(ctx, base+"gen", "1700000000000000", 0)
	store := redisstore.New(rdb, redisstore.WithPrefix(prefix))
	conv, err := store.Load(ctx, history.Key{Scope: "s", Chat: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if conv.Version != 1 || len(conv.Messages) != len(raw) {
		t.Fatalf("loaded version %d, %d messages", conv.Version, len(conv.Messages))
	}
	checkLegacy(t, conv.Messages)
}
