// Command runner is agentui's benchmark harness. It builds agentui and the
// bare Go contender, starts every contender's server (agentui over the
// Vercel UI message stream and over AG-UI, a bare net/http handler, the
// Vercel AI SDK on Node, and @ag-ui/encoder on Node), checks that each
// answers "count to 3" with the expected frames, runs the scenarios with
// the contenders interleaved round by round, and writes the medians as
// Markdown.
//
// `make bench` runs it in full and rewrites the results in
// docs/benchmarks.md; `make bench-smoke` runs it with tiny sizes so CI
// notices when the harness breaks. See docs/benchmarks.md for the
// scenarios and what they mean.
//
// Usage (from the repository root, after `npm ci` in bench/node-ai and
// bench/node-agui):
//
//	go run ./bench/runner [-smoke] [-out docs/benchmarks.md] [-scenarios S1,S2,S3,S4] [-contenders key,…]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agentui/agentui/bench/loadgen"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	started := time.Now()
	smoke := flag.Bool("smoke", false, "tiny sizes: check that the harness works (CI), not a measurement")
	out := flag.String("out", "", "Markdown file whose generated section to rewrite (docs/benchmarks.md); stdout only when empty")
	command := flag.String("command", "", "the command to record in the report (default: this program's command line)")
	repo := flag.String("repo", ".", "repository root")
	node := flag.String("node", "node", "Node.js binary")
	history := flag.String("history", "redis://127.0.0.1:6379/0", "the agentui -history value S4 compares with -history none (a redis:// URL, or memory)")
	scenarios := flag.String("scenarios", "S1,S2,SC,S3,S4,TC", "scenarios to run")
	base := flag.String("base", "", "a git revision to build agentui from as well, for SC's before-and-after (make bench: the commit before the writer batched by bytes)")
	only := flag.String("contenders", "", "comma-separated contender keys to run (default all): agentui-vercel, agentui-agui, barego, barego-batch, barego-batch-agui, peer-agui-go, node-ai, node-agui")
	rounds := flag.Int("rounds", 0, "override the number of S1/S2 rounds")
	duration := flag.Duration("duration", 0, "override the length of an S1/S2 round")
	scRounds := flag.Int("sc-rounds", 0, "override the number of SC rounds (a p99 at one connection needs more than the default 3)")
	s3Streams := flag.Int("s3-streams", 0, "override the number of S3's idle streams (5000)")
	s3History := flag.String("s3-history", "", "override agentui's -history in S3 (memory, the binary's default)")
	flag.Parse()
	logf = func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
	}

	st := fullSettings()
	if *smoke {
		st = smokeSettings()
	}
	if *rounds > 0 {
		st.rounds = *rounds
	}
	if *duration > 0 {
		st.duration = *duration
	}
	if *scRounds > 0 {
		st.scRounds = *scRounds
	}
	if *s3Streams > 0 {
		st.s3Streams = *s3Streams
	}
	if *s3History != "" {
		st.s3History = *s3History
	}
	if *command == "" {
		*command = "go run ./bench/runner " + strings.Join(os.Args[1:], " ")
	}
	want := func(s string) bool { return slices.Contains(strings.Split(*scenarios, ","), s) }

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	lim, err := loadgen.RaiseFileLimit()
	if err != nil {
		return fmt.Errorf("raising RLIMIT_NOFILE: %w", err)
	}
	if want("S3") && lim < uint64(st.s3Streams)+1000 {
		logf("warning: RLIMIT_NOFILE is %d; S3's %d streams may fail", lim, st.s3Streams)
	}
	root, err := filepath.Abs(*repo)
	if err != nil {
		return err
	}
	// The directory's name avoids "agentui", so that nothing which looks
	// for agentui processes by name (a test's cleanup, say) kills the
	// other contenders; the agentui binary itself keeps its name.
	tmp, err := os.MkdirTemp("", "contenders-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	e := &env{repo: root, node: *node, fileLim: lim, s4History: *history,
		agentui: filepath.Join(tmp, "agentui"), barego: filepath.Join(tmp, "barego"), peers: filepath.Join(tmp, "peers")}
	for _, b := range []struct{ out, dir, pkg string }{{e.agentui, "", "./cmd/agentui"}, {e.barego, "", "./bench/barego"}, {e.peers, "bench/peers", "."}} {
		logf("go build -o %s %s", b.out, filepath.Join(b.dir, b.pkg))
		cmd := exec.CommandContext(ctx, "go", "build", "-o", b.out, b.pkg)
		cmd.Dir, cmd.Stdout, cmd.Stderr = filepath.Join(root, b.dir), os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building %s: %w", b.pkg, err)
		}
	}
	if *base != "" && want("SC") {
		logf("building agentui at %s", *base)
		if e.base, err = buildBase(ctx, root, *base, tmp); err != nil {
			return err
		}
		e.baseRev = *base
	}
	for _, dir := range []string{"bench/node-ai", "bench/node-agui"} {
		if _, err := os.Stat(filepath.Join(root, dir, "node_modules")); err != nil {
			return fmt.Errorf("%s/node_modules is missing: run `npm ci` there (make bench does)", dir)
		}
	}

	cs := allContenders()
	if *only != "" {
		keys := strings.Split(*only, ",")
		cs = slices.DeleteFunc(cs, func(c *contender) bool { return !slices.Contains(keys, c.key) })
	}
	defer func() {
		for _, c := range cs {
			c.srv.stop()
		}
	}()
	verifyClient := loadgen.NewClient(1)
	for _, c := range cs {
		srv, err := c.launch(ctx, e)
		if err != nil {
			c.markFailed(err)
			continue
		}
		c.srv = srv
		skip, err := c.verify(verifyClient)
		switch {
		case err != nil:
			c.markFailed(fmt.Errorf("wrong reply to \"count to 3\": %w", err))
		case skip != "":
			c.skip = "skipped: " + skip
			logf("%s: %s", c.label, c.skip)
		default:
			logf("%s: listening on %s (pid %d), reply verified", c.label, srv.addr, srv.pid())
		}
		if c.skip != "" {
			srv.stop()
		}
	}
	verifyClient.CloseIdleConnections()
	live := func() []*contender {
		return slices.DeleteFunc(slices.Clone(cs), func(c *contender) bool { return c.skip != "" })
	}

	rep := &report{started: started, command: *command, st: st, sys: collectSysInfo(e), fileLim: lim, cs: cs}
	if want("S1") {
		r := runThroughput(ctx, st, e, "S1", fmt.Sprintf("N = %d deltas, %d concurrent clients", st.s1N, st.s1Conc), st.s1N, st.s1Conc, live())
		rep.s1 = &r
	}
	notS1Only := func() []*contender {
		return slices.DeleteFunc(live(), func(c *contender) bool { return c.s1Only != "" })
	}
	if want("S2") {
		r := runThroughput(ctx, st, e, "S2", fmt.Sprintf("N = %d deltas, %d concurrent clients", st.s2N, st.s2Conc), st.s2N, st.s2Conc, notS1Only())
		rep.s2 = &r
	}
	if want("SC") && ctx.Err() == nil {
		r := runScale(ctx, st, e, notS1Only())
		rep.sc = &r
	}
	// The long-lived servers are not needed any more; S3 and S4 start
	// their own, and idle ones would only take memory.
	for _, c := range cs {
		c.srv.stop()
	}
	if want("S3") && ctx.Err() == nil {
		var idle []*contender
		for _, c := range cs {
			if c.idle && c.skip == "" {
				idle = append(idle, c)
			}
		}
		if len(idle) > 0 {
			r := runIdle(ctx, st, e, idle)
			rep.s3 = &r
		}
	}
	// S4 runs several times over, each with fresh servers and
	// conversations: its target is about p99, which one run can get
	// wrong either way.
	for i := range st.s4Runs {
		if !want("S4") || ctx.Err() != nil {
			break
		}
		r := runHistory(ctx, st, e)
		if r.skip != "" {
			logf("S4: %s", r.skip)
		}
		rep.s4 = append(rep.s4, &r)
		if r.skip != "" {
			break
		}
		logf("S4 run %d/%d done", i+1, st.s4Runs)
	}
	if want("TC") && ctx.Err() == nil {
		r := runTurnCost(ctx, st, e)
		if r.skip != "" {
			logf("TC: %s", r.skip)
		}
		rep.tc = &r
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted: %w", err)
	}
	rep.wall = time.Since(started)
	md := rep.markdown()
	fmt.Print(md)
	if *out != "" {
		if err := writeDoc(*out, md); err != nil {
			return err
		}
		logf("wrote %s", *out)
	}
	logf("done in %s", rep.wall.Round(time.Second))
	return rep.failures(*smoke)
}

