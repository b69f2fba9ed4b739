package agentui_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// scriptTools are the commands scripts/container.sh runs besides the
// builders and go: the only ones on the PATH the tests give it.
var scriptTools = []string{"dirname", "mktemp", "cp", "rm"}

// fakeCommands are stand-ins that append the command line they were run
// with to $RECORD. The fake go writes the file -o names (the real one
// takes minutes on a cold cache) and records CGO_ENABLED and GOOS; a
// builder records the files of the build context it was given (its last
// argument); docker info exits with $DOCKER_INFO (0: a daemon answers).
var fakeCommands = map[string]string{
	"go": `out=; prev=
for a in "$@"; do [ "$prev" = -o ] && out=$a; prev=$a; done
echo "go $* CGO_ENABLED=$CGO_ENABLED GOOS=$GOOS" >> "$RECORD"
[ -n "$out" ] && : > "$out"`,
	"podman":  `echo "podman $*" >> "$RECORD"; for a in "$@"; do ctx=$a; done; for f in "$ctx"/*; do echo "  ${f##*/}" >> "$RECORD"; done`,
	"buildah": `echo "buildah $*" >> "$RECORD"; for a in "$@"; do ctx=$a; done; for f in "$ctx"/*; do echo "  ${f##*/}" >> "$RECORD"; done`,
	"docker": `echo "docker $*" >> "$RECORD"
if [ "$1" = info ]; then exit "${DOCKER_INFO:-0}"; fi
for a in "$@"; do ctx=$a; done; for f in "$ctx"/*; do echo "  ${f##*/}" >> "$RECORD"; done`,
}

// runContainerScript runs scripts/container.sh with a PATH of the fakes
// named and the few tools it needs, and env; it returns the script's
// stderr, the fakes' record with the build context's directory written
// CTX, and the script's error.
func runContainerScript(t *testing.T, fakes []string, env ...string) (string, string, error) {
	t.Helper()
	dir := t.TempDir()
	bin, tools := filepath.Join(dir, "bin"), filepath.Join(dir, "tools")
	for _, d := range []string{bin, tools} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range append([]string{"go"}, fakes...) {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+fakeCommands[name]+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range scriptTools {
		path, err := exec.LookPath(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(path, filepath.Join(tools, name)); err != nil {
			t.Fatal(err)
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(dir, "record")
	cmd := exec.Command(bash, "scripts/container.sh", "mytag")
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "PATH" && k != "CONTAINER_BUILDER" && k != "DOCKER_INFO" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, append([]string{"PATH=" + bin + ":" + tools, "RECORD=" + record}, env...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	runErr := cmd.Run()
	b, err := os.ReadFile(record)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	got := string(b)
	if m := regexp.MustCompile(`-o (\S+)/agentui `).FindStringSubmatch(got); m != nil {
		got = strings.ReplaceAll(got, m[1], "CTX")
	}
	return stderr.String(), got, runErr
}

const compiled = "go build -trimpath -ldflags=-s -o CTX/agentui ./cmd/agentui CGO_ENABLED=0 GOOS=linux\n"
const buildContext = "  Containerfile\n  agentui\n  ca-certificates.crt\n"

// scripts/container.sh picks podman, then buildah, then docker (when its
// daemon answers), or the one CONTAINER_BUILDER names, and builds the
// image with it from a context of the binary built for Linux, the CA
// certificates and deploy/Containerfile.
func TestContainerScriptBuilds(t *testing.T) {
	for _, c := range []struct {
		name  string
		fakes []string
		env   []string
		want  string
	}{
		{"podman first", []string{"podman", "buildah", "docker"}, nil,
			compiled + "podman build -t mytag -f CTX/Containerfile CTX\n" + buildContext},
		{"buildah without podman", []string{"buildah", "docker"}, nil,
			compiled + "buildah bud -t mytag -f CTX/Containerfile CTX\n" + buildContext},
		{"docker alone", []string{"docker"}, nil,
			"docker info\n" + compiled + "docker build -t mytag -f CTX/Containerfile CTX\n" + buildContext},
		{"docker named", []string{"podman", "buildah", "docker"}, []string{"CONTAINER_BUILDER=docker"},
			"docker info\n" + compiled + "docker build -t mytag -f CTX/Containerfile CTX\n" + buildContext},
	} {
		t.Run(c.name, func(t *testing.T) {
			stderr, got, err := runContainerScript(t, c.fakes, c.env...)
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			if got != c.want {
				t.Fatalf("ran:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

// Without a builder that can work the script fails with one line before
// it compiles anything: go is never run.
func TestContainerScriptWithoutBuilder(t *testing.T) {
	for _, c := range []struct {
		name  string
		fakes []string
		env   []string
		line  string
		ran   string
	}{
		{"none on PATH", nil, nil, "container.sh: no podman, buildah or docker on PATH: install one to build the image", ""},
		{"docker without a daemon", []string{"docker"}, []string{"DOCKER_INFO=1"},
			"container.sh: docker is installed but its daemon does not answer (docker info fails): start it, or install podman", "docker info\n"},
		{"named one missing", []string{"docker"}, []string{"CONTAINER_BUILDER=podman"},
			"container.sh: CONTAINER_BUILDER=podman, but there is no podman on PATH", ""},
		{"named one unknown", []string{"docker"}, []string{"CONTAINER_BUILDER=nerdctl"},
			"container.sh: CONTAINER_BUILDER=nerdctl: want podman, buildah or docker", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			stderr, got, err := runContainerScript(t, c.fakes, c.env...)
			if err == nil {
				t.Fatal("no error")
			}
			if lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n"); !slices.Equal(lines, []string{c.line}) {
				t.Fatalf("stderr:\n%s\nwant the one line:\n%s", stderr, c.line)
			}
			if got != c.ran {
				t.Fatalf("ran:\n%s\nwant:\n%s", got, c.ran)
			}
		})
	}
}
