package main

import (
	"bufio"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// sysInfo is the machine and the software versions a run measured, so a
// reader can tell whether two tables are comparable.
type sysInfo struct {
	cpu, kernel, memory string
	cores               int
	goVersion           string
	node                string
	ai, encoder, core   string
	aguiGoSDK           string // the AG-UI community Go SDK's version in bench/peers
	agentui             string // the revision the agentui binary was built from
	redis               string
}

func collectSysInfo(e *env) sysInfo {
	si := sysInfo{cores: runtime.NumCPU(), goVersion: runtime.Version()}
	si.cpu = firstField("/proc/cpuinfo", "model name", ":")
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		si.kernel = "Linux " + strings.TrimSpace(string(b))
	}
	si.memory = firstField("/proc/meminfo", "MemTotal", ":")
	if kb, err := strconv.ParseFloat(strings.TrimSuffix(si.memory, " kB"), 64); err == nil {
		si.memory = fmt.Sprintf("%.0f GiB", kb/(1<<20))
	}
	if out, err := exec.Command(e.node, "--version").Output(); err == nil {
		si.node = strings.TrimSpace(string(out))
	}
	si.ai = npmVersion(filepath.Join(e.repo, "bench/node-ai/node_modules/ai"))
	si.encoder = npmVersion(filepath.Join(e.repo, "bench/node-agui/node_modules/@ag-ui/encoder"))
	si.core = npmVersion(filepath.Join(e.repo, "bench/node-agui/node_modules/@ag-ui/core"))
	si.aguiGoSDK = firstField(filepath.Join(e.repo, "bench/peers/go.mod"), "github.com/ag-ui-protocol/ag-ui/sdks/community/go", " ")
	si.agentui = binaryRevision(e.agentui)
	if strings.HasPrefix(si.agentui, "unknown") {
		si.agentui = gitRevision(e.repo)
	}
	si.redis = redisVersion(e.s4History)
	return si
}

// firstField returns the value of the first "key<sep> value" line of a
// /proc file.
func firstField(path, key, sep string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), sep)
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// npmVersion reads the version of the package installed in dir.
func npmVersion(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return "not installed"
	}
	var p struct{ Version string }
	if json.Unmarshal(b, &p) != nil || p.Version == "" {
		return "unknown"
	}
	return p.Version
}

// binaryRevision reads the VCS stamp the go command put into a binary.
func binaryRevision(path string) string {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "unknown (built without VCS information)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified == "true" {
		rev += " with uncommitted changes"
	}
	return rev
}

// gitRevision describes the checked-out commit when the binary has no VCS
// stamp (GOFLAGS=-buildvcs=false). It only reads: rev-parse and a quiet
// diff, never anything that writes the index.
func gitRevision(repo string) string {
	out, err := exec.Command("git", "-C", repo, "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	rev := strings.TrimSpace(string(out))
	if exec.Command("git", "-C", repo, "diff", "--quiet", "HEAD", "--").Run() != nil {
		rev += " with uncommitted changes"
	}
	return rev
}
