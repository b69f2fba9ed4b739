package runlog

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/history"
)

// A run nobody reads holds about its text, not an entry per delta: the
// deltas no reader was given are merged (up to maxMerged each), in order.
func TestMemoryMergesDeltasNobodyRead(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	k := history.Key{Scope: "s", Chat: "c"}
	_ = m.Begin(ctx, k, Header{Run: "r"})
	// Until the log coalesces, every delta is an entry of its own.
	for i := range 3 {
		_ = m.Append(ctx, k, "r", EventEntry(int64(i+1), &agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: "x"}))
	}
	if es, _ := m.Read(ctx, k, "r", 0, time.Millisecond); len(es) != 3 {
		t.Fatalf("%d entries before coalescing, want 3", len(es))
	}
	_ = m.Begin(ctx, k, Header{Run: "r"})
	m.Coalesce(k, "r")
	var want strings.Builder
	for i := range 100000 {
		w := strconv.Itoa(i) + " "
		want.WriteString(w)
		_ = m.Append(ctx, k, "r", EventEntry(int64(i+1), &agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: w}))
	}
	var got strings.Builder
	entries, after := 0, int64(0)
	for {
		es, err := m.Read(ctx, k, "r", after, time.Millisecond)
		if err != nil || len(es) == 0 {
			break
		}
		for _, e := range es {
			got.WriteString(e.Event.(*agent.PartDelta).Delta)
			entries++
			after = e.Seq
		}
	}
	if got.String() != want.String() || after != 100000 {
		t.Fatalf("read %d bytes up to %d, want %d bytes up to 100000", got.Len(), after, want.Len())
	}
	if max := want.Len()/maxMerged + 2; entries > max {
		t.Fatalf("%d entries for %d bytes of text, want at most %d", entries, want.Len(), max)
	}
	// A tool call's argument deltas are not merged (readers need each).
	_ = m.Begin(ctx, k, Header{Run: "r2"})
	m.Coalesce(k, "r2")
	for i := range 3 {
		_ = m.Append(ctx, k, "r2", EventEntry(int64(i+1), &agent.PartDelta{Kind: agent.PartToolCall, ID: "c", Delta: "{"}))
	}
	if es, _ := m.Read(ctx, k, "r2", 0, time.Millisecond); len(es) != 3 {
		t.Fatalf("%d tool-call entries, want 3", len(es))
	}
}

// The next run may begin the moment the last one releases its chat,
// before the last one has logged its end: the last one's readers still
// get its last entries.
func TestMemoryKeepsTheRunBeforeForItsReaders(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	k := history.Key{Scope: "s", Chat: "c"}
	_ = m.Begin(ctx, k, Header{Run: "r1"}, EventEntry(1, &agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: "a"}))
	got := make(chan []Entry, 1)
	go func() {
		var all []Entry
		after := int64(0)
		for {
			es, err := m.Read(ctx, k, "r1", after, 10*time.Second)
			if err != nil {
				got <- nil
				return
			}
			all = append(all, es...)
			if n := len(all); n > 0 && all[n-1].Type == TypeEnded {
				got <- all
				return
			}
			if len(es) > 0 {
				after = es[len(es)-1].Seq
			}
		}
	}()
	_ = m.Begin(ctx, k, Header{Run: "r2"})
	_ = m.End(ctx, k, "r1", time.Minute, []Entry{FailedEntry(2, "x"), EndedEntry(3)})
	if all := <-got; len(all) != 3 || all[2].Type != TypeEnded {
		t.Fatalf("the reader of the run before got %+v", all)
	}
	if h, _ := m.Current(ctx, k); h.Run != "r2" {
		t.Fatalf("Current = %q", h.Run)
	}
}

