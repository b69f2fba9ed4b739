package main

import (
	"os"
	"testing"

	"github.com/agentui/agentui/internal/testkit/testutil"
)

// The tests start the example more than once: it is built once for all
// of them.
func TestMain(m *testing.M) { os.Exit(testutil.ShareBuilds(m)) }
