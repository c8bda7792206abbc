package archtest

import (
	"go/ast"
	"go/token"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// flagSpelling is a command-line flag as text: --ttl, --verify-timeout.
var flagSpelling = regexp.MustCompile(`(^|[^\w-])--[a-z]`)

// spellers are the front ends of ARCHITECTURE.md's layers, the packages that spell a
// request's field and a step their own way (cmd/git-atlas is the command line's
// main). Everything else of the module, but the programs under bench/ and the
// packages only tests import, is below them.
var spellers = []string{"cmd/git-atlas", "internal/cli", "mcpserver", "web", "internal/demo"}

// testsOnly are the packages only tests import (ARCHITECTURE.md: "tests only").
var testsOnly = []string{"internal/testenv", "internal/archtest"}

// TestNoFlagsBelowFrontEnds: below the front ends the code speaks of a request's
// fields ({ttl} in a fault.Named message, spelled by each front end: --ttl on the
// command line, ttl over MCP), never of a flag (docs/contract.md §4.6). A string
// literal in any package of the module that is not a front end (the list comes from
// the module's packages, so a new one is covered) that spells a flag fails: a hint or
// next action names the operation and its fields (fault.Step), and each front end
// renders it. Two kinds of literal spell someone else's flags, not git-atlas's:
//   - words of another program's command line (gitOrAgentWord): an argument word that
//     starts with -, an element of an argument list ([]string{"claude", "--resume",
//     id}: an agent CLI's) or, in internal/git, anywhere (git's --end-of-options,
//     passed to its process builders); and in internal/git a git command line quoted
//     whole ("cat-file --batch: ...") whose first word is one internal/git passes to
//     git;
//   - text git-atlas writes into an agent's own files for an agent that runs git-atlas
//     on the command line (agentFileText: the skill, the instructions, the markers
//     that name the command that wrote them): the command line's spelling by nature,
//     as a man page is, and byte for byte what uninstall looks for, whichever front
//     end installed it; and the line git's post-checkout hook prints
//     (hookLineFuncs), which the hint file keeps whichever front end wrote the
//     ledger and the hook's script prints to a terminal as it is.
func TestNoFlagsBelowFrontEnds(t *testing.T) {
	t.Parallel()
	pkgs := loadModule(t)
	got := map[string]int{}
	walked := 0
	for _, path := range slices.Sorted(maps.Keys(pkgs)) {
		p := pkgs[path]
		dir := short(path)
		if slices.Contains(spellers, dir) || slices.Contains(testsOnly, dir) || harness(dir) {
			continue
		}
		walked++
		gitWords, commandLineText := map[string]bool{}, argumentLists(p)
		if dir == "internal/git" {
			gitWords = wordsPassedToGit(p)
		}
		if dir == "agent" {
			maps.Copy(commandLineText, agentFileText(p))
		}
		if fns, ok := hookLineFuncs[dir]; ok {
			maps.Copy(commandLineText, literalsIn(p, fns))
		}
		for _, name := range slices.Sorted(maps.Keys(p.files)) {
			ast.Inspect(p.files[name], func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil || !flagSpelling.MatchString(s) || gitOrAgentWord(s, gitWords) || commandLineText[lit.Pos()] {
					return true
				}
				got[dir+"/"+name]++
				return true
			})
		}
	}
	if walked < 10 || pkgs[module+"/ops"] == nil {
		t.Fatalf("only %d packages below the front ends: the walk is broken", walked)
	}
	for _, file := range slices.Sorted(maps.Keys(got)) {
		t.Errorf("%s: %d string literals spell a flag: name the request's field as {field} in a fault.Named error, a step as a fault.Step, and let each front end spell them", file, got[file])
	}
}

// gitOrAgentWord reports whether s, in internal/git (gitWords not empty), is git's
// command line rather than text that names git-atlas's flags: an argument word (it
// starts with -: --end-of-options, a --format=...), or a git command quoted whole,
// its first word one of gitWords ("cat-file --batch").
func gitOrAgentWord(s string, gitWords map[string]bool) bool {
	if len(gitWords) == 0 {
		return false
	}
	if strings.HasPrefix(s, "-") {
		return true
	}
	first, rest, ok := strings.Cut(s, " ")
	return ok && gitWords[first] && strings.HasPrefix(rest, "-")
}

// argumentLists are the string literals of p that are an argument word (they start
// with -, no blank) among the elements of a []string: another program's argument
// list.
func argumentLists(p *pkg) map[token.Pos]bool {
	in := map[token.Pos]bool{}
	for _, f := range p.files {
		ast.Inspect(f, func(n ast.Node) bool {
			cl, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			if at, ok := cl.Type.(*ast.ArrayType); !ok || !isIdent(at.Elt, "string") {
				return true
			}
			for _, e := range cl.Elts {
				if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil && strings.HasPrefix(s, "-") && !strings.Contains(s, " ") {
						in[lit.Pos()] = true
					}
				}
			}
			return true
		})
	}
	return in
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// gitCommandName is a git command's name as an argument: rev-parse, cat-file.
var gitCommandName = regexp.MustCompile(`^[a-z]+(-[a-z]+)*$`)

// wordsPassedToGit are the git commands p (internal/git) names in an argument list:
// a lower-case word among the arguments of a call or the elements of a []string.
func wordsPassedToGit(p *pkg) map[string]bool {
	words := map[string]bool{}
	add := func(args []ast.Expr) {
		for _, a := range args {
			if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && gitCommandName.MatchString(s) {
					words[s] = true
				}
			}
		}
	}
	for _, f := range p.files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CallExpr:
				add(x.Args)
			case *ast.CompositeLit:
				if at, ok := x.Type.(*ast.ArrayType); ok && isIdent(at.Elt, "string") {
					add(x.Elts)
				}
			}
			return true
		})
	}
	return words
}

// hookLineFuncs are the functions, by package, that write the line git's
// post-checkout hook prints (hooks/hint.go).
var hookLineFuncs = map[string][]string{"hooks": {"interruptedText"}}

// literalsIn are the string literals of p within the functions named fns.
func literalsIn(p *pkg, fns []string) map[token.Pos]bool {
	in := map[token.Pos]bool{}
	for _, f := range p.files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !slices.Contains(fns, fd.Name.Name) {
				continue
			}
			ast.Inspect(fd, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					in[lit.Pos()] = true
				}
				return true
			})
		}
	}
	return in
}

// agentFileFields are the fields of package agent's edits that hold the bytes written
// into an agent's file (edits.go: block's begin, end and body, wholeFile's content).
var agentFileFields = []string{"begin", "end", "body", "content"}

// agentFileText are the string literals of p (package agent) that are an agent file's
// bytes: those within the value given to one of agentFileFields in a composite
// literal (a skill(...) call's text among them).
func agentFileText(p *pkg) map[token.Pos]bool {
	in := map[token.Pos]bool{}
	for _, f := range p.files {
		ast.Inspect(f, func(n ast.Node) bool {
			kv, ok := n.(*ast.KeyValueExpr)
			if !ok {
				return true
			}
			if key, ok := kv.Key.(*ast.Ident); !ok || !slices.Contains(agentFileFields, key.Name) {
				return true
			}
			ast.Inspect(kv.Value, func(m ast.Node) bool {
				if lit, ok := m.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					in[lit.Pos()] = true
				}
				return true
			})
			return false
		})
	}
	return in
}