// failures turns what went wrong into the exit status: a contender that
// failed (not one skipped for a known gap) always fails the run, and in
// smoke mode so does any request error, because smoke runs exist to catch
// a broken harness.
func (r *report) failures(smoke bool) error {
	var errs []error
	for _, c := range r.cs {
		if c.fail {
			errs = append(errs, fmt.Errorf("%s %s", c.label, c.skip))
		}
	}
	for _, s4 := range r.s4 {
		if s4.fail {
			errs = append(errs, fmt.Errorf("S4: %s", s4.skip))
		}
	}
	if r.tc != nil && r.tc.fail {
		errs = append(errs, fmt.Errorf("TC: %s", r.tc.skip))
	}
	if r.s3 != nil {
		for key, rounds := range r.s3.rounds {
			for _, x := range rounds {
				if x.err != nil {
					errs = append(errs, fmt.Errorf("S3 %s: %w", key, x.err))
				}
			}
		}
	}
	if smoke {
		for _, res := range []*tpResult{r.s1, r.s2} {
			if res == nil {
				continue
			}
			for key, rounds := range res.rounds {
				for _, tr := range rounds {
					if tr.res.Errors > 0 {
						errs = append(errs, fmt.Errorf("%s %s: %d errors, first: %w", res.id, key, tr.res.Errors, tr.res.FirstErr))
					}
				}
			}
		}
		if r.s3 != nil {
			for key, rounds := range r.s3.rounds {
				for _, x := range rounds {
					if x.res.Errors > 0 {
						errs = append(errs, fmt.Errorf("S3 %s: %d errors, first: %w", key, x.res.Errors, x.res.FirstErr))
					}
				}
			}
		}
		for _, s4 := range r.s4 {
			for mode, rounds := range s4.rounds {
				for _, x := range rounds {
					if x.res.Errors > 0 {
						errs = append(errs, fmt.Errorf("S4 history %s: %d errors, first: %w", mode, x.res.Errors, x.res.FirstErr))
					}
				}
			}
		}
	}
	return errors.Join(errs...)
}
