package git

import (
	"context"
	"path/filepath"
	"testing"
)

// Reachable answers in process where a branch names the commit, in a clone too (its
// refs/remotes/origin/HEAD, a symbolic ref, sent every question to git), and asks git
// for a commit only history contains, or none does. Not parallel: it counts processes.
func TestReachableInProcess(t *testing.T) {
	ctx := context.Background()
	src, g := testRepo(t, kinds[0])
	g("", "commit", "-q", "--allow-empty", "-m", "second")
	dir := filepath.Join(t.TempDir(), "clone")
	mustGit(t, "", nil, "", "clone", "-q", "file://"+src.TopLevel, dir)
	r, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	tip, parent := mustOID(t, g("", "rev-parse", "HEAD")), mustOID(t, g("", "rev-parse", "HEAD^"))
	orphan := mustOID(t, mustGit(t, dir, nil, "", "commit-tree", "-m", "orphan", g("", "rev-parse", "HEAD^{tree}")))
	for _, c := range []struct {
		name      string
		commit    OID
		reachable bool
		asksGit   bool
	}{
		{"a branch's tip", tip, true, false},
		{"in history only", parent, true, true},
		{"in no ref's history", orphan, false, true},
	} {
		before := Started()
		got, err := r.Reachable(ctx, c.commit)
		if err != nil || got != c.reachable {
			t.Errorf("%s: Reachable = %v, %v; want %v", c.name, got, err, c.reachable)
		}
		if asked := Started() > before; asked != c.asksGit {
			t.Errorf("%s: asked git = %v, want %v", c.name, asked, c.asksGit)
		}
	}
}
