package archtest

import (
	"go/ast"
	"go/token"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// commandLineText is a git-atlas command line written out by hand: quoted in
// backticks as a hint quotes a command to run, or the start of one built by
// concatenation ("git atlas worktree setup " + run).
var commandLineText = regexp.MustCompile("`git atlas[ `]|^git atlas ")

// fileText are the declarations, by package, whose text is a file's (or a line for
// one) that a shell or an agent's command line reads, not a command someone is told
// to run: the post-checkout hook's script (Script), the line it prints
// (interruptedText), and the line the hook's installer tells a person to add to a
// hook of theirs (checkWritable). The whole of package agent writes an agent's
// files, the command line's spelling by nature (TestNoFlagsBelowFrontEnds).
var fileText = map[string][]string{"hooks": {"Script", "interruptedText", "checkWritable"}}

// TestNoCommandLinesBelowFrontEnds: below the front ends a command someone is told to
// run is a fault.Step (docs/contract.md §11.13: it runs as printed for the one who
// asked), which each front end renders (quoted for sh on the command line, a tool
// call over MCP), with the fields it needs (a holder, a lease token). A string
// literal that writes a git-atlas command line by hand fails: it is unquoted, it
// drops the asker's holder and lease, and over MCP it is no tool call.
func TestNoCommandLinesBelowFrontEnds(t *testing.T) {
	t.Parallel()
	pkgs := loadModule(t)
	got := map[string][]string{}
	walked := 0
	for _, path := range slices.Sorted(maps.Keys(pkgs)) {
		p := pkgs[path]
		dir := short(path)
		if slices.Contains(spellers, dir) || slices.Contains(testsOnly, dir) || harness(dir) || dir == "agent" {
			continue
		}
		walked++
		exempt := declsIn(p, fileText[dir])
		for _, name := range slices.Sorted(maps.Keys(p.files)) {
			ast.Inspect(p.files[name], func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING || exempt[lit.Pos()] {
					return true
				}
				if s, err := strconv.Unquote(lit.Value); err == nil && commandLineText.MatchString(s) {
					got[dir+"/"+name] = append(got[dir+"/"+name], s)
				}
				return true
			})
		}
	}
	if walked < 10 || pkgs[module+"/ops"] == nil {
		t.Fatalf("only %d packages below the front ends: the walk is broken", walked)
	}
	for _, file := range slices.Sorted(maps.Keys(got)) {
		t.Errorf("%s: %q writes a git-atlas command line by hand: name it as a fault.Step (fault.Do) with the fields it needs, and let each front end render it", file, got[file])
	}
}

// declsIn are the string literals of p within its top-level declarations (functions
// without a receiver, constants, variables) named names.
func declsIn(p *pkg, names []string) map[token.Pos]bool {
	in := map[token.Pos]bool{}
	mark := func(n ast.Node) {
		ast.Inspect(n, func(m ast.Node) bool {
			if lit, ok := m.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				in[lit.Pos()] = true
			}
			return true
		})
	}
	for _, f := range p.files {
		for _, d := range f.Decls {
			switch x := d.(type) {
			case *ast.FuncDecl:
				if x.Recv == nil && slices.Contains(names, x.Name.Name) {
					mark(x)
				}
			case *ast.GenDecl:
				for _, s := range x.Specs {
					if vs, ok := s.(*ast.ValueSpec); ok && slices.ContainsFunc(vs.Names, func(id *ast.Ident) bool { return slices.Contains(names, id.Name) }) {
						mark(vs)
					}
				}
			}
		}
	}
	return in
}
