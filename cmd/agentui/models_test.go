package main

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/agentui/agentui/internal/testkit/testutil"
)

// -models (or AGENTUI_MODELS) offers several models, the first the
// default, and GET /api/models lists them; a model whose key is missing,
// or -model given with -models, stops the binary with one line.
func TestModelsFlag(t *testing.T) {
	t.Parallel()
	keys := []string{"ANTHROPIC_API_KEY=", "OPENAI_API_KEY=", "GEMINI_API_KEY=", "GOOGLE_API_KEY="}
	p := testutil.RunProgram(t, ".", append(keys, "AGENTUI_MODELS=demo, openai-responses:gpt-5", "OPENAI_API_KEY=k"), "-addr", "127.0.0.1:0", "-secret", "a models test secret of 32 bytes or more")
	if !strings.HasSuffix(p.Line, "(models demo (default), openai-responses:gpt-5, history memory)") {
		t.Errorf("start-up line %q", p.Line)
	}
	resp, err := http.Get(p.URL + "/api/models")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `{"models":[{"id":"demo","default":true},{"id":"openai-responses:gpt-5"}]}` + "\n"; string(body) != want {
		t.Errorf("GET /api/models: %s, want %s", body, want)
	}

	bin := testutil.BuildProgram(t, ".")
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"-model", "anthropic:claude-sonnet-4-6"}, "agentui: -model anthropic:claude-sonnet-4-6 needs ANTHROPIC_API_KEY\n"},
		{nil, []string{"-models", "demo,gemini:gemini-3-flash-preview"}, "agentui: -models gemini:gemini-3-flash-preview needs GEMINI_API_KEY or GOOGLE_API_KEY\n"},
		{[]string{"AGENTUI_MODEL=demo"}, []string{"-models", "demo"}, "agentui: -model and -models: give one (the first of -models is the default)\n"},
		{nil, []string{"-model", "demo", "-anthropic-thinking", "much"}, `agentui: -anthropic-thinking "much": want adaptive, none, or a budget of at least 1024 tokens` + "\n"},
	} {
		cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, c.args...)...)
		cmd.Env = append(append(os.Environ(), keys...), c.env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		var exit *exec.ExitError
		if err := cmd.Run(); !errors.As(err, &exit) || exit.ExitCode() != 1 || stderr.String() != c.want {
			t.Errorf("%v %v: %v, stderr %q, want %q", c.env, c.args, err, stderr.String(), c.want)
		}
	}
}
