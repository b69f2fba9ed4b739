package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/agentui/agentui/internal/testkit/testutil"
)

// The tests start the binary many times: it is built once for all of
// them. Started with effectsServerEnv set, the test binary is the effects
// MCP server instead (see TestKillNineProperty).
func TestMain(m *testing.M) {
	if os.Getenv(effectsServerEnv) != "" {
		if err := runEffectsServer(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(testutil.ShareBuilds(m))
}
