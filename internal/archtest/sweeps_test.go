package archtest

import (
	"bufio"
	"go/ast"
	"os"
	"sort"
	"strings"
	"testing"
)

// TestSweepsListed holds .ci/sweeps to the code: the full sweeps run only the tests
// named there, so a test that grows with testenv.Long or testenv.Rounds and is not
// listed would never run in full, and a listed name that is no test would hide that a
// sweep was renamed away.
func TestSweepsListed(t *testing.T) {
	pkgs := loadModule(t)
	f, err := os.Open("../../.ci/sweeps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "#") {
			listed[line] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	tests := map[string]bool{}
	var growing []string
	for _, p := range pkgs {
		for _, file := range p.tests {
			for _, d := range file.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") {
					continue
				}
				tests[fn.Name.Name] = true
				if callsLong(fn.Body) {
					growing = append(growing, fn.Name.Name)
				}
			}
		}
	}
	sort.Strings(growing)
	for _, name := range growing {
		if !listed[name] {
			t.Errorf("%s grows with ATLAS_LONG_TESTS but is not in .ci/sweeps: the full sweeps would never run it", name)
		}
	}
	for name := range listed {
		if !tests[name] {
			t.Errorf(".ci/sweeps names %s, which is no test of the module", name)
		}
	}
}

// callsLong reports whether body calls testenv.Long or testenv.Rounds.
func callsLong(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "testenv" && (sel.Sel.Name == "Long" || sel.Sel.Name == "Rounds") {
				found = true
			}
		}
		return !found
	})
	return found
}
