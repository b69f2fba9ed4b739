package redisstore_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test leaves no goroutine behind: runs, streams, lock keepers and
// background releases all end.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
