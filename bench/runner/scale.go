package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentui/agentui/bench/loadgen"
)

// SC, the scale runs: S1's long stream at 1, 8, 64 and 256 connections,
// agentui/Vercel next to the bare writers and, when the runner is given a
// base revision (-base), next to agentui as built from that revision: the
// side-by-side "before" of the target that batching by bytes adds no
// time to the first byte.

// scaleLevels are the connection counts SC runs at.
var scaleLevels = []int{1, 8, 64, 256}

// scaleResult is SC: one throughput result per connection count.
type scaleResult struct {
	base   string // the base revision, "" without one
	levels []tpResult
}

// buildBase builds cmd/agentui as it was at rev into dir/agentui-base.
func buildBase(ctx context.Context, repo, rev, dir string) (string, error) {
	src := filepath.Join(dir, "base-src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	archive := exec.CommandContext(ctx, "sh", "-c", `git -C "$0" archive "$1" | tar -x -C "$2"`, repo, rev, src)
	if out, err := archive.CombinedOutput(); err != nil {
		return "", fmt.Errorf("git archive %s: %v: %s", rev, err, out)
	}
	bin := filepath.Join(dir, "agentui-base")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/agentui")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building agentui at %s: %v: %s", rev, err, out)
	}
	return bin, nil
}

// baseContender is agentui/Vercel built from the base revision.
func baseContender(e *env) *contender {
	return &contender{key: "agentui-base", label: "agentui/Vercel at " + e.baseRev, proto: vercel, path: "/api/chat",
		launch: func(ctx context.Context, e *env) (*server, error) {
			return startAgentuiBin(ctx, e, "agentui (base)", e.base, "none")
		}}
}

// runScale runs SC over the live contenders it compares.
func runScale(ctx context.Context, st settings, e *env, live []*contender) scaleResult {
	out := scaleResult{base: e.baseRev}
	var cs []*contender
	for _, c := range live {
		if c.key == "agentui-vercel" || c.key == "barego" || c.key == "barego-batch" {
			cs = append(cs, c)
		}
	}
	if e.base != "" {
		b := baseContender(e)
		srv, err := b.launch(ctx, e)
		if err != nil {
			b.markFailed(err)
		} else {
			defer srv.stop()
			b.srv = srv
			client := loadgen.NewClient(1)
			if _, err := b.verify(client); err != nil {
				b.markFailed(fmt.Errorf("wrong reply to \"count to 3\": %w", err))
			}
			client.CloseIdleConnections()
		}
		if b.skip == "" {
			// Right after agentui, so each pair of rounds runs back to back.
			cs = append(cs[:1:1], append([]*contender{b}, cs[1:]...)...)
		}
	}
	sst := st
	sst.rounds, sst.duration = st.scRounds, st.scDuration
	for _, conc := range scaleLevels {
		if ctx.Err() != nil {
			break
		}
		out.levels = append(out.levels, runThroughput(ctx, sst, e, "SC", fmt.Sprintf("%d connections", conc), st.s1N, conc, cs))
	}
	return out
}

func (r *report) scaleSection(b *strings.Builder) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("### SC scale: N = %d deltas at 1, 8, 64 and 256 connections\n\n", r.st.s1N)
	base := ""
	if r.sc.base != "" {
		base = fmt.Sprintf("; agentui/Vercel at %s is the same binary built from that revision (the base, before the writer batched by bytes), run right after agentui in every round", r.sc.base)
	}
	p("%d rounds of %s per contender and level, interleaved; medians%s. Ratios are paired by round, median over the rounds.\n\n",
		r.st.scRounds, r.st.scDuration, base)
	p("| connections | contender | events/s | TTFB p50 | TTFB p99 | events/s ÷ agentui/Vercel | TTFB p50 ÷ agentui/Vercel | TTFB p99 ÷ agentui/Vercel |\n")
	p("|---:|---|---:|---:|---:|---:|---:|---:|\n")
	for _, lv := range r.sc.levels {
		ref := lv.rounds["agentui-vercel"]
		for _, key := range []string{"agentui-vercel", "agentui-base", "barego", "barego-batch"} {
			rounds := lv.rounds[key]
			if len(rounds) == 0 {
				continue
			}
			var eps, t50, t99 []float64
			for _, x := range rounds {
				eps = append(eps, x.res.EventsPerSec())
				t50 = append(t50, ttfbAt(50)(x.res))
				t99 = append(t99, ttfbAt(99)(x.res))
			}
			ratio := func(f func(loadgen.Result) float64) string {
				if key == "agentui-vercel" {
					return "—"
				}
				x, ok := paired(rounds, ref, f, ratioOf)
				if !ok {
					return "—"
				}
				return fmt.Sprintf("%.2f×", x)
			}
			p("| %d | %s | %s | %s | %s | %s | %s | %s |\n", lv.conc, r.label(key), group(median(eps)),
				ms(time.Duration(median(t50))), ms(time.Duration(median(t99))), ratio(eventsPerSec), ratio(ttfbAt(50)), ratio(ttfbAt(99)))
		}
	}
	p("\n")
}

// label is a contender's name in the report.
func (r *report) label(key string) string {
	if key == "agentui-base" {
		return "agentui/Vercel at " + r.sc.base
	}
	for _, c := range r.cs {
		if c.key == key {
			return c.label
		}
	}
	return key
}

// scaleTarget is SC's target: time to first byte at one connection no
// worse than at the base revision (base ÷ agentui ≥ 1 means agentui is
// at least as fast), p50 and p99.
func (r *report) scaleTarget() target {
	t := target{name: "SC: TTFB at 1 connection no worse than the base revision (p50, p99)", scenario: "SC", measured: "—", verdict: "not run"}
	if r.sc == nil || len(r.sc.levels) == 0 {
		return t
	}
	if r.sc.base == "" {
		t.verdict = "not run: no -base revision"
		return t
	}
	lv := r.sc.levels[0]
	a, b := lv.rounds["agentui-vercel"], lv.rounds["agentui-base"]
	x50, ok1 := paired(a, b, ttfbAt(50), ratioOf)
	x99, ok2 := paired(a, b, ttfbAt(99), ratioOf)
	if !ok1 || !ok2 {
		t.verdict = "no measurement"
		return t
	}
	t.measured = fmt.Sprintf("agentui ÷ %s: p50 %.2f×, p99 %.2f× (paired by round)", r.sc.base, x50, x99)
	t.verdict = verdict(x50 <= 1 && x99 <= 1)
	return t
}
