package archtest

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

const module = "github.com/git-atlas/git-atlas"

// pkg is one directory of the module, as parsed from its source (every .go file,
// whatever its build constraints, so that mutex_other.go counts as much as
// mutex_unix.go).
type pkg struct {
	path  string               // import path
	dir   string               // relative to the module root
	files map[string]*ast.File // file name -> file, test files excluded
	tests map[string]*ast.File // _test.go files
}

func (p *pkg) imports(test bool) map[string][]string {
	files := p.files
	if test {
		files = p.tests
	}
	out := map[string][]string{}
	for name, f := range files {
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			out[path] = append(out[path], name)
		}
	}
	return out
}

var fset = token.NewFileSet()

var (
	loadOnce   sync.Once
	loadedPkgs map[string]*pkg
	loadErr    string
)

// loadModule parses every package of the module (testdata and hidden directories
// left out, as go does), once per test binary.
func loadModule(t *testing.T) map[string]*pkg {
	t.Helper()
	loadOnce.Do(func() { loadedPkgs, loadErr = parseModule() })
	if loadErr != "" {
		t.Fatal(loadErr)
	}
	return loadedPkgs
}

func parseModule() (map[string]*pkg, string) {
	root, err := filepath.Abs("../..")
	if err != nil {
		return nil, err.Error()
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return nil, fmt.Sprintf("the module root is not %s: %v", root, err)
	}
	pkgs := map[string]*pkg{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		rel = filepath.ToSlash(rel)
		ip := module
		if rel != "." {
			ip += "/" + rel
		}
		k := pkgs[ip]
		if k == nil {
			k = &pkg{path: ip, dir: rel, files: map[string]*ast.File{}, tests: map[string]*ast.File{}}
			pkgs[ip] = k
		}
		if strings.HasSuffix(name, "_test.go") {
			k.tests[name] = f
		} else {
			k.files[name] = f
		}
		return nil
	})
	if err != nil {
		return nil, err.Error()
	}
	for _, must := range []string{"internal/git", "internal/cli", "gitstate", "ledger", "resume", "cmd/git-atlas"} {
		if pkgs[module+"/"+must] == nil {
			return nil, fmt.Sprintf("package %s not found: the walk is broken", must)
		}
	}
	return pkgs, ""
}

func short(path string) string { return strings.TrimPrefix(strings.TrimPrefix(path, module), "/") }

// harness reports whether a package is one of the module's programs that measure
// git-atlas from outside, as a test does (everything under bench/): they run go
// build, git and the built binary, and are no part of git-atlas.
func harness(path string) bool { return strings.HasPrefix(path, "bench/") }

// The import arrows of ARCHITECTURE.md (only internal/git imports os/exec; the
// layering; the test kit for tests only) are depguard rules in .golangci.yml, which
// .ci/run runs: this package holds only what a linter cannot say.

// TestEventTypesFromCatalogue: no code writes an event type as a string: every
// ledger.Event literal's Type (and every assignment to an event's Type) is one of
// the ledger's EventType constants, so ledger/events.go is the whole list of what
// git-atlas writes (its own test checks each constant has a catalogue line). A
// conversion ledger.EventType(x) is a name that came from outside, allowed only where
// it is checked: the event operation (ops.Event, which refuses the reserved ones) and
// the constructors of a person's or a source's own event (ledger/payload.go), and
// there also a variable that holds one. The constructors make each event through
// About.event, whose type argument is held to the same rule.
func TestEventTypesFromCatalogue(t *testing.T) {
	t.Parallel()
	allowedConversions := map[string]bool{"ops/runs.go": true, payloadFile: true}
	var found int
	for _, p := range loadModule(t) {
		for name, f := range p.files {
			file := name
			if p.dir != "." {
				file = p.dir + "/" + name
			}
			inLedger := short(p.path) == "ledger"
			check := func(v ast.Expr) {
				found++
				switch e := v.(type) {
				case *ast.Ident:
					if inLedger && strings.HasPrefix(e.Name, "Event") {
						return
					}
					if allowedConversions[file] && !strings.HasPrefix(e.Name, "Event") {
						return // a variable holding such a conversion
					}
				case *ast.SelectorExpr:
					if x, ok := e.X.(*ast.Ident); ok && x.Name == "ledger" && strings.HasPrefix(e.Sel.Name, "Event") {
						return
					}
				case *ast.CallExpr:
					if isEventTypeConv(e.Fun, inLedger) && allowedConversions[file] {
						return
					}
				}
				t.Errorf("%s: event type %s is not a constant of the ledger's catalogue (ledger/events.go)", fset.Position(v.Pos()), exprString(v))
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					if inLedger && isPayloadCall(n) {
						check(n.Args[0])
					}
				case *ast.CompositeLit:
					if !isEventType(n.Type, inLedger) {
						return true
					}
					for _, el := range n.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Type" {
								check(kv.Value)
							}
						}
					}
				case *ast.AssignStmt:
					for i, lhs := range n.Lhs {
						if sel, ok := lhs.(*ast.SelectorExpr); ok && sel.Sel.Name == "Type" && i < len(n.Rhs) && looksLikeEvent(sel.X) {
							check(n.Rhs[i])
						}
					}
				}
				return true
			})
		}
	}
	if found < 20 {
		t.Fatalf("found only %d event types written: the scan is broken", found)
	}
}

