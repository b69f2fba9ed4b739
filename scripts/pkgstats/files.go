package main

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// fileGraph prints the file-to-file imports of one package and those of
// them that run back up (see the package comment).
func fileGraph(dir string, fset *token.FileSet, files map[string]*ast.File) {
	var list []*ast.File
	for _, f := range files {
		list = append(list, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil), Error: func(error) {}}
	pkg, _ := conf.Check(dir, fset, list, info)
	fileOf := func(pos token.Pos) string { return filepath.Base(fset.Position(pos).Filename) }
	edges := map[[2]string]bool{}
	add := func(use *ast.Ident, obj types.Object) {
		if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
			return
		}
		if _, local := obj.(*types.Var); local && obj.Parent() != pkg.Scope() && !obj.(*types.Var).IsField() {
			return
		}
		if obj.Parent() != nil && obj.Parent() != pkg.Scope() && obj.Parent() != types.Universe {
			return // declared inside a function
		}
		from, to := fileOf(use.Pos()), fileOf(obj.Pos())
		if from != to {
			edges[[2]string{from, to}] = true
		}
	}
	for id, obj := range info.Uses {
		add(id, obj)
	}
	for sel, s := range info.Selections {
		add(sel.Sel, s.Obj())
	}
	// Strongly connected components (Tarjan): an edge inside one is in a
	// cycle.
	adj := map[string][]string{}
	for e := range edges {
		adj[e[0]] = append(adj[e[0]], e[1])
	}
	index, low, comp := map[string]int{}, map[string]int{}, map[string]int{}
	var stack []string
	on := map[string]bool{}
	n, c := 0, 0
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = n, n
		n++
		stack = append(stack, v)
		on[v] = true
		for _, w := range adj[v] {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[w] = false
				comp[w] = c
				if w == v {
					break
				}
			}
			c++
		}
	}
	var names []string
	for f := range files {
		names = append(names, filepath.Base(f))
	}
	sort.Strings(names)
	for _, f := range names {
		if _, seen := index[f]; !seen {
			visit(f)
		}
	}
	var back []string
	for e := range edges {
		if comp[e[0]] == comp[e[1]] {
			back = append(back, e[0]+" → "+e[1])
		}
	}
	sort.Strings(back)
	fmt.Printf("%-40s file imports %d, running back up %d\n", "", len(edges), len(back))
	if verbose && len(back) > 0 {
		fmt.Fprintln(os.Stdout, "\t"+strings.Join(back, "\n\t"))
	}
}
