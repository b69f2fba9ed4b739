// Command pkgstats counts what a package shows and holds: its exported
// identifiers (exported funcs, methods of exported types, methods of
// exported interfaces, types, consts and vars), the methods of each of
// its exported types, and the lines of its non-test files.
//
// With -v it lists the exported identifiers too. With -files it counts
// the package's file-to-file imports (file a imports file b when a uses
// something declared in b: a function, a type, a method, a field, a
// variable or a constant) and how many of them run back up: an import
// inside a cycle of files, which no order of the files can put
// downwards.
//
//	go run ./scripts/pkgstats ./uiadapter ./uiadapter/...
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

var verbose, graph bool

func main() {
	var dirs []string
	for _, arg := range os.Args[1:] {
		if arg == "-v" {
			verbose = true
			continue
		}
		if arg == "-files" {
			graph = true
			continue
		}
		if rest, ok := strings.CutSuffix(arg, "/..."); ok {
			_ = filepath.WalkDir(rest, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() && !strings.Contains(p, "testdata") && !strings.Contains(p, "node_modules") {
					dirs = append(dirs, p)
				}
				return nil
			})
			continue
		}
		dirs = append(dirs, arg)
	}
	for _, dir := range dirs {
		count(dir)
	}
}

func count(dir string) {
	fset := token.NewFileSet()
	// The files of each package in dir, by package name (tests left out).
	pkgs := map[string]map[string]*ast.File{}
	paths, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if pkgs[f.Name.Name] == nil {
			pkgs[f.Name.Name] = map[string]*ast.File{}
		}
		pkgs[f.Name.Name][path] = f
	}
	for name, pkgFiles := range pkgs {
		if name == "main" && len(pkgs) > 1 {
			continue
		}
		exported, lines, files := 0, 0, 0
		var names []string
		count := func(name string) {
			exported++
			names = append(names, name)
		}
		methods := map[string]int{}
		for fname, f := range pkgFiles {
			files++
			b, _ := os.ReadFile(fname)
			lines += strings.Count(string(b), "\n")
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil {
						if d.Name.IsExported() {
							count(d.Name.Name)
						}
						continue
					}
					recv := recvName(d.Recv.List[0].Type)
					if ast.IsExported(recv) {
						methods[recv]++
						if d.Name.IsExported() {
							count(recv + "." + d.Name.Name)
						}
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							if !s.Name.IsExported() {
								continue
							}
							count(s.Name.Name)
							if it, ok := s.Type.(*ast.InterfaceType); ok {
								for _, m := range it.Methods.List {
									for _, n := range m.Names {
										if n.IsExported() {
											count(s.Name.Name + "." + n.Name)
										}
									}
								}
							}
						case *ast.ValueSpec:
							for _, n := range s.Names {
								if n.IsExported() {
									count(n.Name)
								}
							}
						}
					}
				}
			}
		}
		var most []string
		for t, n := range methods {
			most = append(most, fmt.Sprintf("%s %d", t, n))
		}
		sort.Slice(most, func(i, j int) bool {
			var a, b int
			fmt.Sscan(strings.Fields(most[i])[1], &a)
			fmt.Sscan(strings.Fields(most[j])[1], &b)
			return a > b
		})
		if len(most) > 3 {
			most = most[:3]
		}
		if verbose {
			sort.Strings(names)
			fmt.Printf("%s: %s\n", dir, strings.Join(names, " "))
		}
		fmt.Printf("%-40s files %3d  lines %5d  exported %3d  most methods: %s\n", dir, files, lines, exported, strings.Join(most, ", "))
		if graph {
			fileGraph(dir, fset, pkgFiles)
		}
	}
}

func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.IndexListExpr:
		return recvName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}