func isEventType(e ast.Expr, inLedger bool) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return inLedger && e.Name == "Event"
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		return ok && x.Name == "ledger" && e.Sel.Name == "Event"
	}
	return false
}

func isEventTypeConv(e ast.Expr, inLedger bool) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return inLedger && e.Name == "EventType"
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		return ok && x.Name == "ledger" && e.Sel.Name == "EventType"
	}
	return false
}

// looksLikeEvent: x.Type = ... where x is named like an event (ev, e, event, or a
// selector ending in Event). Without type information this is a heuristic; the
// composite literals above are where events are made.
func looksLikeEvent(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.Ident:
		return x.Name == "ev" || x.Name == "event"
	case *ast.SelectorExpr:
		return x.Sel.Name == "Event"
	}
	return false
}

func exprString(e ast.Expr) string {
	if lit, ok := e.(*ast.BasicLit); ok {
		return lit.Value
	}
	var b strings.Builder
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			if b.Len() > 0 {
				b.WriteString(".")
			}
			b.WriteString(id.Name)
		}
		return true
	})
	return b.String()
}

// TestAtlasLayoutInOnePlace: <git-common-dir>/atlas/ and its parts are named only by
// git.Layout (internal/git/layout.go): no other non-test file joins "atlas" into a
// path. (gc once deleted the mutex directory internal/git/mutex.go owns by spelling
// its path again.)
func TestAtlasLayoutInOnePlace(t *testing.T) {
	t.Parallel()
	var joins int
	for _, p := range loadModule(t) {
		for name, f := range p.files {
			file := p.dir + "/" + name
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "Join" {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "filepath" {
					return true
				}
				joins++
				for _, a := range call.Args {
					if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						if (v == "atlas" || strings.HasPrefix(v, "atlas/")) && file != "internal/git/layout.go" {
							t.Errorf("%s: joins %q into a path: name it through git.Layout", fset.Position(lit.Pos()), v)
						}
					}
				}
				return true
			})
		}
	}
	if joins == 0 {
		t.Fatal("no filepath.Join found: the scan is broken")
	}
}

// TestOneParallelismHelper: independent checks run in parallel through internal/par
// alone (a bound, errors kept in input order), so go-multierror, which gathers them,
// is imported there and nowhere else (it was used in three idioms: a semaphore and a
// WaitGroup, a multierror.Group, sequential appends).
func TestOneParallelismHelper(t *testing.T) {
	t.Parallel()
	for _, p := range loadModule(t) {
		if short(p.path) == "internal/par" || harness(short(p.path)) {
			continue
		}
		if files, ok := p.imports(false)["github.com/hashicorp/go-multierror"]; ok {
			sort.Strings(files)
			t.Errorf("%s imports go-multierror (%s): use internal/par (Each, Join)", short(p.path), strings.Join(files, ", "))
		}
	}
}

