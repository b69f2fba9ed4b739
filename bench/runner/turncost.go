package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// The turn-cost scenario (TC) runs uiadapter's BenchmarkTurnCost: one
// whole turn (lock, load, merge, run the demo model, save, unlock) on a
// stored chat of 10 to 5,000 messages, on the memory store and on Redis,
// each op a request whose client sends only its new message. It measures
// that a turn costs what it adds, not what the chat holds.

// tcResult holds every run of every sub-benchmark, by name
// ("memory/2000").
type tcResult struct {
	runs  map[string][]tcRun
	order []string
	skip  string
	fail  bool
}

type tcRun struct {
	nsOp, cpuOp, bytesOp, allocsOp float64
}

var tcLine = regexp.MustCompile(`^BenchmarkTurnCost/(\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// runTurnCost runs the Go benchmark count times (interleaving is go
// test's: each sub-benchmark runs count times in a row).
func runTurnCost(ctx context.Context, st settings, e *env) tcResult {
	res := tcResult{runs: map[string][]tcRun{}}
	args := []string{"test", "-run", "^$", "-bench", "^BenchmarkTurnCost$", "-benchmem",
		"-count", strconv.Itoa(st.tcCount), "-benchtime", st.tcBenchtime, "./uiadapter"}
	logf("TC: go %s", strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = e.repo
	cmd.Env = os.Environ()
	if strings.HasPrefix(e.s4History, "redis://") {
		cmd.Env = append(cmd.Env, "REDIS_URL="+e.s4History)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		res.skip, res.fail = fmt.Sprintf("go test failed: %v: %s", err, lastLines(out.String(), 5)), true
		return res
	}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		m := tcLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		var r tcRun
		f := strings.Fields(m[2])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			switch f[i+1] {
			case "ns/op":
				r.nsOp = v
			case "cpu-ns/op":
				r.cpuOp = v
			case "B/op":
				r.bytesOp = v
			case "allocs/op":
				r.allocsOp = v
			}
		}
		if _, seen := res.runs[m[1]]; !seen {
			res.order = append(res.order, m[1])
		}
		res.runs[m[1]] = append(res.runs[m[1]], r)
	}
	if len(res.runs) == 0 {
		res.skip, res.fail = "no BenchmarkTurnCost results in the output: "+lastLines(out.String(), 5), true
	}
	return res
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " / ")
}

// tcMedian is the median of one measure of a sub-benchmark's runs.
func (r *tcResult) median(name string, f func(tcRun) float64) (float64, bool) {
	runs := r.runs[name]
	if len(runs) == 0 {
		return 0, false
	}
	v := make([]float64, len(runs))
	for i, x := range runs {
		v[i] = f(x)
	}
	return median(v), true
}

// ratio is the median CPU per turn at n messages over that at 10, for a
// store.
func (r *tcResult) ratio(store string, n int) (float64, bool) {
	a, ok1 := r.median(fmt.Sprintf("%s/%d", store, n), func(x tcRun) float64 { return x.cpuOp })
	b, ok2 := r.median(store+"/10", func(x tcRun) float64 { return x.cpuOp })
	if !ok1 || !ok2 || b == 0 {
		return 0, false
	}
	return a / b, true
}

func (r *report) tcSection(b *strings.Builder) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("### TC turn cost by conversation length\n\n")
	if r.tc.skip != "" {
		p("Not measured: %s\n\n", r.tc.skip)
		return
	}
	p("`go test -run '^$' -bench '^BenchmarkTurnCost$' -benchmem -count %d -benchtime %s ./uiadapter`: one whole turn "+
		"(lock, load, merge, store the user message, run the demo model, stream, save, unlock) on a stored chat of n messages; "+
		"the client sends only its new message. CPU is the process's user + system time per turn (GC included); "+
		"wall time on Redis also counts its round trips. Medians of %d runs; the ratio is CPU per turn over that at 10 messages.\n\n",
		r.st.tcCount, r.st.tcBenchtime, r.st.tcCount)
	p("| store / stored messages | CPU per turn | wall per turn | bytes per turn | allocations per turn | CPU vs 10 |\n|---|---:|---:|---:|---:|---:|\n")
	for _, name := range r.tc.order {
		med := func(f func(tcRun) float64) float64 { v, _ := r.tc.median(name, f); return v }
		store, n, _ := strings.Cut(name, "/")
		size, _ := strconv.Atoi(n)
		x, _ := r.tc.ratio(store, size)
		p("| %s / %s | %.0f µs | %.0f µs | %s | %.0f | %.2f× |\n", store, group(float64(size)),
			med(func(x tcRun) float64 { return x.cpuOp })/1e3, med(func(x tcRun) float64 { return x.nsOp })/1e3,
			group(med(func(x tcRun) float64 { return x.bytesOp })), med(func(x tcRun) float64 { return x.allocsOp }), x)
	}
	p("\n")
}

// tcTargets: CPU per turn at 2,000 messages at most 1.5× that at 10, on
// each store.
func (r *report) tcTargets() []target {
	var out []target
	for _, store := range []string{"memory", "redis"} {
		t := target{name: "TC: CPU per turn at 2,000 stored messages ≤ 1.5× at 10 (" + store + ")", scenario: "TC", measured: "—", verdict: "not run"}
		switch {
		case r.tc == nil:
		case r.tc.skip != "":
			t.verdict = "failed: " + r.tc.skip
		default:
			if x, ok := r.tc.ratio(store, 2000); ok {
				t.measured, t.verdict = fmt.Sprintf("%.2f×", x), verdict(x <= 1.5)
			} else {
				t.verdict = "no measurement"
			}
		}
		out = append(out, t)
	}
	return out
}
