package uiadapter_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
)

// With history, every server tool call a run makes is in the chat's
// ledger, finished with its result, whether it ran at once or after an
// approval; the ledger goes with the chat.
func TestRunsRecordTheirCallsInTheLedger(t *testing.T) {
	store := history.NewMemory()
	f := newHistoryFixture(t, store)
	key := history.Key{Scope: "alice", Chat: "c"}
	weather := f.chat("alice", userBody("c", "weather in Paris"))
	asked := f.chat("alice", userBody("c", "delete /tmp/x.txt"))
	f.chat("alice", answerDeleteFile("c", asked, true))
	if f.deleted.Load() != 1 {
		t.Fatalf("the approved call ran %d times", f.deleted.Load())
	}
	calls, err := store.Calls(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	w := calls[weather.Find("tool-input-available")["toolCallId"].(string)]
	d := calls[asked.Find("tool-input-available")["toolCallId"].(string)]
	if len(calls) != 2 || !w.Finished || w.Tool != "get_weather" || w.Started.IsZero() ||
		!d.Finished || d.Tool != "delete_file" || string(d.Output) != `{"deleted":"/tmp/x.txt"}` {
		t.Fatalf("the ledger: %+v", calls)
	}
	if status, _ := f.do("alice", http.MethodDelete, "/api/chat/c", ""); status != http.StatusNoContent {
		t.Fatalf("delete: %d", status)
	}
	if calls, _ := store.Calls(context.Background(), key); len(calls) != 0 {
		t.Fatalf("the ledger outlived its chat: %+v", calls)
	}
}

// An approval answered, then sent again (a retried request, a replay),
// once after the other and twice at once, over memory history in one
// process: the approved tool runs once, whatever comes of the repeats.
func TestRepeatedApprovalsRunTheToolOnce(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	asked := f.chat("alice", userBody("c", "delete /tmp/x.txt"))
	answer := answerDeleteFile("c", asked, true)
	f.chat("alice", answer)
	if got := f.deleted.Load(); got != 1 {
		t.Fatalf("the approved call ran %d times", got)
	}
	if status, _ := f.do("alice", http.MethodPost, "/api/chat", answer); status == http.StatusOK && f.deleted.Load() != 1 {
		t.Fatalf("a repeated approval ran the call again (%d)", f.deleted.Load())
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { f.do("alice", http.MethodPost, "/api/chat", answer) })
	}
	wg.Wait()
	if got := f.deleted.Load(); got != 1 {
		t.Fatalf("repeated approvals ran the call %d times", got)
	}
}

// answerDeleteFile is useChat's continuation answering the delete_file
// approval the stream asked showed in chat: approved, or denied.
func answerDeleteFile(chat string, asked testutil.Chunks, approved bool) string {
	req, avail := asked.Find("tool-approval-request"), asked.Find("tool-input-available")
	return continuation(chat, msg(asked.Find("start")["messageId"].(string), "assistant", part("step-start"),
		part("tool-delete_file", "toolCallId", avail["toolCallId"], "state", "approval-responded", "input", avail["input"],
			"approval", map[string]any{"id": req["approvalId"], "approved": approved})))
}
