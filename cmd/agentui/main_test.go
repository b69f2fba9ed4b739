package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/internal/testkit/testutil"
)

// The README's quick start, as written.
func TestQuickStart(t *testing.T) {
	p := testutil.RunProgram(t, ".", nil, "-addr", "127.0.0.1:0")
	url, stderr := p.URL, p.Stderr
	if !strings.HasPrefix(p.Line, "agentui listening on http://127.0.0.1:") || !strings.HasSuffix(p.Line, " (model demo, history memory)") {
		t.Fatalf("startup line %q", p.Line)
	}
	// Without -addr it listens where the README says.
	t.Setenv("AGENTUI_ADDR", "")
	if fs, _, err := newFlags(); err != nil || fs.Lookup("addr").DefValue != "127.0.0.1:8080" {
		t.Fatalf("default -addr: %v", err)
	}
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
	t.Parallel()
	p := testutil.RunProgram(t, ".", []string{"AGENTUI_ADDR=127.0.0.1:0", "AGENTUI_SECRET=a test secret of at least 32 bytes", "AGENTUI_LOG_LEVEL=debug", "AGENTUI_DEMO_DELAY=0s", "AGENTUI_MODEL=demo", "AGENTUI_HISTORY=none"})
	url, stderr := p.URL, p.Stderr
	resp, err := http.Post(url+"/api/chat", "application/json", strings.NewReader(`{"id":"c","messages":[{"id":"m","role":"user","parts":[{"type":"text","text":"hi"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// The warning would come before the listening line RunProgram waited for.
	if strings.Contains(stderr.String(), "no -secret") {
		t.Fatal("AGENTUI_SECRET was ignored")
	}
	bin := testutil.BuildProgram(t, ".")
	out, err := exec.Command(bin, "-model", "gpt-5").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `unknown -model "gpt-5"`) {
		t.Fatalf("a bad -model: %v %s", err, out)
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-log-level", "loud")
	cmd.Env = append(os.Environ(), "AGENTUI_LOG_LEVEL=debug")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "-log-level") {
		t.Fatalf("the flag did not win over the environment: %v %s", err, out)
	}
}

// Every flag and its environment twin are documented.
func TestConfigurationDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	fs, _, err := newFlags()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		n++
		env := "AGENTUI_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if !strings.Contains(string(doc), "| `-"+f.Name+"` | `"+env+"` |") {
			t.Errorf("docs/configuration.md does not document -%s / %s", f.Name, env)
		}
		if !strings.Contains(f.Usage, env) {
			t.Errorf("-%s's usage does not name %s", f.Name, env)
		}
	})
	if n != 35 {
		t.Fatalf("%d flags", n)
	}
	for _, v := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_CUSTOM_HEADERS", "OPENAI_ADMIN_KEY", "OPENAI_WEBHOOK_SECRET",
		"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL"} {
		if !strings.Contains(string(doc), v) {
			t.Errorf("%s undocumented", v)
		}
	}
	// -h is not an error.
	if out, err := exec.Command(testutil.BuildProgram(t, "."), "-h").CombinedOutput(); err != nil || !strings.Contains(string(out), "-history-ttl") {
		t.Fatalf("-h: %v %s", err, out)
	}
}

// Bad configuration stops the real binary at start-up, with exit status
// 1 (2 for a bad command line) and one line that names what to fix.
func TestStartupFailures(t *testing.T) {
	t.Parallel()
	bin := testutil.BuildProgram(t, ".")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String() // nothing answers here once closed
	ln.Close()
	for _, c := range []struct {
		name   string
		env    []string
		args   []string
		status int
		want   string
	}{
		{"missing key", []string{"OPENAI_API_KEY="}, []string{"-model", "openai:gpt-4o-mini"}, 1, "agentui: -model openai:gpt-4o-mini needs OPENAI_API_KEY"},
		{"redis down", nil, []string{"-history", "redis://" + closed}, 1, "agentui: -history: Redis at " + closed + " does not answer (connection refused)"},
		{"bad env, no flag", []string{"AGENTUI_DEMO_DELAY=soon"}, nil, 1, `agentui: AGENTUI_DEMO_DELAY: "soon" is not a duration: write a number and a unit, h, m, s or ms`},
		{"bad TTL twin", []string{"AGENTUI_HISTORY_TTL=1day"}, nil, 1, `agentui: AGENTUI_HISTORY_TTL: "1day" is not a duration: write a number and a unit, h, m, s or ms (24h, 90m, 30s; 0 for none)`},
		{"port alone", nil, []string{"-addr", "8080"}, 1, "agentui: -addr 8080 is a port alone: use :8080 (every interface) or 127.0.0.1:8080 (this machine only)"},
		{"no port", nil, []string{"-addr", "localhost"}, 1, `agentui: -addr "localhost": want host:port, like 127.0.0.1:8080 or :8080`},
		{"short secret", nil, []string{"-secret", "change me"}, 1, "agentui: -secret is 9 bytes: use at least 32 random bytes"},
		{"bad scope limit", nil, []string{"-scope-limit", "lots"}, 1, `agentui: -scope-limit: rate "lots": want N/unit`},
		{"bad allowed host", nil, []string{"-allowed-hosts", "https://chat.example.com"}, 1, `agentui: -allowed-hosts: edge: allowed host "https://chat.example.com"`},
		// The flag wins, so the bad twin is never read: the next problem
		// (the unknown model) is the one reported.
		{"bad env, flag wins", []string{"AGENTUI_DEMO_DELAY=soon"}, []string{"-demo-delay", "0s", "-model", "gpt-5"}, 1, `agentui: unknown -model "gpt-5"`},
		{"extra argument", nil, []string{"serve"}, 1, `agentui: unexpected argument "serve"`},
		{"bad OTLP protocol", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + closed, "OTEL_EXPORTER_OTLP_PROTOCOL=http/json"}, nil, 1, `agentui: OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" is not a protocol`},
		{"bad rate", nil, []string{"-rate-limit", "20 per minute"}, 1, `agentui: -rate-limit: rate "20 per minute": want N/unit`},
		{"bad token unit", []string{"AGENTUI_TOKEN_LIMIT=5/fortnight"}, nil, 1, `agentui: -token-limit: rate "5/fortnight": the unit is`},
		{"bad size", []string{"AGENTUI_GC_MIN_HEAP=64M"}, nil, 1, `agentui: -gc-min-heap: size "64M": want a number of bytes, KiB, MiB or GiB`},
		{"runs per user", nil, []string{"-runs-per-user", "0"}, 1, `agentui: -runs-per-user 0: want 1 or more`},
		{"runs total", []string{"AGENTUI_RUNS_TOTAL=many"}, nil, 1, `agentui: AGENTUI_RUNS_TOTAL: strconv.Atoi: parsing "many"`},
		{"run output", nil, []string{"-max-run-output", "4MB"}, 1, `agentui: -max-run-output "4MB": want a size, e.g. 4MiB`},
		{"run time", nil, []string{"-max-run-time", "0s"}, 1, `agentui: -max-run-time 0s: want a positive duration`},
		{"negative bound", nil, []string{"-max-resumes", "-1"}, 1, `agentui: -max-resumes: -1: want 0 (no bound) or more`},
		{"bad number", []string{"AGENTUI_MAX_RESUMES=lots"}, nil, 1, `agentui: AGENTUI_MAX_RESUMES: strconv.Atoi: parsing "lots"`},
		{"unknown flag", nil, []string{"-bogus"}, 2, "flag provided but not defined: -bogus"},
		{"duration without a unit", nil, []string{"-history-ttl", "1day"}, 2, `invalid value "1day" for flag -history-ttl: "1day" is not a duration: write a number and a unit, h, m, s or ms`},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, c.args...)...)
			cmd.Env = append(os.Environ(), c.env...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != c.status {
				t.Fatalf("exit %v, want status %d; stderr:\n%s", err, c.status, stderr.String())
			}
			out := stderr.String()
			if c.status == 2 { // the usage follows the error, which comes once
				if strings.Count(out, c.want) != 1 {
					t.Fatalf("stderr:\n%s", out)
				}
				return
			}
			if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], c.want) {
				t.Fatalf("stderr, want one line starting %q:\n%s", c.want, out)
			}
			if stdout.Len() != 0 {
				t.Fatalf("stdout: %s", stdout.String())
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]uint64{"0": 0, "4096": 4096, "12B": 12, "64KiB": 64 << 10, "64MiB": 64 << 20, "2GiB": 2 << 30} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "64M", "64mib", "-1MiB", "1.5GiB", "99999999999GiB"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q): no error", in)
		}
	}
}

