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
	"sync/atomic"
)

// MinHeap makes the collector let the heap grow to at least min bytes
// before it collects: after each collection it sets the GC percentage to
// what gives that goal for the live heap it left, never below the one the
// process started with. It does nothing when the collector is off
// (GOGC=off). stop undoes it.
func MinHeap(min uint64) (stop func()) {
	base := debug.SetGCPercent(100)
	debug.SetGCPercent(base)
	if base < 0 || min == 0 {
		return func() {}
	}
	t := &tuner{min: min, base: base, cur: base, sample: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"},
	}}
	t.adjust()
	t.arm()
	return func() {
		t.stopped.Store(true)
		debug.SetGCPercent(base)
	}
}

type tuner struct {
	min     uint64
	base    int
	cur     int
	sample  []metrics.Sample
	stopped atomic.Bool
}

// sentinel is garbage as soon as it is made; its cleanup runs after the
// collection that frees it. It holds a pointer so that it is not batched
// with other tiny objects, whose cleanups may never run.
type sentinel struct{ _ *byte }

// arm makes the next collection call adjust (and arm again).
func (t *tuner) arm() {
	runtime.AddCleanup(new(sentinel), func(t *tuner) {
		if !t.stopped.Load() {
			t.adjust()
			t.arm()
		}
	}, t)
}

// goFloor is the heap Go collects at, at the least, with GOGC=100; it
// scales with the percentage (4 MB × percent / 100).
const goFloor = 4 << 20

// adjust sets the percentage for the live heap the last collection left.
// Go's goal is live + (live + stacks + globals) × percent / 100, and at
// least goFloor × percent / 100: the percentage is the lower of what
// makes either min.
func (t *tuner) adjust() {
	metrics.Read(t.sample)
	live := t.sample[0].Value.Uint64()
	scan := live + t.sample[1].Value.Uint64() + t.sample[2].Value.Uint64()
	pct := t.base
	if scan > 0 && live+scan*uint64(t.base)/100 < t.min {
		pct = max(t.base, int(min((t.min-live)*100/scan, t.min*100/goFloor)))
	}
	if pct != t.cur && !t.stopped.Load() {
		t.cur = pct
		debug.SetGCPercent(pct)
	}
}
