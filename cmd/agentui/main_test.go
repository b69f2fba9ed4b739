package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/internal/testutil"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentui-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "agentui")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// start runs the binary and returns the base URL it prints.
func start(t *testing.T, env []string, args ...string) (string, *testutil.LogBuffer) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	stdout, _ := cmd.StdoutPipe()
	stderr := &testutil.LogBuffer{} // written by exec's copying goroutine
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no startup line: %v; stderr: %s", err, stderr.String())
	}
	_, rest, ok := strings.Cut(line, "listening on ")
	if !ok {
		t.Fatalf("startup line = %q", line)
	}
	url, desc, _ := strings.Cut(strings.TrimSpace(rest), " ")
	t.Logf("started: %s %s", url, desc)
	return url, stderr
}

// The README's quick start, as written.
func TestQuickStart(t *testing.T) {
	url, stderr := start(t, nil, "-addr", "127.0.0.1:0")
	body := `{
  "id": "chat-1", "trigger": "submit-message",
  "messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "What is the weather in Paris?"}]}]
}`
	resp, err := http.Post(url+"/api/chat", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := testutil.ReadSSE(t, resp.Body)
	var text strings.Builder
	for _, e := range events {
		if strings.Contains(e, `"type":"text-delta"`) {
			i := strings.Index(e, `"delta":"`) + len(`"delta":"`)
			text.WriteString(strings.TrimSuffix(e[i:], `"}`))
		}
	}
	if text.String() != "The weather in Paris is sunny, 21°C." || events[len(events)-1] != "[DONE]" {
		t.Fatalf("reply %q, events %q", text.String(), events)
	}
	agui, err := http.Post(url+"/api/agui", "application/json", strings.NewReader(`{"threadId":"t","runId":"r","messages":[{"id":"u","role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	aguiEvents := testutil.ReadSSE(t, agui.Body)
	agui.Body.Close()
	if !strings.Contains(aguiEvents[0], `"RUN_STARTED"`) || !strings.Contains(aguiEvents[len(aguiEvents)-1], `"RUN_FINISHED"`) {
		t.Fatalf("AG-UI events = %q", aguiEvents)
	}
	health, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(health.Body)
	health.Body.Close()
	if string(b) != "ok\n" {
		t.Fatalf("healthz = %q", b)
	}
	if !strings.Contains(stderr.String(), "no -secret") {
		t.Fatalf("no warning about the random secret: %s", stderr.String())
	}
}

// Every flag has an AGENTUI_… twin; flags win over the environment.
func TestEnvironmentTwins(t *testing.T) {
	url, stderr := start(t, []string{"AGENTUI_ADDR=127.0.0.1:0", "AGENTUI_SECRET=s3cret", "AGENTUI_LOG_LEVEL=debug", "AGENTUI_DEMO_DELAY=0s", "AGENTUI_MODEL=demo", "AGENTUI_HISTORY=none"})
	resp, err := http.Post(url+"/api/chat", "application/json", strings.NewReader(`{"id":"c","messages":[{"id":"m","role":"user","parts":[{"type":"text","text":"hi"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	time.Sleep(50 * time.Millisecond)
	if strings.Contains(stderr.String(), "no -secret") {
		t.Fatal("AGENTUI_SECRET was ignored")
	}
	out, err := exec.Command(binary, "-model", "gpt-5").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `unknown -model "gpt-5"`) {
		t.Fatalf("a bad -model: %v %s", err, out)
	}
	cmd := exec.Command(binary, "-addr", "127.0.0.1:0", "-log-level", "loud")
	cmd.Env = append(os.Environ(), "AGENTUI_LOG_LEVEL=debug")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "-log-level") {
		t.Fatalf("the flag did not win over the environment: %v %s", err, out)
	}
}
