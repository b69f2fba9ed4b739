package redisstore

import (
	"reflect"
	"testing"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/runlog"
	goredis "github.com/redis/go-redis/v9"
)

// FuzzDecodeEntries: whatever a run-log stream entry holds, decoding it
// never panics; what encodeBatch writes decodes to the same entries.
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
	f.Fuzz(func(t *testing.T, batch string, after int64) {
		msgs := []goredis.XMessage{{ID: "0-9", Values: map[string]any{"b": batch}}}
		es, err := decodeEntries(msgs, after)
		if err != nil {
			return
		}
		for _, e := range es {
			if e.Seq <= after {
				t.Fatalf("entry %d returned after %d", e.Seq, after)
			}
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
