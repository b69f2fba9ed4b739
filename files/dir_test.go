package files_test

import (
	"testing"

	"github.com/agentui/agentui/files"
	"github.com/agentui/agentui/files/filestest"
)

func TestDirStore(t *testing.T) {
	filestest.Run(t, func(t *testing.T) files.Store {
		d, err := files.NewDir(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}
