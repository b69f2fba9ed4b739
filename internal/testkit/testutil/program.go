package testutil

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Program is a built program the test runs.
type Program struct {
	URL    string     // from its "listening on http://…" line
	Line   string     // that line
	Stdout *LogBuffer // what it printed after that line
	Stderr *LogBuffer // what it logged
	cmd    *exec.Cmd
	exited chan error // receives Wait's result once
}

// RunProgram builds the main package in dir (relative to the test's
// directory) and runs it with env and args; it must print a line containing
// "listening on http://ADDR" first. The program is killed when the test
// ends.
func RunProgram(t testing.TB, dir string, env []string, args ...string) *Program {
	t.Helper()
	return RunBuilt(t, BuildProgram(t, dir), env, args...)
}

// BuildProgram builds the main package in dir (relative to the test's
// directory) and returns the binary's path, for RunBuilt to run it more
// than once. In a package whose TestMain runs its tests with
// ShareBuilds, a dir is built once for all of them.
func BuildProgram(t testing.TB, dir string) string {
	t.Helper()
	if shared.dir != "" {
		shared.mu.Lock()
		defer shared.mu.Unlock()
		if bin, ok := shared.bins[dir]; ok {
			return bin
		}
	}
	out := t.TempDir()
	if shared.dir != "" {
		out = filepath.Join(shared.dir, strconv.Itoa(len(shared.bins)))
	}
	bin := filepath.Join(out, "program")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", dir, err, out)
	}
	if shared.dir != "" {
		shared.bins[dir] = bin
	}
	return bin
}

// shared holds the programs built once for a package's tests.
var shared struct {
	mu   sync.Mutex
	dir  string
	bins map[string]string
}

// ShareBuilds runs m's tests with each program built once for all of
// them (a package that starts the same binary in many tests: linking it
// each time costs seconds a test), and removes the builds after. Call it
// from TestMain: os.Exit(testutil.ShareBuilds(m)).
func ShareBuilds(m *testing.M) int {
	dir, err := os.MkdirTemp("", "agentui-test-programs-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	shared.dir, shared.bins = dir, map[string]string{}
	return m.Run()
}

// RunBuilt runs a binary BuildProgram built, as RunProgram does.
func RunBuilt(t testing.TB, bin string, env []string, args ...string) *Program {
	t.Helper()
	dir := filepath.Base(bin)
	p := &Program{Stdout: &LogBuffer{}, Stderr: &LogBuffer{}}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stderr = p.Stderr
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.exited = make(chan error, 1)
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() { _ = p.cmd.Process.Kill() })
	r := bufio.NewReader(stdout)
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("%s printed no address: %v; stderr:\n%s", dir, err, p.Stderr)
	}
	go func() { _, _ = io.Copy(p.Stdout, r) }() // keep draining: a full pipe would block the program
	_, rest, ok := strings.Cut(line, "listening on ")
	if !ok {
		t.Fatalf("%s: first line %q", dir, line)
	}
	p.Line = strings.TrimSpace(line)
	p.URL, _, _ = strings.Cut(strings.TrimSpace(rest), " ")
	return p
}

// PID is the program's process id.
func (p *Program) PID() int { return p.cmd.Process.Pid }

// Signal sends sig to the program.
func (p *Program) Signal(t testing.TB, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// Exited waits up to limit for the program to exit and returns how it
// ended (nil: status 0); the test fails if it is still running.
func (p *Program) Exited(t testing.TB, limit time.Duration) error {
	t.Helper()
	select {
	case err := <-p.exited:
		return err
	case <-time.After(limit):
		t.Fatalf("the program is still running after %v; stderr:\n%s", limit, p.Stderr)
		return nil
	}
}

// ShellBlocks returns the ```sh code blocks of a README, in order: tests
// run an example's commands as its README writes them.
func ShellBlocks(readme string) []string {
	var blocks []string
	for _, part := range strings.Split(readme, "```sh\n")[1:] {
		block, _, _ := strings.Cut(part, "```")
		blocks = append(blocks, block)
	}
	return blocks
}

// RunREADME runs the commands of a README's sh block under bash as
// written, except `go run` lines (the test runs the program itself), with
// the README's address replaced by the program's, and returns what they
// printed. The test fails when a command fails.
func (p *Program) RunREADME(t testing.TB, block, readmeAddr string) string {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		if !strings.HasPrefix(l, "go run ") {
			lines = append(lines, l)
		}
	}
	script := strings.ReplaceAll(strings.Join(lines, "\n"), readmeAddr, strings.TrimPrefix(p.URL, "http://"))
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's commands: %v\n%s\n%s", err, script, out)
	}
	return string(out)
}
