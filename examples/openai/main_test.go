package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentui/agentui/internal/testkit/testutil"
)

// The example against an in-process OpenAI-compatible endpoint.
func TestExample(t *testing.T) {
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer test-key" {
			http.Error(w, `{"error":{"message":"no","code":"invalid_api_key"}}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range []string{`{"content":"Hello from "}`, `{"content":"the model."}`} {
			fmt.Fprintf(w, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":null}]}\n\n", c)
		}
		fmt.Fprint(w, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer fake.Close()
	p := testutil.RunProgram(t, ".", []string{"OPENAI_BASE_URL=" + fake.URL + "/v1", "OPENAI_API_KEY=test-key"}, "-addr", "127.0.0.1:0", "-model", "m")
	// The README's curl, as written, against the test's port.
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := testutil.ShellBlocks(string(readme))
	_, curl, ok := strings.Cut(blocks[0], "\ncurl ")
	if !ok {
		t.Fatalf("no curl in README.md's commands:\n%s", blocks[0])
	}
	out, err := exec.Command("bash", "-euo", "pipefail", "-c", strings.ReplaceAll("curl "+curl, "127.0.0.1:8084", strings.TrimPrefix(p.URL, "http://"))).CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"delta":"Hello from "`) || !strings.Contains(string(out), `"delta":"the model."`) {
		t.Fatalf("the README's curl: %v\n%s", err, out)
	}
	if got := testutil.PostStream(t, p.URL+"/api/chat", testutil.UserMessage("c1", "m1", "hi")).Text(); got != "Hello from the model." {
		t.Fatalf("reply %q", got)
	}
	for _, path := range []string{"/", "/api/chats", "/api/chat/c1"} {
		resp, err := http.Get(p.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
	}
}

// Without OPENAI_API_KEY the example stops at once with one line.
func TestNoKey(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "openai")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.HasPrefix(string(out), "openai: set OPENAI_API_KEY") || strings.Count(string(out), "\n") != 1 {
		t.Fatalf("without a key: %v\n%s", err, out)
	}
}
