// Package testutil finds what black-box tests need outside Go (Node, npm
// packages, Redis) and captures logs. When something is missing a test
// skips and says why; under CI (CI=true) it fails instead, so CI never
// counts a skipped test as passing.
package testutil

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// CI reports whether the tests run under CI.
func CI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v != "" && v != "0" && v != "false"
}

// Missing skips the test with reason, or fails it under CI.
func Missing(t testing.TB, reason string) {
	t.Helper()
	if CI() {
		t.Fatalf("%s (CI=true: missing dependencies fail)", reason)
	}
	t.Skipf("%s (skipped; under CI this fails)", reason)
}

// Node returns the path of the node binary.
func Node(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		Missing(t, "node not found: install Node.js 20+ to run the JavaScript conformance tests")
	}
	return p
}

// NodeModules checks that dir (a JavaScript package) has its dependencies
// installed.
func NodeModules(t testing.TB, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
		abs, _ := filepath.Abs(dir)
		Missing(t, "no node_modules in "+abs+": run `npm ci` there (make test does)")
	}
}

// LogBuffer collects log output safely from many goroutines.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything logged so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
