package agentui_test

import (
	"go/build"
	"strings"
	"testing"
)

// Each package keeps to its layer (docs/architecture.md): the canonical
// model knows no other package; the agent knows no protocol, handler or
// store; stores, run logs and telemetry know no handler or protocol; a
// protocol knows no storage of its own (it reaches it only through the
// handler it plugs into, uiadapter). The check follows imports
// transitively within the module (a protocol's, only its own), tests
// excluded.
func TestPackagesKeepToTheirLayer(t *testing.T) {
	const mod = "github.com/agentui/agentui/"
	rules := map[string][]string{
		"cmf":                {"agent", "uiadapter", "protocols", "history", "runlog", "telemetry", "policy", "limit"},
		"agent":              {"uiadapter", "protocols", "history", "runlog", "telemetry"},
		"limit":              {"agent", "uiadapter", "protocols", "history", "runlog"},
		"history":            {"uiadapter", "protocols", "telemetry"},
		"history/redisstore": {"uiadapter", "protocols", "telemetry"},
		"runlog":             {"uiadapter", "protocols", "telemetry"},
		"telemetry":          {"uiadapter", "protocols", "history"},
		"policy":             {"uiadapter", "protocols", "history", "runlog"},
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
