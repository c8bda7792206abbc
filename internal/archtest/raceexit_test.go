package archtest

import (
	"go/ast"
	"sort"
	"testing"
)

// TestSuitesSkipRaceExitSleep: every package with tests has a TestMain that begins
// with testknob.NoRaceExitSleep, or calls testenv.Pin, which does: without it the
// race-built binary sleeps a second before it exits, once per package in the README's
// test command.
func TestSuitesSkipRaceExitSleep(t *testing.T) {
	var missing []string
	for _, p := range loadModule(t) {
		if len(p.tests) == 0 {
			continue
		}
		ok := false
		for _, file := range p.tests {
			for _, d := range file.Decls {
				fn, isFn := d.(*ast.FuncDecl)
				if !isFn || fn.Recv != nil || fn.Body == nil || fn.Name.Name != "TestMain" {
					continue
				}
				ok = len(fn.Body.List) > 0 && callsSel(fn.Body.List[0], "testknob", "NoRaceExitSleep") ||
					callsSel(fn.Body, "testenv", "Pin") ||
					p.dir == "internal/testknob" && len(fn.Body.List) > 0 && callsIdent(fn.Body.List[0], "NoRaceExitSleep")
			}
		}
		if !ok {
			missing = append(missing, p.dir)
		}
	}
	sort.Strings(missing)
	for _, dir := range missing {
		t.Errorf("%s: no TestMain starting with testknob.NoRaceExitSleep() or calling testenv.Pin(m): its race-built tests would sleep a second at exit", dir)
	}
}

// callsSel reports whether n holds a call of pkg.name.
func callsSel(n ast.Node, pkg, name string) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == name {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == pkg {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// callsIdent reports whether n holds a call of the package's own function name.
func callsIdent(n ast.Node, name string) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if id, ok := c.Fun.(*ast.Ident); ok && id.Name == name {
				found = true
			}
		}
		return !found
	})
	return found
}
