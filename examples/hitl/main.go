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
	"sync/atomic"
	"time"

	"github.com/agentui/agentui"
	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/history/redisstore"
	"github.com/agentui/agentui/uiadapter"
	goredis "github.com/redis/go-redis/v9"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8083", "address to listen on")
	sandbox := flag.String("sandbox", "", "directory delete_file may delete in (default: a new temporary directory with sample files)")
	redisURL := flag.String("redis", envOr("REDIS_URL", "redis://127.0.0.1:6379/0"), "Redis for the conversations")
	prefix := flag.String("redis-prefix", "agentui-hitl:", "prefix of the Redis keys")
	secret := flag.String("secret", "change me: 32 bytes or more, the same on every replica", "key that signs approval requests")
	flag.Parse()

	dir, err := prepareSandbox(*sandbox)
	if err != nil {
		fail("-sandbox: %v", err)
	}
	opts, err := goredis.ParseURL(*redisURL)
	if err != nil {
		fail("-redis: %v", err)
	}
	opts.ContextTimeoutEnabled = true
	redisLog := &startedLog{}
	goredis.SetLogger(redisLog) // one line, not go-redis's retries, when Redis is down at start-up
	rdb := goredis.NewClient(opts)
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	err = rdb.Ping(ctx).Err()
	cancel()
	if err != nil { // found now, not as a failed reply
		fail("Redis at %s does not answer: start it, or point -redis at one", opts.Addr)
	}
	redisLog.started.Store(true)

	tools := demo.Tools()
	tools[1] = deleteTool(dir) // replace the demo's pretend delete_file
	loop, err := agent.New(demo.New(), agent.WithTools(tools...))
	if err != nil {
		log.Fatal(err)
	}
	api, err := agentui.New(loop,
		uiadapter.WithStore(redisstore.New(rdb, redisstore.WithPrefix(*prefix))),
		uiadapter.WithScope(uiadapter.SingleScope),
		uiadapter.WithSecret([]byte(*secret)),
	)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	api.Mount(mux, "/api")

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("hitl example listening on http://%s\n", ln.Addr())
	printSandbox(dir)
	log.Fatal(http.Serve(ln, mux))
}

// printSandbox says what delete_file may delete: at start-up, and after
// each deletion.
func printSandbox(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		fmt.Printf("sandbox %s: %v\n", dir, err)
		return
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	fmt.Printf("sandbox %s: %s\n", dir, strings.Join(names, ", "))
}

// startedLog passes go-redis's messages to the log once the server has
// started.
type startedLog struct{ started atomic.Bool }

func (l *startedLog) Printf(_ context.Context, format string, v ...any) {
	if l.started.Load() {
		log.Printf("redis: "+format, v...)
	}
}

// fail reports a start-up problem in one line and exits.
func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "hitl: "+format+"\n", args...)
	os.Exit(1)
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
			printSandbox(dir)
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
