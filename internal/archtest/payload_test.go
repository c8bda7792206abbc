package archtest

import (
	"go/ast"
	"go/token"
	"testing"
)

// payloadFile is where the ledger's event payloads and their constructors live.
const payloadFile = "ledger/payload.go"

// TestEventDataFromConstructors: an event's data is made only by the ledger's
// constructors from a typed payload (ledger/payload.go), never from a map. No other
// non-test file sets an Event's Data (a literal's Data member, or an assignment to
// an event's Data other than nil), and no function that makes an event (calls a
// constructor or names a payload type) builds a map[string]any: that is how event
// data was built before it was typed, with nothing to check a member or its type.
func TestEventDataFromConstructors(t *testing.T) {
	t.Parallel()
	pkgs := loadModule(t)
	gs := pkgs[module+"/ledger"]
	pf := gs.files["payload.go"]
	if pf == nil {
		t.Fatalf("%s not found", payloadFile)
	}
	ctors, payloads := map[string]bool{}, map[string]bool{}
	for _, d := range pf.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Type.Results != nil && len(d.Type.Results.List) == 1 {
				if id, ok := d.Type.Results.List[0].Type.(*ast.Ident); ok && id.Name == "Event" {
					ctors[d.Name.Name] = true
				}
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if ts, ok := s.(*ast.TypeSpec); ok && d.Tok == token.TYPE {
					payloads[ts.Name.Name] = true
				}
			}
		}
	}
	if len(ctors) < 25 {
		t.Fatalf("found %d event constructors in %s: the scan is broken", len(ctors), payloadFile)
	}
	var makers int
	for _, p := range pkgs {
		inLedger := short(p.path) == "ledger"
		// ledgerName reports whether e names one of set: ledger.X, or X inside ledger.
		ledgerName := func(e ast.Expr, set map[string]bool) bool {
			switch e := e.(type) {
			case *ast.Ident:
				return inLedger && set[e.Name]
			case *ast.SelectorExpr:
				x, ok := e.X.(*ast.Ident)
				return ok && x.Name == "ledger" && set[e.Sel.Name]
			}
			return false
		}
		for name, f := range p.files {
			file := name
			if p.dir != "." {
				file = p.dir + "/" + name
			}
			if file == payloadFile {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CompositeLit:
					if !isEventType(n.Type, inLedger) {
						return true
					}
					for _, el := range n.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Data" {
								t.Errorf("%s: an event's data is set here: make the event with its constructor in %s", fset.Position(kv.Pos()), payloadFile)
							}
						}
					}
				case *ast.AssignStmt:
					for i, lhs := range n.Lhs {
						sel, ok := lhs.(*ast.SelectorExpr)
						if !ok || sel.Sel.Name != "Data" || !looksLikeEvent(sel.X) || i >= len(n.Rhs) {
							continue
						}
						if id, ok := n.Rhs[i].(*ast.Ident); ok && id.Name == "nil" {
							continue // withheld, not made
						}
						t.Errorf("%s: an event's data is assigned here: make the event with its constructor in %s", fset.Position(n.Pos()), payloadFile)
					}
				}
				return true
			})
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				var maps []ast.Node
				makes := false
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.CallExpr:
						makes = makes || ledgerName(n.Fun, ctors)
					case *ast.CompositeLit:
						makes = makes || ledgerName(n.Type, payloads)
						if untypedMap(n.Type) {
							maps = append(maps, n)
						}
					}
					return true
				})
				if !makes {
					continue
				}
				makers++
				for _, m := range maps {
					t.Errorf("%s: %s makes an event and builds a map[string]any: event data is a payload struct of %s", fset.Position(m.Pos()), fd.Name.Name, payloadFile)
				}
			}
		}
	}
	if makers < 20 {
		t.Fatalf("found only %d functions that make an event: the scan is broken", makers)
	}
}

// untypedMap: map[string]any or map[string]interface{}.
func untypedMap(e ast.Expr) bool {
	m, ok := e.(*ast.MapType)
	if !ok {
		return false
	}
	if k, ok := m.Key.(*ast.Ident); !ok || k.Name != "string" {
		return false
	}
	switch v := m.Value.(type) {
	case *ast.Ident:
		return v.Name == "any"
	case *ast.InterfaceType:
		return len(v.Methods.List) == 0
	}
	return false
}

// TestCatalogueNamesPayloads: every line of the ledger's event catalogue names the
// struct its data decodes into (Payload), or says its data is a person's own (Free),
// never both: a new event type is not done until its payload is.
func TestCatalogueNamesPayloads(t *testing.T) {
	t.Parallel()
	f := loadModule(t)[module+"/ledger"].files["events.go"]
	var lines int
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "catalogue" {
			return true
		}
		for _, el := range vs.Values[0].(*ast.CompositeLit).Elts {
			lines++
			keys := map[string]ast.Expr{}
			for _, kv := range el.(*ast.CompositeLit).Elts {
				kv := kv.(*ast.KeyValueExpr)
				keys[kv.Key.(*ast.Ident).Name] = kv.Value
			}
			_, payload := keys["Payload"]
			free, isFree := keys["Free"]
			if isFree {
				if id, ok := free.(*ast.Ident); !ok || id.Name != "true" {
					isFree = false
				}
			}
			if payload == isFree {
				t.Errorf("%s: catalogue line %s names a Payload or is Free: true, exactly one", fset.Position(el.Pos()), exprString(keys["Type"]))
			}
		}
		return false
	})
	if lines < 25 {
		t.Fatalf("found %d catalogue lines: the scan is broken", lines)
	}
}

// isPayloadCall: a call of the ledger's About.event, which makes every event its
// constructors return; its first argument is the type.
func isPayloadCall(n *ast.CallExpr) bool {
	sel, ok := n.Fun.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "event" && len(n.Args) == 2
}
