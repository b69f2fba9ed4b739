package gctune

import (
	"runtime"
	"runtime/debug"
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

// goal is the heap size the next collection aims at.
func goal() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
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
	if g := goal(); g > 16<<20 {
		t.Fatalf("the goal is %d MB before the tuner", g>>20)
	}
	stop := MinHeap(64 << 20)
	t.Cleanup(stop)
	until(t, "a small live heap", func() bool { return percent() > 1000 })
	if g := goal(); g < 60<<20 || g > 72<<20 {
		t.Fatalf("with a 64 MB floor the goal is %d MB", g>>20)
	}
	// Go starts a collection a little before its goal: 8 to 10 for 512 MB
	// of garbage (fewer on a loaded machine, where a cycle's marking
	// spans more allocation). None would be a floor the collector never
	// reaches; about 128 is Go's own 4 MB.
	if n := collections(512 << 20); n < 2 || n > 16 {
		t.Fatalf("512 MB of garbage took %d collections with a 64 MB floor", n)
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

// An off collector stays off, and a floor of 0 changes nothing.
func TestMinHeapLeavesTheCollectorAlone(t *testing.T) {
	prev := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	stop := MinHeap(64 << 20)
	runtime.GC()
	if p := gcPercent(); p != -1 {
		t.Fatalf("GOGC=off became %d", p)
	}
	stop()
	debug.SetGCPercent(prev)
	stop = MinHeap(0)
	runtime.GC()
	if p := gcPercent(); p != prev {
		t.Fatalf("a floor of 0 set the percentage to %d", p)
	}
	stop()
}
