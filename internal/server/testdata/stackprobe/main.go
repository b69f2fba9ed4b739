// Command stackprobe serves one streaming chat request in each protocol
// with goroutine stacks capped at 8 KiB, the size they start at here: the
// runtime aborts ("goroutine stack exceeds") if serving a request needs
// more. A stack that grows to 16 KiB stays that size for as long as the
// stream is open, which is a third of an idle stream's memory (S3 in
// docs/benchmarks.md). TestStreamFitsStartingStack runs it, built without the race
// detector, whose frames are larger.
package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/debug"
	"strings"

	"github.com/agentui/agentui/edge"
	"github.com/agentui/agentui/internal/server"
)

func main() {
	// As the binary serves on a loopback address: the Host check in front.
	s, err := server.New(server.Config{Model: "demo", History: "none", AllowedHosts: edge.LoopbackHosts})
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	reqs := []struct{ path, body string }{
		{"/api/chat", `{"id":"c1","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"wait 1 ms"}]}],"trigger":"submit-message"}`},
		{"/api/agui", `{"threadId":"t1","runId":"r1","messages":[{"id":"u1","role":"user","content":"wait 1 ms"}],"tools":[],"context":[],"state":{},"forwardedProps":{}}`},
	}
	post := func(path, body string) {
		// A connection of its own: a reused one's goroutine has the stack
		// an earlier request left it.
		c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := c.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			fmt.Println(err)
			os.Exit(2)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "done") {
			fmt.Printf("%s: %d %s\n", path, resp.StatusCode, b)
			os.Exit(2)
		}
	}
	// Warm up first: caches built once (encoding/json's type encoders)
	// run deeper than any later request.
	for _, r := range reqs {
		post(r.path, r.body)
	}
	debug.SetMaxStack(8 << 10)
	for _, r := range reqs {
		post(r.path, r.body)
	}
	fmt.Println("ok")
}
