package audit

import (
	"testing"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// TestGCReasonSpelledByFrontEnd: a gc reason that names a request field is plain
// words until a front end spells it its own way (docs/contract.md §4.6).
func TestGCReasonSpelledByFrontEnd(t *testing.T) {
	t.Parallel()
	a := Action{Kind: DeleteRef}.because("recovery snapshot of a finished run, oldest first, over {max_size} %d", 100)
	if a.Reason != "recovery snapshot of a finished run, oldest first, over max_size 100" {
		t.Errorf("plain reason %q", a.Reason)
	}
	a.Spell(fault.Spelling{Field: func(f string) string { return "--max-size" }})
	if a.Reason != "recovery snapshot of a finished run, oldest first, over --max-size 100" {
		t.Errorf("spelled reason %q", a.Reason)
	}
	b := Action{Kind: DropRun, Reason: "finished"}
	b.Spell(fault.Spelling{Field: func(string) string { return "x" }})
	if b.Reason != "finished" {
		t.Errorf("a reason naming no field changed: %q", b.Reason)
	}
}