// TestCommandsWriteThroughOps: a command is parse → call → print (package ops): no
// non-test file of internal/cli writes the ledger itself with a gitstate store's
// Update, whose closure would hold the write's rules where only the command line
// gets them. A ledger write is an operation in ops, which every front end calls.
// Without type information, a ledger Update is a method call named Update with
// Store.Update's three arguments (ctx, run id, the function that changes the run).
func TestCommandsWriteThroughOps(t *testing.T) {
	t.Parallel()
	var seen int
	for _, p := range loadModule(t) {
		for _, f := range p.files {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "Update" || len(call.Args) != 3 {
					return true
				}
				seen++
				if short(p.path) == "internal/cli" {
					t.Errorf("%s: %s.Update writes the ledger from a command: make the write an operation in ops (ops/jobs.go, ops/runs.go) and call it", fset.Position(call.Pos()), exprString(sel.X))
				}
				return true
			})
		}
	}
	if seen == 0 {
		t.Fatal("no ledger Update found in the module: the scan is broken")
	}
}

// frontEnds are the front ends that reach the repository only through ops: which
// domain packages each imports is a depguard rule (.golangci.yml,
// command-line-imports-ops and its neighbours); this test holds what an import rule
// cannot see.
var frontEnds = []string{"internal/cli", "web", "internal/demo"}

// TestFrontEndsReachTheRepositoryThroughOps: a front end imports ops, not
// internal/git, but ops.Ops carries the repository in its field Repo, so
// o.Repo.Browse(...) would still reach past the operations to git. No non-test file
// of a front end selects through a field named Repo (X.Repo.Y), nor sets one in a
// composite literal (ops.Ops{Repo: ...}): what a front end needs of the repository is
// a method of ops.Ops (TopLevel, CommonDir, RecoveryDir, Browse, Fresh).
func TestFrontEndsReachTheRepositoryThroughOps(t *testing.T) {
	t.Parallel()
	pkgs := loadModule(t)
	for _, fe := range frontEnds {
		p := pkgs[module+"/"+fe]
		if p == nil {
			t.Fatalf("front end %s not found: the walk is broken", fe)
		}
		for _, f := range p.files {
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if inner, ok := n.X.(*ast.SelectorExpr); ok && inner.Sel.Name == "Repo" {
						t.Errorf("%s: %s reaches the repository past ops (%s.%s): make what it needs a method of ops.Ops", fset.Position(n.Pos()), fe, exprString(inner), n.Sel.Name)
					}
				case *ast.KeyValueExpr:
					if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Repo" {
						t.Errorf("%s: %s sets a Repo field: open the operations with ops.Open (or Ops.Fresh)", fset.Position(n.Pos()), fe)
					}
				}
				return true
			})
		}
	}
}

