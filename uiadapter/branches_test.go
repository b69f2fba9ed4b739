package uiadapter_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
)

// treeOf reads a chat's tree as "role:text<parent" per message (the
// parent's text, "" for a first message), and its head's text.
func (f *historyFixture) treeOf(scope, chat string) (items []string, head string) {
	f.t.Helper()
	status, body := f.do(scope, http.MethodGet, "/api/chat/"+chat+"/tree", "")
	if status != http.StatusOK {
		f.t.Fatalf("tree: %d %s", status, body)
	}
	var tr struct {
		HeadID   *string
		Messages []struct {
			ParentID *string
			Message  struct {
				ID, Role string
				Parts    []struct{ Type, Text string }
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &tr); err != nil {
		f.t.Fatal(err)
	}
	text := map[string]string{}
	for _, m := range tr.Messages {
		for _, p := range m.Message.Parts {
			if p.Type == "text" {
				text[m.Message.ID] += p.Text
			}
		}
	}
	for _, m := range tr.Messages {
		parent := ""
		if m.ParentID != nil {
			parent = text[*m.ParentID]
		}
		items = append(items, m.Message.Role+":"+text[m.Message.ID]+"<"+parent)
	}
	if tr.HeadID != nil {
		head = text[*tr.HeadID]
	}
	return items, head
}

// storedTexts is the active branch as role:text.
func (f *historyFixture) storedTexts(scope, chat string) string {
	f.t.Helper()
	var out []string
	for _, m := range f.stored(scope, chat) {
		out = append(out, string(m.Role)+":"+m.Text())
	}
	return strings.Join(out, " ")
}

// An edit and a regeneration keep what they replaced as another branch:
// the tree lists both, parents first, and switching brings one back as
// the active branch the model and a reload see.
func TestEditAndRegenerateKeepBranches(t *testing.T) {
	for name, store := range threadStores(t) {
		t.Run(name, func(t *testing.T) {
			f := newHistoryFixture(t, store)
			f.chat("alice", testutil.UserMessage("c", "u1", "first"))
			f.chat("alice", testutil.UserMessage("c", "u2", "second"))
			msgs := f.stored("alice", "c")
			// useChat's regenerate({messageId}) of the last reply, then
			// an edit of the first message under its own id.
			f.chat("alice", `{"id":"c","trigger":"regenerate-message","messageId":"`+msgs[3].ID()+`","messages":[{"id":"u2","role":"user","parts":[{"type":"text","text":"second"}]}]}`)
			f.chat("alice", testutil.UserMessage("c", "u1", "first, edited"))
			if got := f.storedTexts("alice", "c"); got != "user:first, edited assistant:You said: first, edited" {
				t.Fatalf("the active branch: %s", got)
			}
			items, head := f.treeOf("alice", "c")
			// Versions in the order they were written: the first message
			// before its edit, the reply before its regeneration.
			want := []string{
				"user:first<", "assistant:You said: first<first", "user:second<You said: first",
				"assistant:You said: second<second", "assistant:You said: second<second",
				"user:first, edited<", "assistant:You said: first, edited<first, edited",
			}
			if strings.Join(items, "|") != strings.Join(want, "|") || head != "You said: first, edited" {
				t.Fatalf("the tree:\n%s\nhead %q; want\n%s", strings.Join(items, "\n"), head, strings.Join(want, "\n"))
			}
			// AG-UI's reconnect shows the active branch alone.
			status, snap := f.do("alice", http.MethodPost, "/api/agui/connect", `{"threadId":"c","runId":"r","protocolVersion":"1.0","messages":[]}`)
			if status != http.StatusOK || !strings.Contains(snap, `"MESSAGES_SNAPSHOT"`) || !strings.Contains(snap, "first, edited") || strings.Contains(snap, `"second"`) {
				t.Fatalf("the AG-UI snapshot: %d %s", status, snap)
			}
			// Back to the first version: its branch down its newest reply.
			status, body := f.do("alice", http.MethodPost, "/api/chat/c/branch", `{"id":"`+msgs[0].ID()+`"}`)
			if status == http.StatusNotFound {
				// the old version left under a fresh id: find it in the tree
				status, body = f.switchTo("alice", "c", "first")
			}
			if status != http.StatusNoContent {
				t.Fatalf("switch: %d %s", status, body)
			}
			if got := f.storedTexts("alice", "c"); got != "user:first assistant:You said: first user:second assistant:You said: second" {
				t.Fatalf("after switching back: %s", got)
			}
			// The next turn builds on the branch now active.
			f.chat("alice", testutil.UserMessage("c", "u3", "third"))
			if got := f.storedTexts("alice", "c"); !strings.HasSuffix(got, "user:second assistant:You said: second user:third assistant:You said: third") {
				t.Fatalf("a turn after the switch: %s", got)
			}
		})
	}
}

// switchTo switches chat to the branch through the user message saying
// text.
func (f *historyFixture) switchTo(scope, chat, text string) (int, string) {
	f.t.Helper()
	_, body := f.do(scope, http.MethodGet, "/api/chat/"+chat+"/tree", "")
	var tr struct {
		Messages []struct {
			Message struct {
				ID, Role string
				Parts    []struct{ Text string }
			}
		}
	}
	_ = json.Unmarshal([]byte(body), &tr)
	for _, m := range tr.Messages {
		if m.Message.Role == "user" && len(m.Message.Parts) > 0 && m.Message.Parts[0].Text == text {
			return f.do(scope, http.MethodPost, "/api/chat/"+chat+"/branch", `{"id":"`+m.Message.ID+`"}`)
		}
	}
	f.t.Fatalf("no user message %q in the tree: %s", text, body)
	return 0, ""
}

// A client that switched branches on its side (assistant-ui) and sends
// builds on the branch it shows: the server makes it the active one and
// never appends the message to the thread the client does not show.
func TestAClientsBranchBecomesActive(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	f.chat("alice", testutil.UserMessage("c", "u1", "first"))
	reply := f.stored("alice", "c")[1].ID()
	f.chat("alice", `{"id":"c","trigger":"regenerate-message","messageId":"`+reply+`","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"first"}]}]}`)
	// The client shows the first reply again, and sends after it.
	thread := `{"id":"c","trigger":"submit-message","messages":[` +
		`{"id":"u1","role":"user","parts":[{"type":"text","text":"first"}]},` +
		`{"id":"` + reply + `","role":"assistant","parts":[{"type":"text","text":"You said: first"}]},` +
		`{"id":"u2","role":"user","parts":[{"type":"text","text":"second"}]}]}`
	f.chat("alice", thread)
	msgs := f.stored("alice", "c")
	if len(msgs) != 4 || msgs[1].ID() != reply || f.storedTexts("alice", "c") != "user:first assistant:You said: first user:second assistant:You said: second" {
		t.Fatalf("stored %s (reply %s)", f.storedTexts("alice", "c"), msgs[1].ID())
	}
	if items, _ := f.treeOf("alice", "c"); len(items) != 5 {
		t.Fatalf("the other reply is not kept: %v", items)
	}
}

// The branch route refuses what it cannot do, each with a short JSON
// error: a bad body, a message on no branch, another scope's chat, a
// chat whose reply is running.
func TestBranchRouteRefusals(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	f.chat("alice", testutil.UserMessage("c", "u1", "first"))
	for _, c := range []struct {
		scope, body string
		status      int
	}{
		{"alice", `nope`, http.StatusBadRequest},
		{"alice", `{"id":""}`, http.StatusBadRequest},
		{"alice", `{"id":"x\u001b"}`, http.StatusBadRequest},
		{"alice", `{"id":"` + strings.Repeat("x", 8<<10) + `"}`, http.StatusRequestEntityTooLarge},
		{"alice", `{"id":"nowhere"}`, http.StatusNotFound},
		{"alice", `{"id":"u1"}`, http.StatusNotFound}, // on the active branch already
		{"bob", `{"id":"u1"}`, http.StatusNotFound},
	} {
		status, body := f.do(c.scope, http.MethodPost, "/api/chat/c/branch", c.body)
		if status != c.status || !strings.HasPrefix(body, `{"error":`) {
			t.Errorf("%s %.40s: %d %s, want %d", c.scope, c.body, status, body, c.status)
		}
	}
	resp := f.post("alice", testutil.UserMessage("c", "u2", "wait 2000 ms"))
	defer resp.Body.Close()
	testutil.Eventually(t, 5*time.Second, "the reply to run", func() bool {
		status, _ := f.do("alice", http.MethodPost, "/api/chat/c/branch", `{"id":"nowhere"}`)
		return status == http.StatusConflict
	})
	if status, _ := f.do("bob", http.MethodGet, "/api/chat/c/tree", ""); status != http.StatusNotFound {
		t.Fatalf("another scope's tree: %d", status)
	}
}

// A regeneration from a client that shows another branch regenerates
// the reply on that branch: useChat's regenerate() sends the thread up
// to the user message whose reply it replaces.
func TestARegenerationOnTheClientsBranch(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	f.chat("alice", testutil.UserMessage("c", "u1", "first"))
	f.chat("alice", `{"id":"c","trigger":"submit-message","wholeBranch":true,"messages":[{"id":"u1b","role":"user","parts":[{"type":"text","text":"first, again"}]}]}`)
	if got := f.storedTexts("alice", "c"); got != "user:first, again assistant:You said: first, again" {
		t.Fatalf("after the edit under a new id: %s", got)
	}
	// The client switched back to "first" on its side, and regenerates.
	f.chat("alice", `{"id":"c","trigger":"regenerate-message","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"first"}]}]}`)
	if got := f.storedTexts("alice", "c"); got != "user:first assistant:You said: first" {
		t.Fatalf("after regenerating on the client's branch: %s", got)
	}
	items, _ := f.treeOf("alice", "c")
	if len(items) != 5 { // two user versions, their three replies
		t.Fatalf("the tree: %v", items)
	}
}

// An AG-UI client edits by sending the thread as it now stands, and
// regenerates by sending it up to its last message, unchanged: the
// server keeps the old versions, the AG-UI tree route lists them as AG-UI
// messages, and the branch route brings one back for the next reconnect's
// snapshot.
func TestAGUIEditKeepsBranches(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	runs := 0
	run := func(messages string) {
		t.Helper()
		runs++ // a new runId for each run, as @ag-ui/client sends (the same one again is a retry)
		status, body := f.do("alice", http.MethodPost, "/api/agui", `{"threadId":"c","runId":"r`+strconv.Itoa(runs)+`","protocolVersion":"1.0","messages":`+messages+`}`)
		if status != http.StatusOK || !strings.Contains(body, "RUN_FINISHED") {
			t.Fatalf("run: %d %s", status, body)
		}
	}
	run(`[{"id":"u1","role":"user","content":"first"}]`)
	run(`[{"id":"u1","role":"user","content":"first, edited"}]`)
	run(`[{"id":"u1","role":"user","content":"first, edited"}]`)
	type item struct {
		ParentID *string
		Message  struct{ ID, Role, Content string }
	}
	var tr struct {
		HeadID   *string
		Messages []item
	}
	status, body := f.do("alice", http.MethodGet, "/api/agui/c/tree", "")
	if status != http.StatusOK {
		t.Fatalf("tree: %d %s", status, body)
	}
	if err := json.Unmarshal([]byte(body), &tr); err != nil {
		t.Fatal(err)
	}
	children := map[string][]item{}
	for _, m := range tr.Messages {
		if m.ParentID == nil {
			children[""] = append(children[""], m)
		} else {
			children[*m.ParentID] = append(children[*m.ParentID], m)
		}
	}
	firsts := children[""]
	if len(tr.Messages) != 5 || len(firsts) != 2 || firsts[0].Message.Content != "first" || firsts[1].Message.Content != "first, edited" ||
		len(children["u1"]) != 2 || tr.HeadID == nil || *tr.HeadID != children["u1"][1].Message.ID {
		t.Fatalf("the AG-UI tree: %s", body)
	}
	if status, body := f.do("alice", http.MethodPost, "/api/agui/c/branch", `{"id":"`+firsts[0].Message.ID+`"}`); status != http.StatusNoContent {
		t.Fatalf("switch: %d %s", status, body)
	}
	_, snap := f.do("alice", http.MethodPost, "/api/agui/connect", `{"threadId":"c","runId":"r2","protocolVersion":"1.0","messages":[]}`)
	if !strings.Contains(snap, `"You said: first"`) || strings.Contains(snap, "edited") {
		t.Fatalf("the snapshot after the switch: %s", snap)
	}
	if status, _ := f.do("bob", http.MethodGet, "/api/agui/c/tree", ""); status != http.StatusNotFound {
		t.Fatalf("another scope's tree: %d", status)
	}
}
