package redisstore

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/runlog"
	goredis "github.com/redis/go-redis/v9"
)

// FuzzDecodeEntries: whatever a run-log stream entry holds, decoding it
// never panics, and decoding it in chunks gives what decoding it whole
// does; what encodeBatch writes decodes to the same entries.
func FuzzDecodeEntries(f *testing.F) {
	good, _ := encodeBatch([]runlog.Entry{
		{Seq: 1, Time: time.UnixMilli(5), Event: &agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: "a \"b\"\n"}},
		{Seq: 2, Time: time.UnixMilli(5), Event: &agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: "c"}},
		{Seq: 3, Time: time.UnixMilli(6), Event: &agent.PartDelta{Kind: agent.PartThinking, ID: "t", Delta: "d"}},
		runlog.FailedEntry(4, "boom"),
		{Seq: 5, Time: time.UnixMilli(5), Type: runlog.TypeEnded},
	})
	f.Add(string(good), int64(0))
	f.Add(string(good), int64(2))
	f.Add("1 2 part_delta {\"Kind\":1}\n", int64(0))
	f.Add("x y z\n", int64(0))
	f.Add("1 = + \"a\"\n", int64(0))
	f.Add("1 2 + \"a\"\n", int64(0))
	f.Add("1 2 part_delta {\"Kind\":1,\"ID\":\"t\",\"Delta\":\"a\"}\n2 = + \"b\"\n3 = + \"\\u00e9\"\n", int64(1))
	f.Add("-1 2 run_ended \n", int64(-5))
	f.Add(string(good)+"\x1e6 7 part_delta {\"Kind\":1,\"ID\":\"u\",\"Delta\":\"e\"}\n7 = + \"f\"\n\x1e8 = + \"g\"\n", int64(3))
	f.Fuzz(func(t *testing.T, page string, after int64) {
		// A page of stream entries, split at \x1e: each starts afresh
		// (its first time in full, its first delta of a part in full).
		var msgs []goredis.XMessage
		for _, batch := range strings.Split(page, "\x1e") {
			msgs = append(msgs, goredis.XMessage{ID: "0-9", Values: map[string]any{"b": batch}})
		}
		es, err := decodeEntries(msgs, after)
		if err != nil {
			return
		}
		// In chunks, each into the memory of the one before: the same
		// entries.
		for _, n := range []int{1, 2, 7} {
			var d entryDecoder
			d.reset(msgs, after)
			chunk := make([]runlog.Entry, n+1)
			for i := range chunk {
				chunk[i] = runlog.Entry{Seq: -1, Type: "stale", Data: []byte("{}"), Event: &agent.PartDelta{ID: "stale"}}
			}
			deltas := []agent.PartDelta{{ID: "stale"}, {ID: "stale"}}
			var got []runlog.Entry
			for !d.done() {
				c, ds, err := d.decode(chunk, deltas, n)
				if err != nil || len(c) > n {
					t.Fatalf("chunks of %d: %d entries, %v", n, len(c), err)
				}
				for _, e := range c { // copied: the next chunk reuses the events
					if p, ok := e.Event.(*agent.PartDelta); ok {
						cp := *p
						e.Event = &cp
					}
					got = append(got, e)
				}
				chunk, deltas = c, ds
			}
			if len(got) != len(es) || len(es) > 0 && !reflect.DeepEqual(got, es) {
				t.Fatalf("in chunks of %d: %+v; whole %+v", n, got, es)
			}
		}
		for _, e := range es {
			if e.Seq <= after {
				t.Fatalf("entry %d returned after %d", e.Seq, after)
			}
		}
		if len(msgs) > 1 {
			return // encodeBatch writes one stream entry
		}
		again, err := encodeBatch(es)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		back, err := decodeEntries([]goredis.XMessage{{ID: "0-9", Values: map[string]any{"b": string(again)}}}, after)
		if err != nil || len(back) != len(es) {
			t.Fatalf("re-decode: %v (%d of %d)", err, len(back), len(es))
		}
		for i := range es {
			if back[i].Seq != es[i].Seq || back[i].Type != es[i].Type || !reflect.DeepEqual(back[i].Event, es[i].Event) {
				t.Fatalf("entry %d changed: %+v then %+v", i, es[i], back[i])
			}
		}
	})
}

// encodeBatch writes entries as one stream entry's b field, as the
// appends do.
func encodeBatch(entries []runlog.Entry) ([]byte, error) {
	w := batchWriter{b: make([]byte, 0, 64*len(entries)), now: time.Now().UnixMilli()}
	for i := range entries {
		if err := w.add(&entries[i]); err != nil {
			return nil, err
		}
	}
	return w.b, nil
}

// FuzzDecodeNote: a note read from the notes' channels is a stop (no
// message) on the stop channel or a steer (a valid user message) on the
// steer channel, and never panics; what is accepted round-trips.
func FuzzDecodeNote(f *testing.F) {
	f.Add(`{"scope":"s","chat":"c","run":"r"}`, false)
	f.Add(`{"scope":"s","chat":"c","run":"r","steer":{"schema_version":"`+cmf.SchemaVersion+`","role":"user","content":[{"content_type":"text","text":"Texas"}]}}`, true)
	f.Add(`{"scope":"s","chat":"c","run":"r","steer":{"role":"assistant"}}`, true)
	f.Add(`{"run":""}`, false)
	f.Add(`[1,2]`, true)
	f.Fuzz(func(t *testing.T, payload string, steer bool) {
		n, ok := decodeNote(payload, steer)
		if !ok {
			return
		}
		if n.Run == "" || steer != (n.Steer != nil) || steer && n.Steer.Role != cmf.RoleUser {
			t.Fatalf("accepted %+v from %q (steer channel %v)", n, payload, steer)
		}
		b, err := json.Marshal(note{Scope: n.Key.Scope, Chat: n.Key.Chat, Run: n.Run, Steer: n.Steer})
		if err != nil {
			t.Fatal(err)
		}
		again, ok := decodeNote(string(b), steer)
		if !ok || again.Key != n.Key || again.Run != n.Run {
			t.Fatalf("a decoded note does not round-trip: %s", b)
		}
	})
}
