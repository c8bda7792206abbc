package archtest

import (
	"go/ast"
	"go/token"
	"testing"
)

// startupHeavy are the calls of outside packages that do real work when made at package
// initialisation: compiling a pattern or a template, encoding, reading a file.
var startupHeavy = map[string]map[string]bool{
	"regexp":        {"MustCompile": true, "Compile": true, "MustCompilePOSIX": true, "CompilePOSIX": true},
	"text/template": {"Must": true, "New": true, "ParseFS": true, "ParseFiles": true, "ParseGlob": true},
	"html/template": {"Must": true, "New": true, "ParseFS": true, "ParseFiles": true, "ParseGlob": true},
	"encoding/json": {"Marshal": true, "MarshalIndent": true, "Unmarshal": true},
	"os":            {"ReadFile": true, "Getenv": true, "LookupEnv": true, "Environ": true},
}

// TestNoWorkAtStartup: git-atlas's own packages do no work at initialisation, which
// every command pays before its first line runs, whether it needs the result or not
// (issue 34: start-up). A package-level variable is not initialised by calling a
// function literal, a function of its own package, or a heavy constructor
// (startupHeavy), and no package has an init function: such state is built on first
// use (sync.OnceValue). The programs under bench/ and the test kit are not git-atlas.
func TestNoWorkAtStartup(t *testing.T) {
	t.Parallel()
	pkgs := loadModule(t)
	var vars int
	for _, p := range pkgs {
		path := short(p.path)
		if harness(path) || path == "internal/archtest" || path == "internal/testenv" || path == "internal/testknob" {
			continue
		}
		_, funcs := topLevel(p.files)
		for name, f := range p.files {
			imports := importNames(f)
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == "init" {
					t.Errorf("%s (%s): package %s has an init function: build its state on first use", fset.Position(fd.Pos()), name, path)
					continue
				}
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Tok != token.VAR {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, v := range vs.Values {
						vars++
						if call := initCall(v, funcs, imports); call != "" {
							id := vs.Names[min(i, len(vs.Names)-1)]
							t.Errorf("%s (%s): %s.%s is initialised by calling %s at start-up: build it on first use (sync.OnceValue)", fset.Position(id.Pos()), name, path, id.Name, call)
						}
					}
				}
			}
		}
	}
	if vars == 0 {
		t.Fatal("no package-level variable found: the scan is broken")
	}
}

// initCall is the first call in a package-level initialiser that does work at start-up
// ("" when none): a function literal called, a function of the package called, or a
// startupHeavy function. Function literals that are not called (sync.OnceValue's
// argument) are not looked into: they run on first use.
func initCall(e ast.Expr, funcs map[string]bool, imports map[string]string) string {
	var found string
	ast.Inspect(e, func(n ast.Node) bool {
		if found != "" {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false // not called here; a call of one is caught below
		case *ast.CallExpr:
			switch fn := ast.Unparen(n.Fun).(type) {
			case *ast.FuncLit:
				found = "a function literal"
			case *ast.Ident:
				if funcs[fn.Name] {
					found = fn.Name
				}
			case *ast.SelectorExpr:
				if x, ok := fn.X.(*ast.Ident); ok && startupHeavy[imports[x.Name]][fn.Sel.Name] {
					found = x.Name + "." + fn.Sel.Name
				}
			}
		}
		return found == ""
	})
	return found
}
