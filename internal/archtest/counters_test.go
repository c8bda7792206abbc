package archtest

import (
	"go/ast"
	"sort"
	"strings"
	"testing"
)

// TestProcessCountersRunAlone: a test that counts git processes by the difference of
// git.Started (the process budgets, the in-process paths that must start none) runs
// alone, never with t.Parallel, in itself or its subtests: the counter is the test
// binary's, and a parallel test's processes land in the count. Such a count passes
// alone and fails under load (TestCountCommitsAgreesWithGit did, once). A test reads
// the counter itself or through a function of its package's test files.
func TestProcessCountersRunAlone(t *testing.T) {
	for _, p := range loadModule(t) {
		reads := map[string]bool{} // test files' functions that read the counter
		var tests []*ast.FuncDecl
		for _, f := range p.tests {
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Recv != nil || fn.Body == nil {
					continue
				}
				if calls(fn.Body, isStarted) {
					reads[fn.Name.Name] = true
				}
				if strings.HasPrefix(fn.Name.Name, "Test") {
					tests = append(tests, fn)
				}
			}
		}
		var bad []string
		for _, fn := range tests {
			counts := reads[fn.Name.Name] || calls(fn.Body, func(c *ast.CallExpr) bool {
				id, ok := c.Fun.(*ast.Ident)
				return ok && reads[id.Name]
			})
			if counts && calls(fn.Body, isParallel) {
				bad = append(bad, fn.Name.Name)
			}
		}
		sort.Strings(bad)
		for _, name := range bad {
			t.Errorf("%s: %s counts git processes (git.Started) and runs in parallel: other tests' processes land in its count; drop t.Parallel", short(p.path), name)
		}
	}
}

// calls reports whether body holds a call that match accepts.
func calls(body *ast.BlockStmt, match func(*ast.CallExpr) bool) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok && match(c) {
			found = true
		}
		return !found
	})
	return found
}

// isStarted matches git.Started() (Started() inside package git).
func isStarted(c *ast.CallExpr) bool {
	switch f := c.Fun.(type) {
	case *ast.Ident:
		return f.Name == "Started"
	case *ast.SelectorExpr:
		x, ok := f.X.(*ast.Ident)
		return ok && x.Name == "git" && f.Sel.Name == "Started"
	}
	return false
}

// isParallel matches t.Parallel() on any testing value.
func isParallel(c *ast.CallExpr) bool {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Parallel" && len(c.Args) == 0
}
