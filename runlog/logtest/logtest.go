// Package logtest checks that a runlog.Log behaves as the interface says.
// Every implementation runs it: runlog.Memory in runlog, the Redis log in
// history/redisstore.
package logtest

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/ids"
	"github.com/agentui/agentui/runlog"
)

// eventually polls cond until it holds or 10 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func key() history.Key { return history.Key{Scope: "s:" + ids.New(), Chat: "c{1}:" + ids.New()} }

func texts(seq int64, words ...string) []runlog.Entry {
	out := make([]runlog.Entry, len(words))
	for i, w := range words {
		out[i] = runlog.EventEntry(seq+int64(i), &agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: w})
	}
	return out
}

func deltas(t *testing.T, es []runlog.Entry) (seqs []int64, words []string) {
	t.Helper()
	for _, e := range es {
		seqs = append(seqs, e.Seq)
		switch ev := e.Event.(type) {
		case *agent.PartDelta:
			words = append(words, ev.Delta)
		case nil:
			words = append(words, e.Type)
		default:
			t.Fatalf("entry %d: unexpected %T", e.Seq, ev)
		}
	}
	return seqs, words
}

// Run runs the suite against the log newLog returns.
func Run(t *testing.T, newLog func(t *testing.T) runlog.Log) {
	ctx := context.Background()
	t.Run("begin with entries", func(t *testing.T) {
		l, k := newLog(t), key()
		if err := l.Begin(ctx, k, runlog.Header{Run: "r1"}, texts(1, "a", "b")...); err != nil {
			t.Fatal(err)
		}
		if err := l.Append(ctx, k, "r1", texts(3, "c")...); err != nil {
			t.Fatal(err)
		}
		// A log may merge deltas nobody has read (runlog.Memory.Coalesce):
		// the text and the last sequence are what was appended.
		es, err := l.Read(ctx, k, "r1", 0, time.Second)
		if seqs, words := deltas(t, es); err != nil || len(seqs) == 0 || seqs[len(seqs)-1] != 3 || strings.Join(words, "") != "abc" {
			t.Fatalf("Read = %v %v, %v", seqs, words, err)
		}
		if h, err := l.Current(ctx, k); err != nil || h.Run != "r1" {
			t.Fatalf("Current = %+v, %v", h, err)
		}
	})
	t.Run("replay and follow", func(t *testing.T) {
		l, k := newLog(t), key()
		if _, err := l.Current(ctx, k); !errors.Is(err, runlog.ErrNoRun) {
			t.Fatalf("Current before Begin: %v, want ErrNoRun", err)
		}
		h := runlog.Header{Run: "r1", Protocol: "p", Base: 3, Continue: "m", Lock: "tok", Started: time.UnixMilli(1700000000000)}
		if err := l.Begin(ctx, k, h); err != nil {
			t.Fatal(err)
		}
		got, err := l.Current(ctx, k)
		if err != nil || !got.Started.Equal(h.Started) || got.Run != "r1" || got.Base != 3 || got.Continue != "m" || got.Lock != "tok" || got.Protocol != "p" {
			t.Fatalf("Current = %+v, %v; want %+v", got, err, h)
		}
		if es, err := l.Read(ctx, k, "r1", 0, time.Millisecond); err != nil || len(es) != 0 {
			t.Fatalf("Read of an empty log = %v, %v; want nothing", es, err)
		}
		if err := l.Append(ctx, k, "r1", texts(1, "a", "b")...); err != nil {
			t.Fatal(err)
		}
		es, err := l.Read(ctx, k, "r1", 0, time.Second)
		if seqs, words := deltas(t, es); err != nil || len(seqs) == 0 || seqs[len(seqs)-1] != 2 || strings.Join(words, "") != "ab" {
			t.Fatalf("Read all = %v %v, %v", seqs, words, err)
		}
		if err := l.Append(ctx, k, "r1", texts(3, "c")...); err != nil {
			t.Fatal(err)
		}
		// What a reader was given is never merged into what follows: a
		// reader that resumes after it gets the rest only.
		es, err = l.Read(ctx, k, "r1", 2, time.Second)
		if seqs, words := deltas(t, es); err != nil || len(seqs) != 1 || seqs[0] != 3 || words[0] != "c" {
			t.Fatalf("Read after 2 = %v %v, %v; want [3 c]", seqs, words, err)
		}
		// A reader waiting at the end gets what is appended next.
		type result struct {
			es  []runlog.Entry
			err error
		}
		waited := make(chan result, 1)
		go func() {
			es, err := l.Read(ctx, k, "r1", 3, 10*time.Second)
			waited <- result{es, err}
		}()
		if err := l.End(ctx, k, "r1", time.Minute, []runlog.Entry{runlog.FailedEntry(4, "boom"), {Seq: 5, Time: time.Now(), Type: runlog.TypeEnded}}); err != nil {
			t.Fatal(err)
		}
		r := <-waited
		if r.err != nil || len(r.es) == 0 || r.es[0].Seq != 4 || r.es[0].Type != runlog.TypeFailed || r.es[0].Failed() != "boom" {
			t.Fatalf("waiting Read = %+v, %v", r.es, r.err)
		}
		es, _ = l.Read(ctx, k, "r1", 4, time.Second)
		if len(es) != 1 || es[0].Type != runlog.TypeEnded || es[0].Event != nil {
			t.Fatalf("last entry = %+v, want run_ended", es)
		}
	})
	t.Run("wait ends empty", func(t *testing.T) {
		l, k := newLog(t), key()
		_ = l.Begin(ctx, k, runlog.Header{Run: "r"})
		es, err := l.Read(ctx, k, "r", 0, 20*time.Millisecond)
		if err != nil || len(es) != 0 {
			t.Fatalf("Read = %v, %v; want nothing after the wait", es, err)
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := l.Read(cctx, k, "r", 0, 10*time.Second); err == nil {
			t.Fatal("Read with a cancelled context: no error")
		}
	})
	t.Run("a new run replaces the log", func(t *testing.T) {
		l, k := newLog(t), key()
		// The chat's log is the new run's. (A log may keep a replaced
		// run's for its readers until it expires: runlog.Memory does.)
		_ = l.Begin(ctx, k, runlog.Header{Run: "old"})
		_ = l.Append(ctx, k, "old", texts(1, "x")...)
		_ = l.Begin(ctx, k, runlog.Header{Run: "new"})
		_ = l.Append(ctx, k, "old", texts(2, "late")...) // not the new run's
		if h, _ := l.Current(ctx, k); h.Run != "new" {
			t.Fatalf("Current = %q, want new", h.Run)
		}
		es, err := l.Read(ctx, k, "new", 0, time.Millisecond)
		if err != nil || len(es) != 0 {
			t.Fatalf("new run's log = %v, %v; want empty", es, err)
		}
	})
	t.Run("retention", func(t *testing.T) {
		l, k := newLog(t), key()
		_ = l.Begin(ctx, k, runlog.Header{Run: "r"})
		_ = l.Append(ctx, k, "r", texts(1, "x")...)
		if h, _ := l.Current(ctx, k); h.Ended {
			t.Fatal("Current says ended before End")
		}
		if err := l.End(ctx, k, "r", 300*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if h, err := l.Current(ctx, k); err == nil && !h.Ended {
			t.Fatal("Current after End: not ended")
		}
		eventually(t, "the ended log expires", func() bool {
			_, err := l.Current(ctx, k)
			return errors.Is(err, runlog.ErrNoRun)
		})
		eventually(t, "its entries expire", func() bool {
			_, err := l.Read(ctx, k, "r", 0, time.Millisecond)
			return errors.Is(err, runlog.ErrNoRun)
		})
	})
	t.Run("write a whole run", func(t *testing.T) {
		l, k := newLog(t), key()
		_ = l.Begin(ctx, k, runlog.Header{Run: "old"})
		entries := append(texts(1, "a", "b"), runlog.Entry{Seq: 3, Time: time.Now(), Type: runlog.TypeEnded})
		if err := l.Write(ctx, k, runlog.Header{Run: "r", Base: 2}, 300*time.Millisecond, entries); err != nil {
			t.Fatal(err)
		}
		if h, err := l.Current(ctx, k); err != nil || h.Run != "r" || h.Base != 2 || !h.Ended {
			t.Fatalf("Current = %+v, %v; want run r, ended", h, err)
		}
		es, err := l.Read(ctx, k, "r", 0, time.Second)
		if err != nil || len(es) != 3 || es[2].Type != runlog.TypeEnded {
			t.Fatalf("Read = %+v, %v", es, err)
		}
		if seqs, words := deltas(t, es[:2]); seqs[1] != 2 || words[1] != "b" {
			t.Fatalf("Read = %v %v", seqs, words)
		}
		eventually(t, "the written log expires", func() bool {
			_, err := l.Current(ctx, k)
			_, rerr := l.Read(ctx, k, "r", 0, time.Millisecond)
			return errors.Is(err, runlog.ErrNoRun) && errors.Is(rerr, runlog.ErrNoRun)
		})
	})
	t.Run("a cursor reads a long log in order", func(t *testing.T) {
		l, k := newLog(t), key()
		const n = 5000
		words := make([]string, n)
		for i := range words {
			words[i] = strconv.Itoa(i+1) + " "
		}
		if err := l.Begin(ctx, k, runlog.Header{Run: "r"}, texts(1, words[:700]...)...); err != nil {
			t.Fatal(err)
		}
		for i := 700; i < n; i += 700 {
			if err := l.Append(ctx, k, "r", texts(int64(i+1), words[i:min(i+700, n)]...)...); err != nil {
				t.Fatal(err)
			}
		}
		// The entries and delta events of a Next are the reader's until
		// the next: what it keeps, it copies.
		read := func(c runlog.Cursor, upTo int64) (seqs []int64, got []string) {
			t.Helper()
			for len(seqs) == 0 || seqs[len(seqs)-1] < upTo {
				es, err := c.Next(ctx, time.Second)
				if err != nil || len(es) == 0 {
					t.Fatalf("Next after %d of %d: %d entries, %v", len(seqs), upTo, len(es), err)
				}
				s, w := deltas(t, es)
				seqs, got = append(seqs, s...), append(got, w...)
			}
			return seqs, got
		}
		// A log may merge consecutive deltas into one entry numbered as
		// the last of them: the text from any point is exact, and the
		// numbers rise to the last.
		for _, from := range []int64{0, 1, 2500, 2501, 4999} {
			seqs, got := read(runlog.NewCursor(l, k, "r", from), n)
			for i := 1; i < len(seqs); i++ {
				if seqs[i] <= seqs[i-1] {
					t.Fatalf("from %d: entry %d numbered %d after %d", from, i, seqs[i], seqs[i-1])
				}
			}
			if want := strings.Join(words[from:], ""); strings.Join(got, "") != want || seqs[len(seqs)-1] != n {
				t.Fatalf("from %d: read %d bytes up to %d, want %d bytes up to %d", from, len(strings.Join(got, "")), seqs[len(seqs)-1], len(want), n)
			}
		}
		// At the end it waits for what comes next, and gets it.
		c := runlog.NewCursor(l, k, "r", n)
		if es, err := c.Next(ctx, 20*time.Millisecond); err != nil || len(es) != 0 {
			t.Fatalf("Next at the end: %d entries, %v; want none after the wait", len(es), err)
		}
		if err := l.End(ctx, k, "r", time.Minute, []runlog.Entry{{Seq: n + 1, Time: time.Now(), Type: runlog.TypeEnded}}); err != nil {
			t.Fatal(err)
		}
		if es, err := c.Next(ctx, time.Second); err != nil || len(es) != 1 || es[0].Type != runlog.TypeEnded {
			t.Fatalf("Next after the end: %+v, %v", es, err)
		}
		// Once another run began, the ended run has nothing more: its
		// log is gone (ErrNoRun), or kept for its readers and ended.
		_ = l.Begin(ctx, k, runlog.Header{Run: "next"})
		if es, err := c.Next(ctx, time.Millisecond); len(es) != 0 || err != nil && !errors.Is(err, runlog.ErrNoRun) {
			t.Fatalf("Next once another run began: %d entries, %v; want none", len(es), err)
		}
	})
	t.Run("notes reach every watcher", func(t *testing.T) {
		l, k := newLog(t), key()
		var a, b atomic.Int32
		steer := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: "Texas, please."}}}
		steer.SetID("s1")
		var steered atomic.Value
		stopA := l.Watch(func(n runlog.Note) {
			if n.Key == k && n.Run == "r" && n.Steer == nil {
				a.Add(1)
			}
		})
		stopB := l.Watch(func(n runlog.Note) {
			switch {
			case n.Key != k || n.Run != "r":
			case n.Steer == nil:
				b.Add(1)
			default:
				steered.Store(*n.Steer)
			}
		})
		if err := l.Notify(ctx, runlog.Note{Key: k, Run: "r"}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "both watchers hear the stop", func() bool { return a.Load() == 1 && b.Load() == 1 })
		stopA()
		_ = l.Notify(ctx, runlog.Note{Key: k, Run: "r"})
		eventually(t, "the remaining watcher hears the second stop", func() bool { return b.Load() == 2 })
		if err := l.Notify(ctx, runlog.Note{Key: k, Run: "r", Steer: &steer}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the watcher hears the steering message", func() bool { return steered.Load() != nil })
		if got := steered.Load().(cmf.Message); got.ID() != "s1" || got.Text() != "Texas, please." || got.Role != cmf.RoleUser {
			t.Fatalf("steering message arrived as %+v", got)
		}
		stopB()
		if a.Load() != 1 {
			t.Fatalf("a watcher heard a stop after it stopped watching")
		}
	})
}
