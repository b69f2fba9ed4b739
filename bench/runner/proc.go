package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// server is a contender's server process. The runner starts every server
// itself so it knows the pid whose CPU time and memory it reads from /proc.
type server struct {
	name      string
	addr      string // host:port of the HTTP listener
	debugAddr string // host:port of agentui's -debug-addr, or ""
	cmd       *exec.Cmd
	stderr    *tailBuffer
	exited    chan struct{} // closed when the process has exited
	waitErr   error         // set before exited is closed
}

// errExited is returned by start when the process exits before it listens.
var errExited = errors.New("server exited during start-up")

// freeAddr returns a loopback address with a port nobody listens on now.
// (Another process could take it before the server does; on a benchmark
// machine that does not happen in practice, and start notices if it does.)
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startServer runs argv (in dir, with extra environment variables) and waits
// until addr accepts connections. A process that exits first is reported
// with the tail of its standard error, which is how the runner learns, for
// example, that agentui does not know a -history value yet.
func startServer(ctx context.Context, name, dir string, argv, env []string, addr string) (*server, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	s := &server{name: name, addr: addr, cmd: cmd, stderr: newTailBuffer(8 << 10), exited: make(chan struct{})}
	cmd.Stdout = io.Discard
	cmd.Stderr = s.stderr
	// Servers must not outlive the runner, even when it is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case <-s.exited:
			return nil, fmt.Errorf("%s: %w (%v): %s", name, errExited, s.waitErr, s.stderr.LastLine())
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return s, nil
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("%s: not listening on %s after 20s: %s", name, addr, s.stderr.LastLine())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pid is the server's process id.
func (s *server) pid() int { return s.cmd.Process.Pid }

// alive reports whether the process is still running.
func (s *server) alive() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// exitReason says how an exited server ended ("signal: killed", "exit
// status 1: <its last log line>").
func (s *server) exitReason() string {
	if s.alive() {
		return "still running"
	}
	why := fmt.Sprint(s.waitErr)
	if s.waitErr == nil {
		why = "exit status 0"
	}
	if line := s.stderr.LastLine(); line != "" && !strings.Contains(why, "signal") {
		why += ": " + line
	}
	return why
}

// stop asks the server to exit (SIGTERM) and kills it if it has not after a
// few seconds.
func (s *server) stop() {
	if s == nil || !s.alive() {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(3 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat.
// It is part of Linux's user-space ABI and 100 on every architecture Go
// supports, whatever the kernel's internal HZ.
const clockTicks = 100

// cpuSeconds returns the user+system CPU time the process (all its threads)
// has used so far.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may contain spaces;
	// fields are counted after its closing parenthesis.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), so utime (field 14) is f[11], stime f[12].
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return float64(ut+st) / clockTicks, nil
}

// machineBusySeconds returns the CPU time all cores of the machine have
// spent busy (everything but idle and iowait), from the first line of
// /proc/stat. With the server's and the load generator's own CPU time
// subtracted, it shows how much other processes (a build, someone else's
// tests) took from a round: noise the report has to admit to.
func machineBusySeconds() (float64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var busy uint64
	for i, v := range f[1:] {
		if i == 3 || i == 4 || i >= 8 { // idle, iowait; guest time is already in user
			continue
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, err
		}
		busy += n
	}
	return float64(busy) / clockTicks, nil
}

// cpuMeter measures, over an interval, the CPU time of a server, of this
// process (the load generator) and of everything else on the machine.
type cpuMeter struct {
	pid                   int
	server, self, machine float64
	start                 time.Time
}

func startCPUMeter(pid int) (*cpuMeter, error) {
	m := &cpuMeter{pid: pid, start: time.Now()}
	var err1, err2, err3 error
	m.server, err1 = cpuSeconds(pid)
	m.self, err2 = cpuSeconds(os.Getpid())
	m.machine, err3 = machineBusySeconds()
	return m, errors.Join(err1, err2, err3)
}

// cpuUse is what a cpuMeter measured: CPU seconds of the server, and cores
// kept busy on average by the load generator and by other processes.
type cpuUse struct {
	server         float64 // seconds
	client, others float64 // cores
}

func (m *cpuMeter) stop() (cpuUse, error) {
	end, err := startCPUMeter(m.pid)
	if err != nil {
		return cpuUse{}, err
	}
	wall := end.start.Sub(m.start).Seconds()
	u := cpuUse{server: end.server - m.server}
	self := end.self - m.self
	if wall > 0 {
		u.client = self / wall
		// Clamped: over a short interval the 10 ms tick granularity of
		// the three counters can make the difference exceed the machine.
		u.others = min(max(0, (end.machine-m.machine)-u.server-self)/wall, float64(runtime.NumCPU()))
	}
	return u, nil
}

// rssKB returns the process's resident set size (VmRSS) in KiB.
func rssKB(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmRSS", pid)
}

// debugClient talks to agentui's debug listener; it is separate from the
// load generator's client so its connection never counts as a stream.
var debugClient = &http.Client{Timeout: 10 * time.Second}

// goroutines reads the goroutine count from agentui's pprof endpoint, whose
// debug=1 output starts with "goroutine profile: total <n>".
func goroutines(debugAddr string) (int, error) {
	resp, err := debugClient.Get("http://" + debugAddr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil {
		return 0, err
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(line), "goroutine profile: total ")
	if !ok {
		return 0, fmt.Errorf("goroutine profile starts with %q", line)
	}
	return strconv.Atoi(v)
}

// memStats is the part of runtime.MemStats that expvar publishes at
// /debug/vars that the idle-stream scenario reports: where the memory of an
// open stream goes (goroutine stacks or heap).
type memStats struct {
	HeapInuse  int64
	StackInuse int64
}

func readMemStats(debugAddr string) (memStats, error) {
	resp, err := debugClient.Get("http://" + debugAddr + "/debug/vars")
	if err != nil {
		return memStats{}, err
	}
	defer resp.Body.Close()
	var v struct{ Memstats memStats }
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return memStats{}, err
	}
	return v.Memstats, nil
}

// tailBuffer keeps the last max bytes written to it: enough of a server's
// standard error to say why it failed, without growing for hours.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// LastLine returns the last non-empty line written.
func (t *tailBuffer) LastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