// Turns taken in quick succession in one chat hold a log or two, not one
// per turn for the retention: a replaced log a reader was given to its
// end goes at the chat's next Begin; one nobody read to its end stays
// until it expires, for its readers.
func TestMemoryDropsReplacedLogsReadToTheirEnd(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	k := history.Key{Scope: "s", Chat: "c"}
	for i := range 100 {
		run := "r" + strconv.Itoa(i)
		_ = m.Begin(ctx, k, Header{Run: run}, EventEntry(1, &agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: "a"}))
		_ = m.End(ctx, k, run, time.Minute, []Entry{EndedEntry(2)})
		if es, _ := m.Read(ctx, k, run, 0, time.Millisecond); len(es) != 2 {
			t.Fatalf("%s: read %d entries", run, len(es))
		}
		if n := len(m.older[k]); n > 1 {
			t.Fatalf("after %d turns, %d replaced logs are held", i+1, n)
		}
	}
	// Read only part of the way: the log stays for its readers.
	_ = m.Begin(ctx, k, Header{Run: "half"}, EventEntry(1, &agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: "a"}))
	if es, _ := m.Read(ctx, k, "half", 0, time.Millisecond); len(es) != 1 {
		t.Fatalf("read %d entries", len(es))
	}
	_ = m.End(ctx, k, "half", time.Minute, []Entry{EndedEntry(2)})
	_ = m.Begin(ctx, k, Header{Run: "next"})
	_ = m.Begin(ctx, k, Header{Run: "after"})
	if es, err := m.Read(ctx, k, "half", 1, time.Millisecond); err != nil || len(es) != 1 || es[0].Type != TypeEnded {
		t.Fatalf("the rest of a log not read to its end: %+v, %v", es, err)
	}
}

// A long run's full chunks are compacted whoever reads them: its text
// deltas merged, so that it holds about its text. A reader resuming
// after any entry it was given, merged since or not, gets exactly the
// rest; a copier (the mirror to a shared log) reads every delta as it
// was logged. Nothing is compacted before a reader was given it.
func TestMemoryCompactsLongRuns(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	k := history.Key{Scope: "s", Chat: "c"}
	_ = m.Begin(ctx, k, Header{Run: "r"})
	const n = 3000
	words := make([]string, n)
	for i := range words {
		words[i] = strconv.Itoa(i+1) + " "
		// A reader follows the run live: every entry is read as it comes.
		_ = m.Append(ctx, k, "r", EventEntry(int64(i+1), &agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: words[i]}))
		if es, _ := m.Read(ctx, k, "r", int64(i), time.Millisecond); len(es) == 0 {
			t.Fatalf("entry %d not read", i+1)
		}
	}
	entries := 0
	for _, ch := range m.logs[k].chunks {
		entries += len(ch)
	}
	if entries > 1100 { // the first 504, the last chunk (up to 512), an entry per compacted chunk
		t.Fatalf("%d entries held for %d deltas", entries, n)
	}
	for after := int64(0); after <= n; after++ {
		var got strings.Builder
		last := after
		for {
			es, err := m.Read(ctx, k, "r", last, 0)
			if err != nil || len(es) == 0 {
				break
			}
			for _, e := range es {
				got.WriteString(e.Event.(*agent.PartDelta).Delta)
				last = e.Seq
			}
		}
		if want := strings.Join(words[after:], ""); got.String() != want || last != n {
			t.Fatalf("after %d: read %q… up to %d, want %q… up to %d", after, prefix(got.String()), last, prefix(want), n)
		}
	}
	// A copier reads the compacted log as it was logged: every delta,
	// each with its own sequence, from wherever it left off.
	for after := int64(0); after <= n; after += 37 {
		var got strings.Builder
		last := after
		for {
			es, err := m.ReadDeltas(ctx, k, "r", last, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(es) == 0 {
				break
			}
			for _, e := range es {
				if e.Seq != last+1 {
					t.Fatalf("after %d: entry %d follows %d", after, e.Seq, last)
				}
				got.WriteString(e.Event.(*agent.PartDelta).Delta)
				last = e.Seq
			}
		}
		if want := strings.Join(words[after:], ""); got.String() != want || last != n {
			t.Fatalf("deltas after %d: read %q… up to %d, want %q… up to %d", after, prefix(got.String()), last, prefix(want), n)
		}
	}
	if _, err := m.ReadDeltas(ctx, k, "gone", 0, 0); err != ErrNoRun {
		t.Fatalf("ReadDeltas of no run: %v", err)
	}
	// Nothing is compacted before a reader was given it as it came.
	_ = m.Begin(ctx, k, Header{Run: "unread"})
	for i := range words {
		_ = m.Append(ctx, k, "unread", EventEntry(int64(i+1), &agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: words[i]}))
	}
	entries = 0
	for _, ch := range m.logs[k].chunks {
		entries += len(ch)
	}
	if entries != n {
		t.Fatalf("unread: %d entries, want %d", entries, n)
	}
}

