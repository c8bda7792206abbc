package ops

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/worktrees"
)

// A job's scope is judged on its own managed worktree only (docs/contract.md §5.3):
// files changed in the user's checkout, or in a linked worktree of theirs, never
// enter the result; a record rewritten to name the user's worktree is refused as
// foreign, and nothing of that worktree is read.
func TestScopeReadsOnlyTheNodesWorktree(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	lease, wt := f.scopedAPIJob()
	f.write(wt.Path, "api/a.go", "package api\n")
	f.git(wt.Path, "add", "-A")
	f.git(wt.Path, "commit", "-q", "-m", "api")

	// The user's own changes, outside the job's scope: in the main checkout and in a
	// linked worktree of theirs.
	feat := filepath.Join(filepath.Dir(f.dir), "feat")
	f.git(f.dir, "worktree", "add", "-q", "-b", "feat", feat)
	for _, dir := range []string{f.dir, feat} {
		f.write(dir, "README", "the user's edit\n")
		f.write(dir, "users-file.txt", "not the job's\n")
	}
	done := func() error {
		_, err := f.ops.JobDone(f.ctx, JobDoneRequest{Run: "r1", Job: "api", Lease: lease, Status: ledger.ReceiptOK, Worker: Worker{Holder: "w1"}})
		return err
	}
	own := wt.Path
	// A hostile record: the user's linked worktree, marked adopted (a reader keeps an
	// adopted record's path when it names a worktree of this repository).
	f.update(func(r *ledger.Run) { w := r.State.Worktree("api"); w.Path, w.Adopted = feat, "kimi-atlas" })
	err := done()
	if err == nil || !worktrees.Foreign(err) || strings.Contains(err.Error(), "users-file.txt") || strings.Contains(err.Error(), "README") {
		t.Fatalf("a record naming the user's worktree: %v; want refused as foreign, naming none of the user's files", err)
	}
	f.update(func(r *ledger.Run) { w := r.State.Worktree("api"); w.Path, w.Adopted = own, "" })
	if err := done(); err != nil {
		t.Fatalf("the job changed only api/: %v (the user's files entered its scope check)", err)
	}
}
