package ledger

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"
)

// TestEventCatalogue: every EventType constant of events.go has exactly one line in
// the catalogue and every line a constant; what resume owns it also writes; a
// reserved type names the command that writes it (the refusal's hint). Adding an
// event type is its constant and its catalogue line: this test fails until both
// exist. internal/archtest checks that no code writes an event type by a literal.
func TestEventCatalogue(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "events.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[EventType]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "EventType" {
				continue
			}
			for i, name := range vs.Names {
				lit := vs.Values[i].(*ast.BasicLit)
				v, _ := strconv.Unquote(lit.Value)
				if other, dup := consts[EventType(v)]; dup {
					t.Errorf("%s and %s are both %q", other, name.Name, v)
				}
				consts[EventType(v)] = name.Name
			}
		}
	}
	if len(consts) == 0 {
		t.Fatal("no EventType constants found in events.go")
	}
	seen := map[EventType]bool{}
	for _, e := range Events() {
		if seen[e.Type] {
			t.Errorf("%s is in the catalogue twice", e.Type)
		}
		seen[e.Type] = true
		if _, ok := consts[e.Type]; !ok {
			t.Errorf("catalogue line %s has no EventType constant", e.Type)
		}
		if err := ValidName("event type", string(e.Type)); err != nil {
			t.Errorf("%s: %v", e.Type, err)
		}
		if e.By == 0 {
			t.Errorf("%s: nobody writes it", e.Type)
		}
		if e.ResumeOwned && e.By&ByResume == 0 {
			t.Errorf("%s: resume owns it but does not write it", e.Type)
		}
		if e.Type.Reserved() && e.Command == "" {
			t.Errorf("%s: reserved, but names no command for the refusal's hint", e.Type)
		}
		if e.By&ByUser != 0 && e.By != ByUser {
			t.Errorf("%s: a person may write it, and so does git-atlas: it can be neither reserved nor free", e.Type)
		}
	}
	for v, name := range consts {
		if !seen[v] {
			t.Errorf("%s (%q) has no line in the catalogue", name, v)
		}
	}
}

// TestEventReservedAndOwned pins the two sets that drifted apart when they were
// separate lists (cli's reservedEvents accepted worktree_untrusted and stage_resumed
// by hand): every type resume owns is reserved, and so is every type git-atlas writes.
func TestEventReservedAndOwned(t *testing.T) {
	t.Parallel()
	for _, ty := range []EventType{EventStageResumed, EventResumed, EventWorktreeUntrusted, EventUnionBuilt, EventImported, EventJobVerified} {
		if !ty.Reserved() {
			t.Errorf("%s is not reserved", ty)
		}
	}
	for _, ty := range []EventType{EventNote, EventProgress, "my_own_event"} {
		if ty.Reserved() {
			t.Errorf("%s is reserved", ty)
		}
	}
	var owned []EventType
	for _, e := range Events() {
		if e.ResumeOwned {
			owned = append(owned, e.Type)
		}
	}
	if got, want := JoinEvents(owned), "worktree_added, worktree_removed, snapshot, resumed, stage_resumed"; got != want {
		t.Errorf("resume owns %s, want %s", got, want)
	}
}
