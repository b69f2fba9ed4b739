package agentui_test

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Each package keeps to its layer (docs/architecture.md): the canonical
// model knows no other package; the agent knows no protocol, handler or
// store; stores, run logs and telemetry know no handler or protocol; a
// protocol knows no storage of its own (it reaches it only through the
// handler it plugs into, uiadapter); the protocol seam (internal/wire)
// knows only the model and the agent; the run engine (internal/run) knows
// no handler, protocol or policy: it gets a planned turn and runs it. The check follows imports
// transitively within the module (a protocol's, only its own), tests
// excluded.
func TestPackagesKeepToTheirLayer(t *testing.T) {
	const mod = "github.com/agentui/agentui/"
	rules := map[string][]string{
		"cmf":                {"agent", "uiadapter", "protocols", "history", "runlog", "telemetry", "policy", "limit"},
		"agent":              {"uiadapter", "protocols", "history", "runlog", "telemetry"},
		"limit":              {"agent", "uiadapter", "protocols", "history", "runlog"},
		"history":            {"uiadapter", "protocols", "telemetry"},
		"files":              {"uiadapter", "protocols", "history", "runlog", "telemetry"},
		"history/redisstore": {"uiadapter", "protocols", "telemetry"},
		"runlog":             {"uiadapter", "protocols", "telemetry"},
		"telemetry":          {"uiadapter", "protocols", "history"},
		"policy":             {"uiadapter", "protocols", "history", "runlog"},
		"edge":               {"uiadapter", "protocols", "history", "runlog", "telemetry"},
		"internal/wire":      {"uiadapter", "protocols", "history", "runlog", "telemetry", "policy", "limit"},
		"internal/turn":      {"uiadapter", "protocols", "history", "runlog", "telemetry", "policy", "limit"},
		"internal/run":       {"uiadapter", "protocols", "telemetry", "policy", "limit", "edge"},
		"internal/ingest":    {"uiadapter", "protocols", "history", "runlog", "internal/run", "internal/turn", "policy"},
		"internal/outagelog": {"uiadapter", "protocols", "history", "runlog", "internal/turn", "internal/run"},
		"protocols/vercelai": {"history", "runlog"},
		"protocols/agui":     {"history", "runlog"},
	}
	for pkg, banned := range rules {
		deps := map[string]bool{}
		var walk func(path string)
		walk = func(path string) {
			p, err := build.Import(path, ".", 0)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			for _, imp := range p.Imports {
				if strings.HasPrefix(imp, mod) && !deps[imp] {
					deps[imp] = true
					if !strings.HasPrefix(pkg, "protocols/") {
						walk(imp)
					}
				}
			}
		}
		walk(mod + pkg)
		for dep := range deps {
			for _, b := range banned {
				if rel := strings.TrimPrefix(dep, mod); rel == b || strings.HasPrefix(rel, b+"/") {
					t.Errorf("%s imports %s (its layer must not know %s)", pkg, rel, b)
				}
			}
		}
	}
}

// The package table of docs/architecture.md names every package of the
// module, and names nothing that is not one: a row's first cell lists
// packages in backquotes ("dir/…" for every package under dir).
func TestArchitectureTableNamesEveryPackage(t *testing.T) {
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	var exact, under []string
	for _, line := range strings.Split(string(doc), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(line, "| `") {
			continue
		}
		for _, name := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cells[1], -1) {
			n := name[1]
			switch {
			case strings.HasSuffix(n, "/…"):
				under = append(under, strings.TrimSuffix(n, "…"))
			case n == "agentui":
				exact = append(exact, ".")
			default:
				exact = append(exact, strings.TrimSuffix(n, "/"))
			}
		}
	}
	pkgs := map[string]bool{}
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "node_modules" || name == "testdata" || strings.HasPrefix(name, ".") && path != "." {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != "." {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			pkgs[filepath.ToSlash(filepath.Dir(path))] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	named := func(pkg string) bool {
		if slices.Contains(exact, pkg) {
			return true
		}
		for _, u := range under {
			if strings.HasPrefix(pkg+"/", u) {
				return true
			}
		}
		return false
	}
	for pkg := range pkgs {
		if !named(pkg) {
			t.Errorf("package %s is not in the table of docs/architecture.md", pkg)
		}
	}
	for _, n := range exact {
		if !pkgs[n] {
			t.Errorf("docs/architecture.md names %s, which is not a package of the module", n)
		}
	}
}

// The agent-framework adapters are modules of their own (adapters/…): the
// core module names none of their frameworks, so an application that
// imports neither builds exactly what it built before them, and its
// go.mod gains nothing.
func TestAdaptersStayOutOfTheCore(t *testing.T) {
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, framework := range []string{"github.com/cloudwego/eino", "github.com/firebase/genkit"} {
			if strings.Contains(string(b), framework) {
				t.Errorf("the core's %s names %s: keep it in its adapter's module", f, framework)
			}
		}
	}
	adapters, err := filepath.Glob("adapters/*/go.mod")
	if err != nil || len(adapters) == 0 {
		t.Fatalf("no adapter modules under adapters/ (%v)", err)
	}
}
