package archtest

import (
	"go/ast"
	"go/token"
	"maps"
	"strconv"
	"testing"
)

// TestOneGitAndOneBinaryHelper: the tests start git through internal/testenv (GitRun,
// GitErr, GitEnvErr, Git, GitEnv) and get git-atlas from testenv.Command, built once
// per test binary: no test file starts `git` or `go build` itself. internal/git's own
// tests, which testenv imports and so cannot import it, keep one helper
// (rungit_test.go).
func TestOneGitAndOneBinaryHelper(t *testing.T) {
	t.Parallel()
	allowed := map[string]bool{"internal/testenv": true}
	allowedFile := map[string]bool{"internal/git/rungit_test.go": true}
	var found int
	for _, p := range loadModule(t) {
		files := maps.Clone(p.tests)
		if p.dir == "internal/testenv" {
			maps.Copy(files, p.files)
		}
		for name, f := range files {
			file := name
			if p.dir != "." {
				file = p.dir + "/" + name
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "Command" && sel.Sel.Name != "CommandContext" {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "exec" {
					return true
				}
				args := call.Args
				if sel.Sel.Name == "CommandContext" && len(args) > 0 {
					args = args[1:]
				}
				if len(args) == 0 {
					return true
				}
				lit, ok := args[0].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				prog, _ := strconv.Unquote(lit.Value)
				if prog != "git" && prog != "go" {
					return true
				}
				found++
				if allowed[p.dir] || allowedFile[file] {
					return true
				}
				switch prog {
				case "git":
					t.Errorf("%s: a test starts git itself: use testenv.GitRun, GitErr or Git (internal/testenv/git.go)", fset.Position(call.Pos()))
				case "go":
					t.Errorf("%s: a test runs go itself: the git-atlas binary is testenv.Command's, built once per test binary", fset.Position(call.Pos()))
				}
				return true
			})
		}
	}
	if found == 0 {
		t.Fatal("no exec.Command of git found, not even testenv's: the scan is broken")
	}
}
