package archtest

import (
	"bufio"
	"go/ast"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/testknob"
)

// TestSweepsListed holds .ci/sweeps to the code: the full sweeps run only the tests
// named there, so a test that grows with Long or Rounds (testknob's, or testenv's
// forwards) and is not listed would never run in full, and a listed name that is no
// test would hide that a sweep was renamed away. The full sizes are the sweeps build tag's (testknob.SweepsTag):
// each runner of the list (.ci/run, the Makefile) must build with it, or the "full"
// sweeps would run short.
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
			t.Errorf("%s grows with the sweeps build tag but is not in .ci/sweeps: the full sweeps would never run it", name)
		}
	}
	for name := range listed {
		if !tests[name] {
			t.Errorf(".ci/sweeps names %s, which is no test of the module", name)
		}
	}
	for _, runner := range []string{"../../.ci/run", "../../Makefile"} {
		data, err := os.ReadFile(runner)
		if err != nil {
			t.Fatal(err)
		}
		ran := false
		for line := range strings.Lines(string(data)) {
			if !strings.Contains(line, "go test") && !strings.Contains(line, "$(GO) test") || !strings.Contains(line, "sweeps") {
				continue // not the run of the listed sweeps
			}
			ran = true
			if !strings.Contains(line, "-tags "+testknob.SweepsTag) {
				t.Errorf("%s runs the sweeps without -tags %s: they would run at their short sizes:\n%s", runner, testknob.SweepsTag, line)
			}
		}
		if !ran {
			t.Errorf("%s does not run the sweeps .ci/sweeps lists", runner)
		}
	}
}

// callsLong reports whether body calls Long or Rounds of testknob or testenv.
func callsLong(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if ok {
			if x, ok := sel.X.(*ast.Ident); ok && (x.Name == "testenv" || x.Name == "testknob") && (sel.Sel.Name == "Long" || sel.Sel.Name == "Rounds") {
				found = true
			}
		}
		return !found
	})
	return found
}
