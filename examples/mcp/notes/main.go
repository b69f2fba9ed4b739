// Command notes is a small MCP server, written with the official Go SDK,
// for the MCP example: agentui's binary starts it over stdio (-mcp
// servers.json) and offers its tools to the model. -http serves it over
// streamable HTTP instead.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	addr := flag.String("http", "", "serve streamable HTTP on this address instead of stdio")
	flag.Parse()
	s := newServer()
	if *addr != "" {
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
		log.Fatal(http.ListenAndServe(*addr, h))
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}

type addIn struct {
	Text string `json:"text" jsonschema:"the note"`
}

type listOut struct {
	Notes []string `json:"notes"`
}

type tidyIn struct {
	Steps int `json:"steps" jsonschema:"how many passes to make (1 to 10)"`
}

// newServer is a notes server: add (changes the notes, so agentui asks
// for approval), list (read-only) and tidy (read-only, reports progress).
func newServer() *mcp.Server {
	var mu sync.Mutex
	var notes []string
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds a note."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, any, error) {
			mu.Lock()
			defer mu.Unlock()
			notes = append(notes, in.Text)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("Noted (%d notes).", len(notes))}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "list", Description: "Lists the notes.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, listOut, error) {
			mu.Lock()
			defer mu.Unlock()
			return nil, listOut{Notes: append([]string{}, notes...)}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "tidy", Description: "Tidies the notes, reporting each pass.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, in tidyIn) (*mcp.CallToolResult, any, error) {
			if in.Steps < 1 || in.Steps > 10 {
				return nil, nil, fmt.Errorf("steps must be 1 to 10, not %d", in.Steps)
			}
			for i := 1; i <= in.Steps; i++ {
				if token := req.Params.GetProgressToken(); token != nil {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(i), Total: float64(in.Steps), Message: fmt.Sprintf("pass %d", i)})
				}
				select { // a pass takes a moment, as real work does
				case <-time.After(200 * time.Millisecond):
				case <-ctx.Done():
					return nil, nil, ctx.Err()
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("Tidied in %d passes.", in.Steps)}}}, nil, nil
		})
	return s
}
