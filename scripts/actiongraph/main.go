// Command actiongraph sums the compile time of a `go build
// -debug-actiongraph` file per module: where a cold build's time goes.
//
//	go run ./scripts/actiongraph ag.json modules.txt
//
// modules.txt maps each package to its module, one "import/path module"
// pair a line (go list -deps -f '{{.ImportPath}} {{with .Module}}{{.Path}}{{else}}std{{end}}').
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

type action struct {
	Mode, Package       string
	TimeStart, TimeDone time.Time
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: actiongraph ag.json modules.txt")
		os.Exit(2)
	}
	var actions []action
	data, err := os.ReadFile(os.Args[1])
	if err == nil {
		err = json.Unmarshal(data, &actions)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "actiongraph:", err)
		os.Exit(1)
	}
	modules := map[string]string{}
	f, err := os.Open(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "actiongraph:", err)
		os.Exit(1)
	}
	for s := bufio.NewScanner(f); s.Scan(); {
		if pkg, mod, ok := strings.Cut(s.Text(), " "); ok {
			modules[pkg] = mod
		}
	}
	type sum struct {
		module   string
		d        time.Duration
		packages int
	}
	by := map[string]*sum{}
	var total time.Duration
	var first, last time.Time
	for _, a := range actions {
		if a.TimeStart.IsZero() || a.TimeDone.IsZero() {
			continue
		}
		if first.IsZero() || a.TimeStart.Before(first) {
			first = a.TimeStart
		}
		if a.TimeDone.After(last) {
			last = a.TimeDone
		}
		if a.Mode != "build" {
			continue
		}
		m := cmp.Or(modules[a.Package], "?")
		if by[m] == nil {
			by[m] = &sum{module: m}
		}
		d := a.TimeDone.Sub(a.TimeStart)
		by[m].d += d
		by[m].packages++
		total += d
	}
	rows := make([]*sum, 0, len(by))
	for _, s := range by {
		rows = append(rows, s)
	}
	slices.SortFunc(rows, func(a, b *sum) int { return cmp.Compare(b.d, a.d) })
	fmt.Printf("wall %.0f s; compile actions %.0f s in all (they overlap on several cores)\n", last.Sub(first).Seconds(), total.Seconds())
	for _, r := range rows {
		fmt.Printf("%7.1f s %5.1f%% %4d packages  %s\n", r.d.Seconds(), 100*r.d.Seconds()/total.Seconds(), r.packages, r.module)
	}
}
