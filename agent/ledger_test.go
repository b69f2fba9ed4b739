package agent

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/agentui/agentui/cmf"
)

// memLedger is a Ledger in a map, as a store keeps one.
type memLedger struct {
	mu       sync.Mutex
	recs     map[string]LedgerRecord
	begins   int
	finishes int
	fail     error // Begin fails with it
}

func (l *memLedger) Begin(_ context.Context, call ToolCall) (LedgerRecord, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.begins++
	if l.fail != nil {
		return LedgerRecord{}, false, l.fail
	}
	if r, ok := l.recs[call.ID]; ok {
		return r, true, nil
	}
	l.recs[call.ID] = LedgerRecord{}
	return LedgerRecord{}, false, nil
}

func (l *memLedger) Finish(_ context.Context, call ToolCall, r LedgerRecord) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.finishes++
	l.recs[call.ID] = r
	return nil
}

// countingTool counts its runs and the idempotency keys it was given.
func countingTool(name string, idempotent bool, runs *int, keys *[]string) Tool {
	t := FuncTool(name, "Counts.", func(ctx context.Context, _ struct{}) (map[string]int, error) {
		*runs++
		*keys = append(*keys, IdempotencyKey(ctx))
		return map[string]int{"run": *runs}, nil
	})
	t.Idempotent = idempotent
	return t
}

// One call, attempted as a retried run would: the ledger decides whether
// the tool runs again.
func TestLedgerDecidesWhetherACallRunsAgain(t *testing.T) {
	chat := WithRunInfo(context.Background(), RunInfo{Scope: "alice", ChatID: "c1"})
	attempt := func(l *memLedger, tool Tool) *ToolResult {
		t.Helper()
		m := &scripted{replies: []reply{{chunks: concat(toolCall("call-1", tool.Name, `{}`), []Chunk{finish(cmf.StopCall)})}, {chunks: text("done")}}}
		loop, err := New(m, WithTools(tool))
		if err != nil {
			t.Fatal(err)
		}
		events, err := collect(t, loop, chat, &Input{Messages: []cmf.Message{userMsg("go")}, Ledger: l})
		if err != nil {
			t.Fatal(err)
		}
		return all[*ToolResult](events)[0]
	}
	for _, c := range []struct {
		name       string
		had        *LedgerRecord // what the ledger holds for the call before the attempt
		idempotent bool
		runs       int
		want       string
	}{
		{"a new call runs and is recorded", nil, false, 1, `{"run":1}`},
		{"a finished call returns its recorded result", &LedgerRecord{Finished: true, Output: json.RawMessage(`{"run":7}`)}, false, 0, `{"run":7}`},
		{"a finished call's recorded error stands", &LedgerRecord{Finished: true, Output: json.RawMessage(`"disk full"`), IsError: true}, true, 0, `"disk full"`},
		{"an interrupted at-most-once call does not run again", &LedgerRecord{}, false, 0, mustJSON(OutcomeUnknown)},
		{"an interrupted idempotent call runs again", &LedgerRecord{}, true, 1, `{"run":1}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := &memLedger{recs: map[string]LedgerRecord{}}
			if c.had != nil {
				l.recs["call-1"] = *c.had
			}
			runs, keys := 0, []string{}
			res := attempt(l, countingTool("act", c.idempotent, &runs, &keys))
			if runs != c.runs || string(res.Output) != c.want {
				t.Fatalf("%d runs, result %s; want %d runs, %s", runs, res.Output, c.runs, c.want)
			}
			if c.runs > 0 && (l.finishes != 1 || !l.recs["call-1"].Finished || string(l.recs["call-1"].Output) != c.want) {
				t.Fatalf("the record after the run: %+v (%d finishes)", l.recs["call-1"], l.finishes)
			}
		})
	}
	// The key is the same for every attempt at a call, and another
	// call's or another chat's differs.
	runs, keys := 0, []string{}
	tool := countingTool("act", true, &runs, &keys)
	attempt(&memLedger{recs: map[string]LedgerRecord{}}, tool)
	attempt(&memLedger{recs: map[string]LedgerRecord{"call-1": {}}}, tool)
	other := idempotencyKey(WithRunInfo(context.Background(), RunInfo{Scope: "bob", ChatID: "c1"}), "call-1")
	if len(keys) != 2 || keys[0] == "" || keys[0] != keys[1] || keys[0] == other || keys[0] == idempotencyKey(chat, "call-2") {
		t.Fatalf("idempotency keys %v (bob's %s)", keys, other)
	}
}

// A ledger that cannot record the call's start keeps the tool from
// running: an effect with no record is what the ledger exists to prevent.
func TestLedgerThatFailsRunsNothing(t *testing.T) {
	l := &memLedger{recs: map[string]LedgerRecord{}, fail: errors.New("store down")}
	runs, keys := 0, []string{}
	m := &scripted{replies: []reply{{chunks: concat(toolCall("call-1", "act", `{}`), []Chunk{finish(cmf.StopCall)})}, {chunks: text("done")}}}
	loop, err := New(m, WithTools(countingTool("act", true, &runs, &keys)))
	if err != nil {
		t.Fatal(err)
	}
	events, err := collect(t, loop, context.Background(), &Input{Messages: []cmf.Message{userMsg("go")}, Ledger: l})
	if err != nil {
		t.Fatal(err)
	}
	res := all[*ToolResult](events)[0]
	if runs != 0 || !res.IsError || res.ErrorText() != "The tool call was not run: it could not be recorded first." {
		t.Fatalf("%d runs, %s", runs, res.Output)
	}
}

// A call cut by a stop is not recorded as finished: a later attempt
// knows its outcome is unknown.
func TestLedgerLeavesAStoppedCallStarted(t *testing.T) {
	l := &memLedger{recs: map[string]LedgerRecord{}}
	started := make(chan struct{})
	slow := FuncTool("slow", "Blocks.", func(ctx context.Context, _ struct{}) (string, error) {
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	})
	m := &scripted{replies: []reply{{chunks: concat(toolCall("call-1", "slow", `{}`), []Chunk{finish(cmf.StopCall)})}}}
	loop, err := New(m, WithTools(slow))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	if _, err := collect(t, loop, ctx, &Input{Messages: []cmf.Message{userMsg("go")}, Ledger: l}); err != nil {
		t.Fatal(err)
	}
	if r, ok := l.recs["call-1"]; !ok || r.Finished || l.finishes != 0 {
		t.Fatalf("the stopped call's record: %+v, %v (%d finishes)", r, ok, l.finishes)
	}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
