package ops

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/audit"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/recovery"
)

// ignoredSecret puts an ignored file of 8 bytes, secret.env, in the worktree at path.
func (f *wtFixture) ignoredSecret(path string) {
	f.t.Helper()
	f.write(filepath.Join(f.dir, ".git", "info"), "exclude", "*.env\n")
	f.write(path, "secret.env", "TOKEN=1\n")
}

// snapshotHolds reports whether a recovery snapshot of r1 holds name.
func (f *wtFixture) snapshotHolds(name string) bool {
	f.t.Helper()
	for ref := range strings.FieldsSeq(f.git(f.dir, "for-each-ref", "--format=%(refname)", "refs/atlas/recovery/r1")) {
		if _, _, err := testenv.GitRun(f.dir, nil, "", "cat-file", "-e", ref+":"+name); err == nil {
			return true
		}
	}
	return false
}

func onlySecret(list []recovery.IgnoredEntry) bool {
	return len(list) == 1 && list[0].String() == "secret.env" && list[0].Files == 1 && list[0].Size == 8
}

// resume's plan names the ignored files its reset would delete, by name and size
// (docs/contract.md §7); with --include-ignored they go into the snapshot instead, and
// nothing is listed or deleted unkept.
func TestResumeNamesTheIgnoredFilesItWouldDelete(t *testing.T) {
	t.Parallel()
	for _, include := range []bool{false, true} {
		f := newWTFixture(t, ledger.KindSingle, "code")
		wt := f.add("code", "work.txt") // HEAD moved: the reset snapshots it
		f.ignoredSecret(wt.Path)
		snap := SnapshotOptions{IncludeIgnored: include}
		p, err := f.ops.ResumePlan(f.ctx, ResumeRequest{RunID: "r1", Snapshot: snap})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Worktrees) != 1 || p.Worktrees[0].Action != "snapshot" {
			t.Fatalf("plan: %+v", p.Worktrees)
		}
		if got := p.Worktrees[0].IgnoredToDelete; onlySecret(got) == include || (include && len(got) != 0) {
			t.Fatalf("include-ignored %v: the plan lists %+v as to delete", include, got)
		}
		res, err := f.ops.Resume(f.ctx, ResumeRequest{RunID: "r1", Holder: "d1", Snapshot: snap})
		if err != nil {
			t.Fatal(err)
		}
		if deleted := len(res.IgnoredDeleted) == 1 && res.IgnoredDeleted[0].String() == "secret.env"; deleted == include {
			t.Fatalf("include-ignored %v: resume reports deleted %+v (%+v %+v %+v)", include, res.IgnoredDeleted, res.Snapshots, res.RecreatedWorktrees, res.Worktrees)
		}
		if f.snapshotHolds("secret.env") != include {
			t.Fatalf("include-ignored %v: the snapshot holds secret.env: %v", include, !include)
		}
	}
}

// gc's plan names the ignored files each removal would delete; --include-ignored keeps
// them in the removal's snapshot.
func TestGCNamesTheIgnoredFilesItWouldDelete(t *testing.T) {
	t.Parallel()
	for _, include := range []bool{false, true} {
		f := newWTFixture(t, ledger.KindSingle, "main")
		wt := f.finished()
		f.ignoredSecret(wt.Path)
		snap := SnapshotOptions{IncludeIgnored: include}
		plan, err := f.ops.GC(f.ctx, GCRequest{Before: new(time.Duration(0)), Snapshot: snap})
		if err != nil {
			t.Fatal(err)
		}
		var rm *audit.Action
		for i := range plan.Actions {
			if plan.Actions[i].Kind == audit.RemoveWorktree {
				rm = &plan.Actions[i]
			}
		}
		if rm == nil || onlySecret(rm.IgnoredToDelete) == include || (include && len(rm.IgnoredToDelete) != 0) {
			t.Fatalf("include-ignored %v: gc plan %+v", include, plan.Actions)
		}
		res, err := f.ops.GC(f.ctx, GCRequest{Before: new(time.Duration(0)), Apply: true, Snapshot: snap})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range res.Actions {
			if a.Kind == audit.RemoveWorktree && (!a.Done || onlySecret(a.IgnoredDeleted) == include) {
				t.Fatalf("include-ignored %v: gc --apply %+v", include, a)
			}
		}
		if f.snapshotHolds("secret.env") != include {
			t.Fatalf("include-ignored %v: the removal's snapshot holds secret.env: %v", include, !include)
		}
	}
}
