package main

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentui/agentui/internal/testkit/testutil"
)

// TestExample runs the example and checks its three rules over HTTP, and
// that each decision was logged with a decision field.
func TestExample(t *testing.T) {
	p := testutil.RunProgram(t, ".", nil, "-addr", "127.0.0.1:0")

	// delete_file outside /tmp: denied before any approval is asked.
	chunks := testutil.PostStream(t, p.URL+"/api/chat", testutil.UserMessage("c1", "m1", "delete /etc/passwd"))
	if chunks.Find("tool-approval-request") != nil {
		t.Fatal("the policy let an approval be asked")
	}
	if got := chunks.Text(); !strings.Contains(got, "denied by policy: files may be deleted only under /tmp") {
		t.Fatalf("reply %q does not say it was the policy", got)
	}
	// A path that leaves /tmp through ".." is denied too.
	if got := testutil.PostStream(t, p.URL+"/api/chat", testutil.UserMessage("c1b", "m1", "delete /tmp/../etc/passwd")).Text(); !strings.Contains(got, "denied by policy") {
		t.Fatalf("/tmp/../etc/passwd: reply %q", got)
	}
	// Under /tmp the approval is asked as usual.
	if testutil.PostStream(t, p.URL+"/api/chat", testutil.UserMessage("c2", "m1", "delete /tmp/x.txt")).Find("tool-approval-request") == nil {
		t.Fatal("no approval request for /tmp/x.txt")
	}

	// A card number: redacted before the model sees it, labelled PII.
	got := testutil.PostStream(t, p.URL+"/api/chat", testutil.UserMessage("c3", "m1", "pay with 4111-1111-1111-1111 please")).Text()
	if got != "You said: pay with [card number] please" {
		t.Fatalf("reply %q", got)
	}
	stored := conversation(t, p.URL, "c3")
	if stored[0].Metadata.Labels == nil || !slices.Equal(stored[0].Metadata.Labels, []string{"PII"}) || stored[0].Parts[0].Text != "pay with [card number] please" {
		t.Fatalf("stored user message: %+v", stored[0])
	}

	// get_weather results are labelled external.
	testutil.PostStream(t, p.URL+"/api/chat", testutil.UserMessage("c4", "m1", "weather in Rome"))
	if stored := conversation(t, p.URL, "c4"); !slices.Equal(stored[1].Metadata.Labels, []string{"external"}) {
		t.Fatalf("stored reply: %+v", stored[1])
	}

	// AG-UI: the same denial.
	run := testutil.PostStream(t, p.URL+"/api/agui", testutil.AGUIInput("t1", "r1", "delete /home/me/notes"))
	if res := run.Find("TOOL_CALL_RESULT"); res == nil || !strings.Contains(res["content"].(string), "denied by policy") {
		t.Fatalf("AG-UI run: %v", run)
	}

	log := p.Stderr.String()
	for _, want := range []string{`"decision":"deny"`, `"decision":"redact"`, `"decision":"label"`, `"policy":"rego"`} {
		if !strings.Contains(log, want) {
			t.Errorf("no %s in the log:\n%s", want, log)
		}
	}
}

type stored struct {
	Metadata struct{ Labels []string }
	Parts    []struct{ Text string }
}

func conversation(t *testing.T, url, chat string) []stored {
	t.Helper()
	resp, err := http.Get(url + "/api/chat/" + chat)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []stored
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out) < 2 {
		t.Fatalf("conversation %s: %v (%d messages)", chat, err, len(out))
	}
	return out
}
