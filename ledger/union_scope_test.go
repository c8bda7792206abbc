package ledger

import (
	"testing"
)

// A pulled ledger is hostile (docs/contract.md §5.3 records these on the union): the job
// names of a union's outside_scope and allowed_outside_scope are checked like every
// other name in the documents.
func TestUnionScopeNamesChecked(t *testing.T) {
	t.Parallel()
	base := testOID("a")
	for _, u := range []UnionRec{
		{Head: base, OutsideScope: map[string][]string{"../x": {"p"}}},
		{Head: base, AllowedOutsideScope: map[string][]string{"-C/tmp": {"p"}}},
	} {
		h := Header{RunID: "r", Kind: KindGraph, Baseline: base}
		st := State{RunID: "r", Status: RunRunning, Union: &u}
		if err := CheckDocuments(&h, &st); err == nil {
			t.Errorf("union %+v: accepted", u)
		}
		u.OutsideScope, u.AllowedOutsideScope = map[string][]string{"ok": {"p"}}, nil
		if err := CheckDocuments(&h, &st); err != nil {
			t.Errorf("a valid job name refused: %v", err)
		}
	}
}