// On its default loopback address the binary answers only to loopback
// names: a page on a name rebound to 127.0.0.1 (Host: evil.example:PORT,
// the same Origin) is refused before anything runs. -allowed-hosts adds
// names.
func TestHostCheckAgainstDNSRebinding(t *testing.T) {
	rebound := func(url string) (int, string) {
		port := url[strings.LastIndexByte(url, ':'):]
		req, _ := http.NewRequest(http.MethodPost, url+"/api/chat", strings.NewReader(testutil.UserMessage("c1", "m1", "hello")))
		req.Host = "evil.example" + port
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", "http://evil.example"+port)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	p := testutil.RunProgram(t, ".", nil, "-addr", "127.0.0.1:0")
	if status, body := rebound(p.URL); status != http.StatusForbidden || !strings.HasPrefix(body, `{"error":"this server does not answer to the host \"evil.example\"`) {
		t.Fatalf("a rebound name: %d %s", status, body)
	}
	localhost := strings.Replace(p.URL, "127.0.0.1", "localhost", 1)
	if resp, err := http.Get(localhost + "/"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("localhost: %v", err)
	}
	q := testutil.RunProgram(t, ".", nil, "-addr", "127.0.0.1:0", "-allowed-hosts", "evil.example")
	if status, body := rebound(q.URL); status != http.StatusOK || !strings.Contains(body, `"delta":"hello"`) {
		t.Fatalf("an allowed name: %d %s", status, body)
	}
}

// Listening beyond loopback, the binary says that it has no login and,
// without -allowed-hosts, that it answers any Host.
func TestWarnsBeyondLoopback(t *testing.T) {
	p := testutil.RunProgram(t, ".", nil, "-addr", "0.0.0.0:0")
	// Its log and its listening line go to two pipes: wait for the log.
	testutil.Eventually(t, 10*time.Second, "the warnings", func() bool {
		got := p.Stderr.String()
		return strings.Contains(got, "listening beyond this machine with anonymous scopes: the binary has no login") &&
			strings.Contains(got, "no -allowed-hosts: any Host header is answered")
	})
	q := testutil.RunProgram(t, ".", nil, "-addr", "127.0.0.1:0")
	if strings.Contains(q.Stderr.String(), "beyond this machine") {
		t.Fatalf("a loopback address warned:\n%s", q.Stderr)
	}
}

// Issuing anonymous scopes is bounded by default: one address that asks
// for token after token (each a fresh budget under the per-scope rate
// limits) gets 429 past -scope-limit's default of 60 an hour.
func TestScopeBoundByDefault(t *testing.T) {
	testutil.Eventually(t, 2*time.Minute, "a fresh hour window", func() bool {
		return time.Until(time.Now().Truncate(time.Hour).Add(time.Hour)) > time.Minute
	})
	p := testutil.RunProgram(t, ".", nil, "-addr", "127.0.0.1:0")
	statuses := map[int]int{}
	for range 61 {
		resp, err := http.Post(p.URL+"/api/token", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		statuses[resp.StatusCode]++
	}
	if statuses[http.StatusOK] != 60 || statuses[http.StatusTooManyRequests] != 1 {
		t.Fatalf("61 tokens from one address: %v", statuses)
	}
}
