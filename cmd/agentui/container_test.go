package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentui/agentui/internal/testkit/testutil"
)

// containerfile reads deploy/Containerfile's ENV settings (KEY=VALUE) and
// its ENTRYPOINT's arguments.
func containerfile(t *testing.T) (env, args []string) {
	t.Helper()
	b, err := os.ReadFile("../../deploy/Containerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "ENV "); ok {
			if !strings.Contains(v, "=") || strings.ContainsAny(v, " \t\"'") {
				t.Fatalf("an ENV line this test cannot read (want ENV KEY=VALUE): %q", line)
			}
			env = append(env, v)
		}
		if v, ok := strings.CutPrefix(line, "ENTRYPOINT "); ok {
			if err := json.Unmarshal([]byte(v), &args); err != nil || len(args) == 0 || args[0] != "/agentui" {
				t.Fatalf("ENTRYPOINT %s: %v", v, err)
			}
			args = args[1:]
		}
	}
	return env, args
}

// The image answers only to loopback names unless told its public name: a
// workstation's `docker run -p 127.0.0.1:8080:8080` is not open to DNS
// rebinding though the binary listens on every address in the container.
// The test runs the binary with the Containerfile's ENV and ENTRYPOINT
// (on port 0 for :8080), as docker run would, then with a deployment's
// AGENTUI_ALLOWED_HOSTS.
func TestContainerDefaultsCheckHost(t *testing.T) {
	t.Parallel()
	env, args := containerfile(t)
	i := slices.Index(args, "-addr")
	if i < 0 || i+1 >= len(args) || args[i+1] != ":8080" {
		t.Fatalf("ENTRYPOINT arguments %q: want -addr :8080", args)
	}
	args = slices.Clone(args)
	args[i+1] = ":0"
	post := func(port, host string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1"+port+"/api/chat", strings.NewReader(testutil.UserMessage("c1", "m1", "hello")))
		req.Host = host + port
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	bin := testutil.BuildProgram(t, ".")
	for _, c := range []struct {
		name            string
		env             []string
		allowed, denied []string
	}{
		{"as built", env, []string{"localhost", "127.0.0.1", "[::1]"}, []string{"evil.example", "chat.example.com"}},
		{"a deployment", append(slices.Clone(env), "AGENTUI_ALLOWED_HOSTS=chat.example.com"), []string{"chat.example.com", "localhost"}, []string{"evil.example"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := testutil.RunBuilt(t, bin, c.env, args...)
			port := p.URL[strings.LastIndexByte(p.URL, ':'):]
			for _, host := range c.allowed {
				if status, body := post(port, host); status != http.StatusOK || !strings.Contains(body, `"delta":"hello"`) {
					t.Errorf("Host %s: %d %s", host, status, body)
				}
			}
			for _, host := range c.denied {
				if status, body := post(port, host); status != http.StatusForbidden || !strings.Contains(body, `this server does not answer to the host \"`+host+`\"`) {
					t.Errorf("Host %s: %d %s", host, status, body)
				}
			}
		})
	}
}
