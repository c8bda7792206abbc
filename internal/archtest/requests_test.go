package archtest

import (
	"go/ast"
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestRequestsCheck: requests are the contract of the operations (docs/contract.md
// §4.6). Every request type of package ops (a struct named ...Request) has a
// Check() error on its pointer that fills its defaults and refuses what the
// operation cannot do, and every exported operation that takes a request calls the
// request's Check: whichever front end (the command line, MCP, the demo, a
// benchmark) calls it, the same defaults and checks apply, once.
func TestRequestsCheck(t *testing.T) {
	t.Parallel()
	p := loadModule(t)[module+"/ops"]
	requests := map[string]bool{} // request type -> has Check
	for _, f := range p.files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range g.Specs {
				ts, ok := s.(*ast.TypeSpec)
				if !ok || !strings.HasSuffix(ts.Name.Name, "Request") || !ast.IsExported(ts.Name.Name) {
					continue
				}
				if _, ok := ts.Type.(*ast.StructType); ok {
					requests[ts.Name.Name] = false // until its Check is found
				}
			}
		}
	}
	type use struct{ file, fn, param, typ string }
	var uses []use
	for name, f := range p.files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if fd.Name.Name == "Check" && fd.Recv != nil && len(fd.Type.Params.List) == 0 && fd.Type.Results != nil &&
				len(fd.Type.Results.List) == 1 && identName(fd.Type.Results.List[0].Type) == "error" {
				if star, ok := fd.Recv.List[0].Type.(*ast.StarExpr); ok {
					if _, isReq := requests[identName(star.X)]; isReq {
						requests[identName(star.X)] = true
					}
				}
				continue
			}
			if !ast.IsExported(fd.Name.Name) {
				continue // a helper an operation hands its checked request to
			}
			for _, field := range fd.Type.Params.List {
				typ := identName(field.Type)
				if star, ok := field.Type.(*ast.StarExpr); ok {
					typ = identName(star.X)
				}
				if _, isReq := requests[typ]; !isReq {
					continue
				}
				for _, n := range field.Names {
					uses = append(uses, use{file: name, fn: fd.Name.Name, param: n.Name, typ: typ})
					if !callsCheck(fd.Body, n.Name) {
						t.Errorf("ops/%s: %s takes a %s but never calls %s.Check(): call it first, so every front end gets its defaults and checks", name, fd.Name.Name, typ, n.Name)
					}
				}
			}
		}
	}
	if len(requests) < 30 || len(uses) < 30 {
		t.Fatalf("found %d request types and %d operations taking one: the parse found too few", len(requests), len(uses))
	}
	for _, r := range slices.Sorted(maps.Keys(requests)) {
		if !requests[r] {
			t.Errorf("ops.%s has no Check() error on *%s: a request fills its defaults and refuses what its operation cannot do, naming its fields", r, r)
		}
	}
}

// identName is the name of an identifier expression, "" for anything else.
func identName(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// callsCheck reports whether body calls v.Check().
func callsCheck(body *ast.BlockStmt, v string) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 0 {
			return !found
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Check" && identName(sel.X) == v {
			found = true
		}
		return !found
	})
	return found
}