// TestNoReplaceableFunctions: no non-test file of git-atlas (the bench harness aside)
// declares an exported package-level variable of function type, such as the clock
// (gitstate.Now), the lease nonce, the host's pid check or the hook run after every
// ledger write once were. A test that replaced one changed it for every test of its
// binary, so none of them could run in parallel; such a thing is a field of the value
// that uses it (gitstate.Store.Clock, resume.Host, cli.System), or a parameter.
// Without type information, a variable is of function type when it is declared with
// a func type (literal, or a type of its package whose underlying type is one) or
// initialised with a function literal or a function (of its own package, another of
// the module, or the standard library).
func TestNoReplaceableFunctions(t *testing.T) {
	t.Parallel()
	pkgs := loadModule(t)
	funcsOf := map[string]map[string]bool{} // package path -> its functions
	for path, p := range pkgs {
		_, funcsOf[path] = topLevel(p.files)
	}
	var vars int
	for _, p := range pkgs {
		if harness(short(p.path)) || short(p.path) == "internal/archtest" {
			continue
		}
		funcTypes, funcs := topLevel(p.files)
		for name, f := range p.files {
			imports := importNames(f)
			for _, d := range f.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Tok != token.VAR {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, id := range vs.Names {
						vars++
						if !id.IsExported() {
							continue
						}
						var value ast.Expr
						if i < len(vs.Values) {
							value = vs.Values[i]
						}
						if isFuncType(vs.Type, funcTypes) || isFunc(value, funcs, imports, funcsOf) {
							t.Errorf("%s (%s): exported variable %s.%s holds a function, which a test could replace for the whole binary: make it a field of the value that uses it, or a parameter", fset.Position(id.Pos()), name, short(p.path), id.Name)
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

// topLevel returns the names of a package's types whose underlying type is a func type,
// and of its functions.
func topLevel(files map[string]*ast.File) (funcTypes, funcs map[string]bool) {
	funcTypes, funcs = map[string]bool{}, map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					funcs[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					if ts, ok := spec.(*ast.TypeSpec); ok {
						if _, ok := ts.Type.(*ast.FuncType); ok {
							funcTypes[ts.Name.Name] = true
						}
					}
				}
			}
		}
	}
	return funcTypes, funcs
}

// importNames maps a file's import names to their paths.
func importNames(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		out[name] = path
	}
	return out
}

func isFuncType(e ast.Expr, funcTypes map[string]bool) bool {
	switch e := e.(type) {
	case *ast.FuncType:
		return true
	case *ast.Ident:
		return funcTypes[e.Name]
	case *ast.ParenExpr:
		return isFuncType(e.X, funcTypes)
	}
	return false
}

// isFunc reports whether e is a function: a literal, a function of the package
// (funcs), or pkg.F for a function F of an imported package of the module (funcsOf)
// or the standard library.
func isFunc(e ast.Expr, funcs map[string]bool, imports map[string]string, funcsOf map[string]map[string]bool) bool {
	switch e := e.(type) {
	case *ast.FuncLit:
		return true
	case *ast.Ident:
		return funcs[e.Name]
	case *ast.ParenExpr:
		return isFunc(e.X, funcs, imports, funcsOf)
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		if !ok {
			return false
		}
		path, ok := imports[x.Name]
		if !ok {
			return false
		}
		if fs, ok := funcsOf[path]; ok {
			return fs[e.Sel.Name]
		}
		return stdFuncs(path)[e.Sel.Name]
	}
	return false
}

var (
	stdMu    sync.Mutex
	stdCache = map[string]map[string]bool{}
)

// stdFuncs are the functions of a standard package, read from its source (none when
// it cannot be found: an outside module's package is not looked up).
func stdFuncs(path string) map[string]bool {
	stdMu.Lock()
	defer stdMu.Unlock()
	if fs, ok := stdCache[path]; ok {
		return fs
	}
	files := map[string]*ast.File{}
	if bp, err := build.Default.Import(path, "", build.FindOnly); err == nil && bp.Goroot {
		names, _ := filepath.Glob(filepath.Join(bp.Dir, "*.go"))
		for _, n := range names {
			if strings.HasSuffix(n, "_test.go") {
				continue
			}
			if f, err := parser.ParseFile(token.NewFileSet(), n, nil, parser.SkipObjectResolution); err == nil {
				files[n] = f
			}
		}
	}
	_, fs := topLevel(files)
	stdCache[path] = fs
	return fs
}

// idWords are the words of a parameter name that say it holds a revision or an object
// id. A name is split into its words at case changes, digits and underscores
// ("baseTree": base, tree; "commitID": commit, id) and compared word by word, so
// "head" is found in "newHead" but not in "header" or "ahead".
var idWords = map[string]bool{
	"rev": true, "revs": true, "revision": true, "revisions": true,
	"oid": true, "oids": true, "id": true, "ids": true, "sha": true, "shas": true,
	"commit": true, "commits": true, "tree": true, "trees": true, "blob": true, "blobs": true,
	"tip": true, "tips": true, "base": true, "baseline": true, "baselines": true,
	"head": true, "heads": true, "parent": true, "parents": true, "ours": true, "theirs": true,
}

// nameWords splits an identifier into its lowercase words.
func nameWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = nil
		}
	}
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case r == '_' || r >= '0' && r <= '9':
			flush()
			continue
		case r >= 'A' && r <= 'Z':
			// A new word starts at an upper-case letter after a lower-case one, or at
			// the last upper-case letter of a run followed by a lower-case one (IDList).
			if i > 0 && (rs[i-1] >= 'a' && rs[i-1] <= 'z' || i+1 < len(rs) && rs[i+1] >= 'a' && rs[i+1] <= 'z') {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return words
}

