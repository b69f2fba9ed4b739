package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/internal/testkit/testutil"
)

// The README as a user follows it: the server prints its sandbox, the
// two curl commands (run by bash as written, against the test's port)
// ask and approve, the file is gone and the server prints the sandbox
// without it. Without Redis it stops at once, with one line.
func TestREADME(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := testutil.ShellBlocks(string(readme))
	if len(blocks) != 2 {
		t.Fatalf("README.md has %d sh blocks, want 2", len(blocks))
	}
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, testutil.Redis(t), prefix)
	p := testutil.RunProgram(t, ".", nil, "-addr", "127.0.0.1:0", "-redis", testutil.RedisURL(t), "-redis-prefix", prefix)
	var dir string
	testutil.Eventually(t, 5*time.Second, "the sandbox listing", func() bool {
		line, _, _ := strings.Cut(p.Stdout.String(), "\n")
		d, files, ok := strings.Cut(strings.TrimPrefix(line, "sandbox "), ": ")
		dir = d
		return ok && files == "draft.md, notes.txt, old-report.pdf"
	})
	host := strings.TrimPrefix(p.URL, "http://")
	script := strings.ReplaceAll(blocks[1], "127.0.0.1:8083", host)
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"delta":"notes.txt."`) || !strings.Contains(string(out), `"delta":"Deleted "`) {
		t.Fatalf("the README's commands: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); !os.IsNotExist(err) {
		t.Fatalf("notes.txt is still in %s: %v", dir, err)
	}
	testutil.Eventually(t, 5*time.Second, "the listing after the delete", func() bool {
		return strings.Contains(p.Stdout.String(), "sandbox "+dir+": draft.md, old-report.pdf\n")
	})

	bin := filepath.Join(t.TempDir(), "hitl")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	start := time.Now()
	out, err = exec.Command(bin, "-redis", "redis://127.0.0.1:1/0", "-addr", "127.0.0.1:0").CombinedOutput()
	if err == nil || string(out) != "hitl: Redis at 127.0.0.1:1 does not answer: start it, or point -redis at one\n" || time.Since(start) > 10*time.Second {
		t.Fatalf("Redis down: %v after %v:\n%s", err, time.Since(start), out)
	}
}

func TestExample(t *testing.T) {
	sandbox := t.TempDir()
	for _, f := range []string{"notes.txt", "draft.md"} {
		if err := os.WriteFile(filepath.Join(sandbox, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, testutil.Redis(t), prefix)
	p := testutil.RunProgram(t, ".", nil, "-addr", "127.0.0.1:0", "-sandbox", sandbox, "-redis", testutil.RedisURL(t), "-redis-prefix", prefix)
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(sandbox, name)); return err == nil }

	// useChat: ask, approve, deleted.
	approve := func(chat, text string) testutil.Chunks {
		asked := testutil.PostStream(t, p.URL+"/api/chat", testutil.UserMessage(chat, "m1", text))
		req, avail := asked.Find("tool-approval-request"), asked.Find("tool-input-available")
		if req == nil {
			t.Fatalf("no approval request: %v", asked)
		}
		body, _ := json.Marshal(map[string]any{"id": chat, "messages": []any{
			map[string]any{"id": "m1", "role": "user", "parts": []any{map[string]any{"type": "text", "text": text}}},
			map[string]any{"id": asked.Find("start")["messageId"], "role": "assistant", "parts": []any{map[string]any{
				"type": "tool-delete_file", "toolCallId": avail["toolCallId"], "state": "approval-responded", "input": avail["input"],
				"approval": map[string]any{"id": req["approvalId"], "approved": true, "signature": req["signature"]},
			}}},
		}})
		return testutil.PostStream(t, p.URL+"/api/chat", string(body))
	}
	if !exists("notes.txt") {
		t.Fatal("setup")
	}
	if got := approve("c1", "delete notes.txt").Text(); got != "Deleted notes.txt." || exists("notes.txt") {
		t.Fatalf("reply %q; file still there: %v", got, exists("notes.txt"))
	}
	// The sandbox holds: an approved delete outside it fails.
	outside := filepath.Join(t.TempDir(), "keep.txt")
	_ = os.WriteFile(outside, []byte("x"), 0o644)
	if got := approve("c2", "delete ../../../../../.."+outside).Text(); !strings.Contains(got, "leaves the sandbox") && !strings.Contains(got, "no such file") {
		t.Fatalf("reply %q", got)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Fatal("a file outside the sandbox was deleted")
	}

	// AG-UI: interrupt, resume, deleted.
	run := testutil.PostStream(t, p.URL+"/api/agui", testutil.AGUIInput("t1", "r1", "delete draft.md"))
	fin := run.Find("RUN_FINISHED")
	ir := fin["outcome"].(map[string]any)["interrupts"].([]any)[0].(map[string]any)
	resume, _ := json.Marshal(map[string]any{"threadId": "t1", "runId": "r2", "protocolVersion": "1.0", "messages": []any{},
		"resume": []any{map[string]any{"interruptId": ir["id"], "status": "resolved", "payload": map[string]any{"approved": true}}}})
	if got := testutil.PostStream(t, p.URL+"/api/agui", string(resume)).Text(); got != "Deleted draft.md." || exists("draft.md") {
		t.Fatalf("AG-UI reply %q", got)
	}
}
