package agentui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui"
	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/uiadapter"
)

// newAPI mounts an API with history, one user, under prefix.
func newAPI(t *testing.T, prefix string) (*agentui.API, *httptest.Server) {
	t.Helper()
	loop := testutil.Must(agent.New(demo.New(), agent.WithTools(demo.Tools()...)))
	api, err := agentui.New(loop, uiadapter.WithStore(history.NewMemory()), uiadapter.WithScope(uiadapter.SingleScope))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	api.Mount(mux, prefix)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return api, srv
}

// Every route Mount registers answers as the client that uses it
// expects: a chat is sent, reloaded, listed, renamed, resumed and
// stopped while it runs, reconnected over AG-UI, and deleted.
func TestMountServesEveryRoute(t *testing.T) {
	_, srv := newAPI(t, "/api/")
	base := srv.URL + "/api"
	do := func(method, path, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	status := func(resp *http.Response) int { _, _ = io.Copy(io.Discard, resp.Body); return resp.StatusCode }

	if got := testutil.PostStream(t, base+"/chat", testutil.UserMessage("c1", "m1", "hello")).Text(); got != "You said: hello" {
		t.Fatalf("useChat reply %q", got)
	}
	var msgs []map[string]any
	if err := json.NewDecoder(do("GET", "/chat/c1", "").Body).Decode(&msgs); err != nil || len(msgs) != 2 {
		t.Fatalf("reload: %v %v", msgs, err)
	}
	if got := status(do("PATCH", "/chat/c1", `{"title":"Greetings"}`)); got != http.StatusNoContent {
		t.Fatalf("rename: %d", got)
	}
	if got := testutil.PostStream(t, base+"/agui", testutil.AGUIInput("t1", "r1", "hello")).Text(); got != "You said: hello" {
		t.Fatalf("AG-UI reply %q", got)
	}
	var list struct{ Chats []struct{ ID, Title string } }
	renamed := func() bool { // the two chats may share a millisecond: their order is not the point
		return slices.ContainsFunc(list.Chats, func(c struct{ ID, Title string }) bool { return c.ID == "c1" && c.Title == "Greetings" })
	}
	if err := json.NewDecoder(do("GET", "/chats", "").Body).Decode(&list); err != nil || len(list.Chats) != 2 || !renamed() {
		t.Fatalf("chats: %+v %v", list, err)
	}

	// A reply that runs: resumed, then stopped.
	running := do("POST", "/chat", testutil.UserMessage("c2", "m1", "think: wait 30000 ms"))
	first := bufio.NewReader(running.Body)
	if _, err := first.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	if got := do("GET", "/chat/c2/stream", "").StatusCode; got != http.StatusOK {
		t.Fatalf("resume: %d", got)
	}
	if got := status(do("POST", "/chat/c2/stop", "")); got != http.StatusAccepted {
		t.Fatalf("stop: %d", got)
	}
	if rest := testutil.ParseChunks(t, first); rest[len(rest)-1]["type"] != "finish" {
		t.Fatalf("the stopped reply ended with %v", rest[len(rest)-1])
	}
	// AG-UI: a reply that runs is found by connect and stopped by its own route.
	aguiRun := do("POST", "/agui", testutil.AGUIInput("t2", "r1", "think: wait 30000 ms"))
	if _, err := bufio.NewReader(aguiRun.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	if got := do("POST", "/agui/connect", `{"threadId":"t2","runId":"c","messages":[]}`).StatusCode; got != http.StatusOK {
		t.Fatalf("connect: %d", got)
	}
	if got := status(do("POST", "/agui/t2/stop", "")); got != http.StatusAccepted {
		t.Fatalf("AG-UI stop: %d", got)
	}
	testutil.Eventually(t, 5*time.Second, "the AG-UI run to end", func() bool { return status(do("DELETE", "/chat/t2", "")) == http.StatusNoContent })
	if got := status(do("DELETE", "/chat/c1", "")); got != http.StatusNoContent {
		t.Fatalf("delete: %d", got)
	}
	if got := status(do("GET", "/chat/c1", "")); got != http.StatusNotFound {
		t.Fatalf("reload after delete: %d", got)
	}
}

// Routes under the root prefix, and a prefix that is not a path.
func TestRoutesPrefix(t *testing.T) {
	api, _ := newAPI(t, "")
	if got := api.Routes("")[0].Pattern(); got != "POST /chat" {
		t.Fatalf("root: %s", got)
	}
	for _, bad := range []string{"api", "/api/{x}", "/a b"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("prefix %q: no panic", bad)
				}
			}()
			api.Routes(bad)
		}()
	}
}

// Shutdown cuts a reply still running when its context ends: the stream
// ends with the protocol's terminal frames, and the API takes no more
// requests.
func TestShutdown(t *testing.T) {
	api, srv := newAPI(t, "/api")
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/chat", strings.NewReader(testutil.UserMessage("c1", "m1", "think: wait 30000 ms")))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := api.Shutdown(ctx); err == nil {
		t.Fatal("Shutdown with a reply running past its context: no error")
	}
	rest := testutil.ParseChunks(t, br)
	if !strings.Contains(testutil.Chunks(rest).Find("error")["errorText"].(string), "restarting") {
		t.Fatalf("the cut reply: %v", rest)
	}
	after, err := http.Post(srv.URL+"/api/chat", "application/json", strings.NewReader(testutil.UserMessage("c2", "m1", "hi")))
	if err != nil {
		t.Fatal(err)
	}
	after.Body.Close()
	if after.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("after Shutdown: %d", after.StatusCode)
	}
}

// README.md's mounting snippet is Example's.
func TestREADMESnippet(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(src), "\t// README: begin\n")
	snippet, _, _ := strings.Cut(rest, "\t// README: end\n")
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(snippet, "\n"), "\n") {
		lines = append(lines, strings.TrimPrefix(l, "\t"))
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := "```go\n" + strings.Join(lines, "\n") + "\n```"; !strings.Contains(string(readme), want) {
		t.Fatalf("README.md does not contain the mounting snippet of Example:\n%s", want)
	}
}

// README.md's snippet builds in a module outside the repository, set up
// by docs/deploy.md's commands for using the module before it is
// published (a replace directive, then go mod tidy).
func TestInstallBeforePublishing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module outside the repository")
	}
	out, err := exec.Command("bash", "scripts/install-check.sh").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "the README's snippet builds after docs/deploy.md's commands") {
		t.Fatalf("scripts/install-check.sh: %v\n%s", err, out)
	}
}
