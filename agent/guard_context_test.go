package agent

import (
	"context"
	"testing"

	"github.com/agentui/agentui/cmf"
)

// A guard's check message carries the run's context extensions under the
// id of the message being checked; giving it that id must not write the id
// into the context every other check and message of the run shares.
func TestGuardCheckLeavesTheRunContextUnchanged(t *testing.T) {
	weather := concat(toolCall("c1", "get_weather", `{"city":"Oslo"}`), []Chunk{finish(cmf.StopCall)})
	m := &scripted{replies: []reply{{chunks: weather}, {chunks: text("ok")}}}
	pass := func(*Check) (Verdict, error) { return Verdict{}, nil }
	g := &funcGuard{at: map[Point]func(*Check) (Verdict, error){PointPreTool: pass, PointOutput: pass}}
	ctx := &cmf.Extensions{Request: &cmf.RequestExtension{RequestID: "req-1"}}
	in := &Input{Messages: []cmf.Message{userMsg("w")}, Guard: g, Extensions: ctx}
	if _, err := collect(t, newLoop(t, m, nil), context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if len(g.seen(PointPreTool)) == 0 || len(g.seen(PointOutput)) == 0 {
		t.Fatal("the guard was not asked")
	}
	if ctx.Provenance != nil {
		t.Fatalf("a check wrote its message id into the run's context: %+v", ctx.Provenance)
	}
}
