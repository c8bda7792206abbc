package recovery

import (
	"context"
	"testing"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// TestPatchOutErrorNamesTheField: recover's patch_out errors name the request's
// field, which each front end spells (docs/contract.md §4.6): --patch-out on the
// command line, patch_out over MCP.
func TestPatchOutErrorNamesTheField(t *testing.T) {
	t.Parallel()
	_, err := patchOut(context.Background(), nil, "out.patch", false)
	flag, _ := fault.SpelledBy(err, fault.Spelling{Field: func(string) string { return "--patch-out" }})
	field, _ := fault.SpelledBy(err, fault.Spelling{Field: func(f string) string { return f }})
	if flag != `--patch-out "out.patch" is not an absolute path` || field != `patch_out "out.patch" is not an absolute path` {
		t.Errorf("spelled %q and %q", flag, field)
	}
}
