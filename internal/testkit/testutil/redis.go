package testutil

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentui/agentui/internal/ids"
	goredis "github.com/redis/go-redis/v9"
)

// RedisURL finds a Redis for tests: $REDIS_URL, else 127.0.0.1:6379 if it
// answers, else a redis-server the test starts on a free port (when the
// binary exists). Tests must use their own key prefix (KeyPrefix) and
// never flush the database.
func RedisURL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv("REDIS_URL"); u != "" {
		return u
	}
	if ping("127.0.0.1:6379") {
		return "redis://127.0.0.1:6379/0"
	}
	return "redis://" + StartRedis(t).Addr + "/0"
}

// Redis returns a client for RedisURL.
func Redis(t testing.TB) *goredis.Client {
	t.Helper()
	opts, err := goredis.ParseURL(RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	opts.ContextTimeoutEnabled = true
	c := goredis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// KeyPrefix is a key prefix no other test run uses.
func KeyPrefix() string { return "agentui-test:" + ids.New() + ":" }

// DeleteKeysOnCleanup deletes the keys under prefix when the test ends, so
// a shared Redis keeps no test data.
func DeleteKeysOnCleanup(t testing.TB, rdb *goredis.Client, prefix string) {
	t.Cleanup(func() {
		ctx := context.Background()
		iter := rdb.Scan(ctx, 0, prefix+"*", 500).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
	})
}

func ping(addr string) bool {
	c := goredis.NewClient(&goredis.Options{Addr: addr, DialTimeout: 300 * time.Millisecond})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return c.Ping(ctx).Err() == nil
}

// RedisServer is a redis-server a test started: no persistence, loopback
// only, killed when the test ends.
type RedisServer struct {
	Addr   string
	t      testing.TB
	dir    string
	bin    string
	args   []string
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has exited
}

// StartRedis starts a redis-server on a free port. extra arguments are
// added to its command line. A port another process took between being
// found free and being bound (tests run side by side) is given up for
// another.
func StartRedis(t testing.TB, extra ...string) *RedisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		Missing(t, "redis-server not found: install Redis (Debian: apt-get install redis-server)")
	}
	dir := t.TempDir()
	for range 5 {
		port := freePort(t)
		s := &RedisServer{Addr: "127.0.0.1:" + strconv.Itoa(port), t: t, dir: dir, bin: bin,
			args: append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--save", "", "--appendonly", "no", "--dir", dir}, extra...)}
		if s.start() {
			t.Cleanup(s.Stop)
			return s
		}
	}
	t.Fatal("redis-server exited at start on five ports in a row")
	return nil
}

// Start (re)starts the server on its port and waits until it answers.
func (s *RedisServer) Start() {
	s.t.Helper()
	if !s.start() {
		s.t.Fatalf("redis-server on %s exited at start", s.Addr)
	}
}

// start starts the server and waits until it answers (true) or exits
// (false). A loaded machine may take seconds to start a process.
func (s *RedisServer) start() bool {
	s.t.Helper()
	s.cmd = exec.Command(s.bin, s.args...)
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("starting redis-server: %v", err)
	}
	exited := make(chan struct{})
	s.exited = exited
	go func(cmd *exec.Cmd) {
		_ = cmd.Wait()
		close(exited)
	}(s.cmd)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if ping(s.Addr) {
			return true
		}
		select {
		case <-exited:
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	s.t.Fatalf("redis-server on %s did not answer within 30 s", s.Addr)
	return false
}

// Freeze stops the server's process (SIGSTOP): it keeps its port and
// accepts connections but answers nothing, as a Redis stuck in a long
// command, a swap storm or a paused VM does.
func (s *RedisServer) Freeze() { s.signal(syscall.SIGSTOP) }

// Thaw resumes a frozen server (SIGCONT); it then runs what was sent to it
// meanwhile.
func (s *RedisServer) Thaw() { s.signal(syscall.SIGCONT) }

func (s *RedisServer) signal(sig syscall.Signal) {
	s.t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatalf("redis-server: %v: %v", sig, err)
	}
}

// Stop kills the server and waits for it to exit.
func (s *RedisServer) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.exited:
	default:
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// RedisCluster starts a Redis Cluster of n masters on loopback ports and
// returns a client for it.
func RedisCluster(t testing.TB, n int) *goredis.ClusterClient {
	t.Helper()
	ctx := context.Background()
	var nodes []*RedisServer
	for i := range n {
		nodes = append(nodes, StartRedis(t, "--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(t.TempDir(), fmt.Sprintf("nodes-%d.conf", i)), "--cluster-node-timeout", "2000"))
	}
	const slots = 16384
	for i, node := range nodes {
		c := goredis.NewClient(&goredis.Options{Addr: node.Addr})
		lo, hi := i*slots/n, (i+1)*slots/n-1
		if err := c.ClusterAddSlotsRange(ctx, lo, hi).Err(); err != nil {
			t.Fatalf("assigning slots: %v", err)
		}
		if i > 0 {
			host, port, _ := net.SplitHostPort(nodes[0].Addr)
			if err := c.ClusterMeet(ctx, host, port).Err(); err != nil {
				t.Fatalf("joining the cluster: %v", err)
			}
		}
		_ = c.Close()
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, node := range nodes {
		c := goredis.NewClient(&goredis.Options{Addr: node.Addr})
		for {
			info, _ := c.ClusterInfo(ctx).Result()
			if strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(n)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the cluster did not form: %s", info)
			}
			time.Sleep(50 * time.Millisecond)
		}
		_ = c.Close()
	}
	addrs := make([]string, n)
	for i, node := range nodes {
		addrs[i] = node.Addr
	}
	cc := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}
