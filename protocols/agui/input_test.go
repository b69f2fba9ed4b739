package agui_test

import (
	"context"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/internal/wire"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/protocols/agui"
	"github.com/agentui/agentui/uiadapter"
)

// capture is an agent that records what it was given and says "ok".
type capture struct{ in chan *agent.Input }

func (c capture) Run(_ context.Context, in *agent.Input) iter.Seq2[agent.Event, error] {
	c.in <- in
	return func(yield func(agent.Event, error) bool) {
		for _, ev := range []agent.Event{&agent.RunStarted{MessageID: "m"}, &agent.RunFinished{StopReason: cmf.StopEnd}} {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// sent posts a recorded sample through the handler and returns what the
// agent received.
func sent(t *testing.T, sample string, header http.Header, opts ...uiadapter.Option) (*agent.Input, *http.Response) {
	t.Helper()
	c := capture{in: make(chan *agent.Input, 1)}
	srv := httptest.NewServer(testutil.Must(agui.Handler(c, append([]uiadapter.Option{uiadapter.WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)))
	t.Cleanup(srv.Close)
	body, err := os.ReadFile("testdata/samples/" + sample + ".json")
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
	return <-c.in, resp
}

func mediaOf(in *agent.Input) []string {
	var out []string
	for _, m := range slices.Concat(in.History, in.Messages) {
		for _, p := range m.Content {
			if src, ok := cmf.Media(p); ok {
				out = append(out, string(p.ContentType())+" "+src.Data)
			}
		}
	}
	return out
}

// File sources (provider handles) are dropped unless allowed; URL and
// inline sources pass.
func TestMediaSourcesReachTheAgent(t *testing.T) {
	in, _ := sent(t, "multimodal", nil)
	if got := strings.Join(mediaOf(in), ", "); got != "image https://example.com/cat.png, document JVBERi0xLjQKJcOkw7zDtsOfCg==" {
		t.Fatalf("default: %s", got)
	}
	in, _ = sent(t, "multimodal", nil, uiadapter.WithAllowedURLSchemes("https", wire.SchemeProviderFile))
	if got := mediaOf(in); len(got) != 3 || got[2] != "audio provider-file://openai/file-abc123" {
		t.Fatalf("with provider files allowed: %v", got)
	}
}

// Client system and developer messages and the reasoning's encrypted
// value never reach the agent.
func TestClientHistoryIsSanitized(t *testing.T) {
	in, _ := sent(t, "full-history", nil)
	var thinking *cmf.Thinking
	for _, m := range slices.Concat(in.History, in.Messages) {
		if m.Role == cmf.RoleSystem || m.Role == cmf.RoleDeveloper {
			t.Errorf("a client %s message reached the agent: %s", m.Role, m.Text())
		}
		for _, p := range m.Content {
			if th, ok := p.(cmf.Thinking); ok {
				thinking = &th
			}
		}
	}
	if thinking == nil || thinking.Text != "The user wants weather; call get_weather." || thinking.Opaque != nil {
		t.Fatalf("reasoning reached the agent as %+v", thinking)
	}
}

// The response is SSE whatever the Accept header asks for: agentui does
// not speak the protobuf framing, and HttpAgent picks its parser by the
// response's Content-Type.
func TestSSEWhateverTheAcceptHeader(t *testing.T) {
	for _, accept := range []string{"application/vnd.ag-ui.event+proto", "application/json", "*/*", ""} {
		_, resp := sent(t, "simple-chat", http.Header{"Accept": {accept}})
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Errorf("Accept %q: Content-Type %q", accept, ct)
		}
	}
}
