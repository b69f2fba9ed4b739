// Package gctune keeps Go's garbage collector from running every few
// megabytes of allocation while the live heap is small.
//
// Go starts a collection when the heap has grown by GOGC percent over what
// the last one left live, and at 4 MB at the least. A streaming server
// with a few busy streams has a live heap of a few MB but allocates
// events at a hundred MB per second: it collects dozens of times a second,
// and the collections' fixed costs (and the write barriers they turn on)
// were a fifth of its CPU. [MinHeap] raises that floor; once the live heap
// is big (thousands of open streams), the GOGC the process started with
// holds as before.
package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// MinHeap makes the collector let the heap grow to at least floor bytes
// before it collects: after each collection it sets the GC percentage to
// what gives that goal for the live heap it left, never below the one the
// process started with. It does nothing when the collector is off
// (GOGC=off) or floor is 0. stop puts the starting percentage back.
func MinHeap(floor uint64) (stop func()) {
	base := gcPercent()
	if base < 0 || floor == 0 {
		return func() {}
	}
	t := &tuner{floor: floor, base: base, cur: base, sample: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"},
	}}
	t.adjust()
	t.arm()
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.stopped = true
		debug.SetGCPercent(base)
	}
}

// gcPercent is the GC percentage in force, -1 when the collector is off
// (which runtime/metrics reports as the largest uint64).
func gcPercent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(int64(s[0].Value.Uint64()))
}

type tuner struct {
	floor  uint64
	base   int
	sample []metrics.Sample

	mu      sync.Mutex // adjust runs on the cleanup goroutine; stop on any
	cur     int
	stopped bool
}

// sentinel is garbage as soon as it is made; its cleanup runs after the
// collection that frees it. It holds a pointer so that it is not batched
// with other tiny objects, whose cleanups may never run.
type sentinel struct{ _ *byte }

// arm makes the next collection call adjust (and arm again).
func (t *tuner) arm() {
	runtime.AddCleanup(new(sentinel), func(t *tuner) {
		if t.adjust() {
			t.arm()
		}
	}, t)
}

// goFloor is the heap Go collects at, at the least, with GOGC=100; it
// scales with the percentage (4 MB × percent / 100).
const goFloor = 4 << 20

// adjust sets the percentage for the live heap the last collection left,
// and reports whether the tuner still runs. Go's goal is live + (live +
// stacks + globals) × percent / 100, and at least goFloor × percent /
// 100: the percentage is the lower of what makes either the floor.
func (t *tuner) adjust() bool {
	metrics.Read(t.sample)
	live := t.sample[0].Value.Uint64()
	scan := live + t.sample[1].Value.Uint64() + t.sample[2].Value.Uint64()
	pct := t.base
	if scan > 0 && live+scan*uint64(t.base)/100 < t.floor {
		pct = max(t.base, int(min((t.floor-live)*100/scan, t.floor*100/goFloor)))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return false
	}
	if pct != t.cur {
		t.cur = pct
		debug.SetGCPercent(pct)
	}
	return true
}
