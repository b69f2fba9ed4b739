package gctune

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

var (
	garbage []byte   // keeps the compiler from dropping the allocations
	live    [][]byte // a live heap
)

// collections counts the collections while n bytes of short-lived
// garbage are allocated.
func collections(n int) uint32 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n / (64 << 10) {
		garbage = make([]byte, 64<<10)
	}
	runtime.ReadMemStats(&after)
	return after.NumGC - before.NumGC
}

// percent is the GC percentage in force.
func percent() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// until collects until cond holds (the tuner adjusts after a collection,
// on the cleanup goroutine), for at most ten seconds.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); !cond(); runtime.Gosched() {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("%s: the percentage is %d", what, percent())
		}
		runtime.GC()
	}
}

func TestMinHeap(t *testing.T) {
	if percent() != 100 {
		t.Skip("GOGC is set") // the test counts on Go's default
	}
	runtime.GC()
	plain := collections(512 << 20)

	stop := MinHeap(64 << 20)
	until(t, "a small live heap", func() bool { return percent() > 1000 })
	tuned := collections(512 << 20)
	t.Logf("512 MB of garbage: %d collections, %d with a 64 MB floor", plain, tuned)
	// About 128 without (Go's floor is 4 MB), and 8 to 10 with (Go starts
	// a collection a little before its goal): a floor of 32 to 85 MB.
	if plain < 64 || tuned < 6 || tuned > 16 {
		t.Fatalf("512 MB of garbage took %d collections, and %d with a 64 MB floor", plain, tuned)
	}

	// A live heap over the floor collects at GOGC again.
	live = make([][]byte, 96)
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	until(t, "a 96 MB live heap", func() bool { return percent() == 100 })
	live = nil
	until(t, "the live heap freed", func() bool { return percent() > 1000 })

	stop()
	if percent() != 100 {
		t.Fatalf("after stop the percentage is %d", percent())
	}
}
