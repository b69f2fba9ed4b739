// Command hitl shows human-in-the-loop approval of a tool with a real side
// effect: delete_file deletes files, but only inside a sandbox directory
// and only after the user approves. Both protocols; history in Redis.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/history/redisstore"
	"github.com/agentui/agentui/protocols/agui"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
	goredis "github.com/redis/go-redis/v9"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8083", "address to listen on")
	sandbox := flag.String("sandbox", "", "directory delete_file may delete in (default: a new temporary directory with sample files)")
	redisURL := flag.String("redis", envOr("REDIS_URL", "redis://127.0.0.1:6379/0"), "Redis for the conversations")
	prefix := flag.String("redis-prefix", "agentui-hitl:", "prefix of the Redis keys")
	secret := flag.String("secret", "change me: the same on every replica", "key that signs approval requests")
	flag.Parse()

	dir, err := prepareSandbox(*sandbox)
	if err != nil {
		log.Fatal(err)
	}
	opts, err := goredis.ParseURL(*redisURL)
	if err != nil {
		log.Fatal(err)
	}
	opts.ContextTimeoutEnabled = true
	rdb := goredis.NewClient(opts)
	defer rdb.Close()

	tools := demo.Tools()
	tools[1] = deleteTool(dir) // replace the demo's pretend delete_file
	loop, err := agent.New(demo.New(), agent.WithTools(tools...))
	if err != nil {
		log.Fatal(err)
	}
	hopts := []uiadapter.Option{
		uiadapter.WithStore(redisstore.New(rdb, redisstore.WithPrefix(*prefix))),
		uiadapter.WithScope(uiadapter.SingleScope),
		uiadapter.WithSecret([]byte(*secret)),
	}
	chat, err := vercelai.Handler(loop, hopts...)
	if err != nil {
		log.Fatal(err)
	}
	aguiChat, err := agui.Handler(loop, hopts...)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /api/chat", chat)
	mux.Handle("GET /api/chat/{id}", vercelai.ConversationHandler(chat, nil))
	mux.Handle("POST /api/agui", aguiChat)

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("hitl example listening on http://%s (sandbox %s)\n", ln.Addr(), dir)
	log.Fatal(http.Serve(ln, mux))
}

// DeleteInput is delete_file's input.
type DeleteInput struct {
	Path string `json:"path" jsonschema:"the file to delete, relative to the sandbox"`
}

// deleteTool deletes a file in dir after the user approves. Paths are
// resolved inside dir: "../x" or "/etc/passwd" cannot leave it.
func deleteTool(dir string) agent.Tool {
	t := agent.FuncTool("delete_file", "Delete a file in the sandbox. Needs the user's approval.",
		func(_ context.Context, in DeleteInput) (map[string]string, error) {
			target, err := inside(dir, in.Path)
			if err != nil {
				return nil, err
			}
			if err := os.Remove(target); err != nil {
				if errors.Is(err, os.ErrNotExist) {
					return nil, fmt.Errorf("no such file: %s", in.Path)
				}
				return nil, errors.New("could not delete the file")
			}
			return map[string]string{"deleted": in.Path}, nil
		})
	t.NeedsApproval = agent.Always
	return t
}

// inside resolves p within dir.
func inside(dir, p string) (string, error) {
	target := filepath.Join(dir, filepath.Clean("/"+p))
	if target == dir || !strings.HasPrefix(target, dir+string(filepath.Separator)) {
		return "", errors.New("the path leaves the sandbox")
	}
	return target, nil
}

func prepareSandbox(dir string) (string, error) {
	if dir != "" {
		return filepath.Abs(dir)
	}
	dir, err := os.MkdirTemp("", "agentui-hitl-")
	if err != nil {
		return "", err
	}
	for _, name := range []string{"notes.txt", "draft.md", "old-report.pdf"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("sample\n"), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