// A copier (the mirror) that reads ahead of the run's own stream does
// not let the log compact what that stream has yet to be given: the
// client that asked still gets every delta as it came, one entry each.
func TestMemoryCopierAheadDoesNotCompactForTheStream(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	k := history.Key{Scope: "s", Chat: "c"}
	_ = m.Begin(ctx, k, Header{Run: "r"})
	const n = 3000
	var copied, streamed int64
	for i := range n {
		_ = m.Append(ctx, k, "r", EventEntry(int64(i+1), &agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: strconv.Itoa(i+1) + " "}))
		es, err := m.ReadDeltas(ctx, k, "r", copied, 0)
		if err != nil {
			t.Fatal(err)
		}
		copied = es[len(es)-1].Seq
		// The stream reads 700 entries behind the copier, a page at a time.
		if (i+1)%100 == 0 && int64(i+1-700) > streamed {
			es, err := m.Read(ctx, k, "r", streamed, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range es {
				if e.Seq != streamed+1 {
					t.Fatalf("the stream got entry %d after %d: deltas merged before it was given them", e.Seq, streamed)
				}
				streamed = e.Seq
			}
		}
	}
	streamAll(t, m, k, streamed, n)
}

// A copier that waits for the run's next entries (as the mirror does)
// is woken with them, and they still do not count as streamed: the
// stream that reads behind it gets every delta as it came.
func TestMemoryWaitingCopierDoesNotCompactForTheStream(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	k := history.Key{Scope: "s", Chat: "c"}
	_ = m.Begin(ctx, k, Header{Run: "r"})
	const n = 3000
	copied := make(chan int64)
	go func() {
		var after int64
		for after < n {
			es, err := m.ReadDeltas(ctx, k, "r", after, time.Hour) // waits: each entry is appended after it asks
			if err != nil {
				close(copied)
				return
			}
			for _, e := range es {
				after = e.Seq
				copied <- after
			}
		}
	}()
	for i := range n {
		_ = m.Append(ctx, k, "r", EventEntry(int64(i+1), &agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: strconv.Itoa(i+1) + " "}))
		if got := <-copied; got != int64(i+1) {
			t.Fatalf("the copier got %d, want %d", got, i+1)
		}
	}
	streamAll(t, m, k, 0, n)
}

// streamAll reads run "r" of k as a stream does, after streamed, to its
// last entry, which must be n: every delta on its own, as it came.
func streamAll(t *testing.T, m *Memory, k history.Key, streamed, n int64) {
	t.Helper()
	for {
		es, err := m.Read(context.Background(), k, "r", streamed, 0)
		if err != nil || len(es) == 0 {
			break
		}
		for _, e := range es {
			if e.Seq != streamed+1 {
				t.Fatalf("the stream got entry %d after %d: deltas merged before it was given them", e.Seq, streamed)
			}
			streamed = e.Seq
		}
	}
	if streamed != n {
		t.Fatalf("the stream read up to %d of %d", streamed, n)
	}
}

func prefix(s string) string { return s[:min(len(s), 40)] }

// A reader given a run's last entry finds the log ended: its client may
// ask again at once (a reconnect), which must not follow the run again.
// The last entries and the end are one change; a reader that got the
// end between them raced it, so the check runs many times.
func TestMemoryEndsWithItsLastEntries(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	for i := range 500 {
		k := history.Key{Scope: "s", Chat: fmt.Sprint("c", i)}
		_ = m.Begin(ctx, k, Header{Run: "r"}, EventEntry(1, &agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: "a"}))
		ended := make(chan bool, 1)
		go func() {
			for after := int64(1); ; {
				es, err := m.Read(ctx, k, "r", after, 10*time.Second)
				if err != nil {
					ended <- false
					return
				}
				if n := len(es); n > 0 && es[n-1].Type == TypeEnded {
					h, _ := m.Current(ctx, k)
					ended <- h.Ended
					return
				} else if n > 0 {
					after = es[n-1].Seq
				}
			}
		}()
		for waiting := false; !waiting; runtime.Gosched() {
			m.mu.Lock()
			waiting = m.logs[k].waiting // the reader waits for the next entry
			m.mu.Unlock()
		}
		_ = m.End(ctx, k, "r", time.Minute, []Entry{EndedEntry(2)})
		if !<-ended {
			t.Fatalf("round %d: a reader given the last entry found the log not ended", i)
		}
	}
}
