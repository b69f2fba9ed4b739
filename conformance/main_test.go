package conformance

import (
	"flag"
	"os"
	"testing"
)

// TestMain runs four flows at a time unless -parallel says otherwise, not
// GOMAXPROCS: a flow is a Node process that mostly waits (on the server's
// timers and replies), and two at a time left a 2-core machine's cores
// idle while the suite took most of CI's time.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", "4")
	}
	os.Exit(m.Run())
}
