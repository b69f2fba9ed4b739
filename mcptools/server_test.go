package mcptools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tests' MCP servers are real ones, written with the official SDK:
// served over streamable HTTP from the test, or over stdio by this test
// binary started again as a child process (TestMain).

const stdioServerEnv = "AGENTUI_MCPTOOLS_STDIO_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(stdioServerEnv) != "" {
		if err := newTestServer(nil, nil).Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// PNG is a 1×1 image.
var PNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")

type note struct {
	Text string `json:"text"`
}

// newTestServer is the tools every test server has. effects counts the
// delete tool's runs (nil: not counted). The count tool, after each
// progress notification, waits for steps (nil: waits for nothing), so a
// test can see each before the next is sent.
func newTestServer(effects *atomic.Int64, steps <-chan struct{}) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "agentui-test", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echoes its text.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, in note) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "delete", Description: "Deletes a file."},
		func(_ context.Context, _ *sdk.CallToolRequest, in struct {
			Path string `json:"path"`
		}) (*sdk.CallToolResult, any, error) {
			if effects != nil {
				effects.Add(1)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "deleted " + in.Path}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "count", Description: "Counts to n, reporting progress.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *sdk.CallToolRequest, in struct {
			N int `json:"n"`
		}) (*sdk.CallToolResult, struct {
			Counted int `json:"counted"`
		}, error) {
			for i := 1; i <= in.N; i++ {
				if token := req.Params.GetProgressToken(); token != nil {
					_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: float64(i), Total: float64(in.N), Message: fmt.Sprintf("counted %d", i)})
				}
				if steps != nil {
					select {
					case <-steps:
					case <-ctx.Done():
						return nil, struct {
							Counted int `json:"counted"`
						}{}, ctx.Err()
					}
				}
			}
			return nil, struct {
				Counted int `json:"counted"`
			}{in.N}, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "picture", Description: "Draws a picture.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a dot"}, &sdk.ImageContent{Data: PNG, MIMEType: "image/png"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "broken", Description: "Fails.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return nil, nil, fmt.Errorf("the disk is full")
		})
	sdk.AddTool(s, &sdk.Tool{Name: "hang", Description: "Never answers.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	sdk.AddTool(s, &sdk.Tool{Name: "die", Description: "Its server dies.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			os.Exit(3) // only ever called on a stdio server, a process of its own
			return nil, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "whoami", Description: "Says whose credentials it got.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			who := "nobody"
			if req.Extra != nil {
				who = req.Extra.Header.Get("Authorization")
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: who}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "key", Description: "Says the idempotency key it got.", Annotations: &sdk.ToolAnnotations{IdempotentHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			key, _ := req.Params.Meta["io.agentui/idempotency-key"].(string)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: key}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "garbage", Description: "Answers something malformed (the HTTP test server rewrites it).", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "fine"}}}, nil, nil
		})
	return s
}

// httpServer serves newTestServer over streamable HTTP. A call of the
// garbage tool is answered with a result whose content is not a list, as
// a broken server would answer it.
func httpServer(t *testing.T, effects *atomic.Int64, steps <-chan struct{}) *httptest.Server {
	t.Helper()
	s := newTestServer(effects, steps)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct{ Name string }
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" && msg.Params.Name == "garbage" {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":5}}`, msg.ID)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// stdioCommand starts this test binary as a stdio MCP server.
func stdioCommand(t *testing.T) ([]string, []string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, "-test.run=^$"}, []string{stdioServerEnv + "=1"}
}

// stepBody is a response body that sends on steps for each preliminary
// tool output it reads (a marker split between two reads counts once).
type stepBody struct {
	io.ReadCloser
	steps chan<- struct{}
	tail  []byte
}

var preliminary = []byte(`"preliminary":true`)

func (b *stepBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	seen := append(b.tail, p[:n]...)
	for range bytes.Count(seen, preliminary) {
		b.steps <- struct{}{}
	}
	if i := bytes.LastIndex(seen, preliminary); i >= 0 {
		seen = seen[i+len(preliminary):]
	}
	b.tail = append([]byte(nil), seen[max(0, len(seen)-len(preliminary)+1):]...)
	return n, err
}

// stepClient is an HTTP client whose response bodies are stepBodies.
func stepClient(steps chan<- struct{}) *http.Client {
	return &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil {
			resp.Body = &stepBody{ReadCloser: resp.Body, steps: steps}
		}
		return resp, err
	})}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
