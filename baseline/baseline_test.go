package baseline

import (
	"context"
	"testing"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// TestResolveHintNamesTheField: a baseline that is no revision is refused before git
// is asked, its hint naming the request's field (docs/contract.md §4.6).
func TestResolveHintNamesTheField(t *testing.T) {
	t.Parallel()
	_, err := Resolve(context.Background(), nil, "-x")
	_, flag := fault.SpelledBy(err, fault.Spelling{Field: func(f string) string { return "--" + f }})
	_, field := fault.SpelledBy(err, fault.Spelling{Field: func(f string) string { return f }})
	if flag != "pass --baseline with a commit, branch or tag" || field != "pass baseline with a commit, branch or tag" {
		t.Errorf("hints %q and %q", flag, field)
	}
}
