// Command stackprobe serves streaming chat requests in each protocol with
// goroutine stacks capped at 8 KiB, the size they start at here: the
// runtime aborts ("goroutine stack exceeds") if serving a request needs
// more on any goroutine. A stack that grows to 16 KiB stays that size for
// as long as the stream is open, which is a third of an idle stream's
// memory (S3 in docs/benchmarks.md). It serves without history and with
// the binary's defaults (memory history), a visitor with its cookie and
// one without (served without history). TestStreamFitsStartingStack runs
// it, built without the race detector, whose frames are larger.
package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"runtime/debug"
	"strings"

	"github.com/agentui/agentui/edge"
	"github.com/agentui/agentui/internal/server"
)

func main() {
	var posts []func()
	for _, history := range []string{"none", "memory"} {
		// As the binary serves on a loopback address: the Host check in front.
		s, err := server.New(server.Config{Model: "demo", History: history, AllowedHosts: edge.LoopbackHosts})
		if err != nil {
			fail("%v", err)
		}
		srv := httptest.NewServer(s.Handler())
		defer srv.Close()
		jar, _ := cookiejar.New(nil)
		visitor := &http.Client{Jar: jar}
		if history != "none" {
			resp, err := visitor.Get(srv.URL + "/") // the page issues the visitor's cookie
			if err != nil || len(resp.Cookies()) == 0 {
				fail("no cookie from the page: %v", err)
			}
			resp.Body.Close()
		}
		for i, req := range []struct{ path, body string }{
			{"/api/chat", `{"id":"c1","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"wait 1 ms"}]}],"trigger":"submit-message"}`},
			{"/api/agui", `{"threadId":"t1","runId":"r1","messages":[{"id":"u1","role":"user","content":"wait 1 ms"}],"tools":[],"context":[],"state":{},"forwardedProps":{}}`},
		} {
			for _, withCookie := range []bool{true, false} {
				if history == "none" && !withCookie {
					continue
				}
				n := 0
				posts = append(posts, func() {
					n++
					// A connection of its own: a reused one's goroutine has
					// the stack an earlier request left it. A new chat each
					// time: the same one would be a retry.
					c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
					if withCookie {
						c.Jar = jar
					}
					body := strings.NewReplacer(`"c1"`, fmt.Sprintf(`"c%d-%d"`, i, n), `"t1"`, fmt.Sprintf(`"t%d-%d"`, i, n), `"r1"`, fmt.Sprintf(`"r%d-%d"`, i, n)).Replace(req.body)
					resp, err := c.Post(srv.URL+req.path, "application/json", strings.NewReader(body))
					if err != nil {
						fail("%v", err)
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "done") {
						fail("%s (history %s, cookie %v): %d %s", req.path, history, withCookie, resp.StatusCode, b)
					}
				})
			}
		}
	}
	// Warm up first: caches built once (encoding/json's type encoders)
	// run deeper than any later request.
	for _, post := range posts {
		post()
	}
	debug.SetMaxStack(8 << 10)
	for _, post := range posts {
		post()
	}
	fmt.Println("ok")
}

func fail(format string, args ...any) {
	fmt.Printf(format+"\n", args...)
	os.Exit(2)
}