// isStringy reports whether a parameter's type is string, []string or ...string.
func isStringy(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name == "string"
	case *ast.ArrayType:
		return x.Len == nil && isStringy(x.Elt)
	case *ast.Ellipsis:
		return isStringy(x.Elt)
	}
	return false
}

// TestGitTakesTypedIDs: every exported function and method of internal/git that takes
// a revision or an object id takes it as git.OID (a full hex id, made only by
// ParseOID or from git's output) or git.Rev (an OID, a checked ref name, or a
// person's argument), never as a plain string (issue 29: a baseline of
// `--output=../README` from a pulled ledger reached git as an option). A parameter of
// type string, []string or ...string whose name holds one of idWords fails; so do
// OID and Rev if they stop being structs whose only field is unexported (a value
// could then be made from any string).
func TestGitTakesTypedIDs(t *testing.T) {
	t.Parallel()
	p := loadModule(t)[module+"/internal/git"]
	typed := 0
	structs := map[string]bool{}
	// internal/git's OID is an alias of gitid.OID (the leaf the ledger's documents
	// hold ids in): the struct is checked where it is declared.
	types := func(f *ast.File, leaf bool) {
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
				for _, spec := range gd.Specs {
					ts := spec.(*ast.TypeSpec)
					if ts.Name.Name != "OID" && ts.Name.Name != "Rev" {
						continue
					}
					if sel, ok := ts.Type.(*ast.SelectorExpr); ok && !leaf && ts.Assign.IsValid() && exprString(sel) == "gitid."+ts.Name.Name {
						continue
					}
					st, ok := ts.Type.(*ast.StructType)
					if !ok || len(st.Fields.List) != 1 || len(st.Fields.List[0].Names) != 1 || st.Fields.List[0].Names[0].IsExported() {
						t.Errorf("%s: %s must be a struct with one unexported field (or, in internal/git, an alias of gitid's), so that only the parsers make one", fset.Position(ts.Pos()), ts.Name.Name)
					}
					structs[ts.Name.Name] = true
				}
			}
		}
	}
	for _, f := range loadModule(t)[module+"/internal/gitid"].files {
		types(f, true)
	}
	for name, f := range p.files {
		types(f, false)
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() {
				continue
			}
			if fd.Recv != nil && !ast.IsExported(receiverType(fd.Recv.List[0].Type)) {
				continue
			}
			for _, field := range fd.Type.Params.List {
				if id, ok := field.Type.(*ast.Ident); ok && (id.Name == "OID" || id.Name == "Rev") {
					typed++
				}
				if arr, ok := field.Type.(*ast.ArrayType); ok {
					if id, ok := arr.Elt.(*ast.Ident); ok && id.Name == "OID" {
						typed++
					}
				}
				if !isStringy(field.Type) {
					continue
				}
				for _, n := range field.Names {
					for _, w := range nameWords(n.Name) {
						if idWords[w] {
							t.Errorf("%s (%s): %s takes %s as %s: a revision or object id is a git.OID or git.Rev, never a string", fset.Position(n.Pos()), name, fd.Name.Name, n.Name, exprString(field.Type))
							break
						}
					}
				}
			}
		}
	}
	if !structs["OID"] || !structs["Rev"] {
		t.Errorf("internal/git declares no OID or no Rev type")
	}
	if typed < 10 {
		t.Fatalf("only %d parameters of internal/git's exported functions are OIDs or Revs: the scan is broken", typed)
	}
}

// receiverType is the name of a method's receiver type (T or *T).
func receiverType(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

func TestNameWords(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"baseTree": "base tree", "commitID": "commit id", "IDList": "id list", "header": "header",
		"ahead": "ahead", "new_head": "new head", "sha1": "sha", "a": "a", "lockReason": "lock reason",
	} {
		if got := strings.Join(nameWords(in), " "); got != want {
			t.Errorf("nameWords(%q) = %q, want %q", in, got, want)
		}
	}
}
