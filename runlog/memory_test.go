package runlog_test

import (
	"testing"

	"github.com/agentui/agentui/runlog"
	"github.com/agentui/agentui/runlog/logtest"
)

func TestMemory(t *testing.T) {
	logtest.Run(t, func(*testing.T) runlog.Log { return runlog.NewMemory() })
}
