package ops

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/baseline"
	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/ledger"
)

// wtFixture is a repository with one commit and run r1 started at it, for the
// worktree and recovery operations.
type wtFixture struct {
	t    *testing.T
	ctx  context.Context
	dir  string
	ops  *Ops
	base string
}

// wtBase is the commit of the repository newWTFixture copies, set when it was built.
var wtBase string

// newWTFixture makes the repository and run r1 of kind, with stages (a single run's).
// The repository, one commit of a README on main, is a copy of one built once for the
// package (testenv.CopyTemplate): one git process for each fixture, not four.
func newWTFixture(t *testing.T, kind string, stages ...string) *wtFixture {
	t.Helper()
	dir := t.TempDir() // git's environment is TestMain's (testenv.Pin)
	f := &wtFixture{t: t, ctx: context.Background(), dir: filepath.Join(dir, "repo")}
	testenv.CopyTemplate(t, f.dir, "wtFixture", func(tmpl string) error {
		if err := os.WriteFile(filepath.Join(tmpl, "README"), []byte("hello\n"), 0o644); err != nil {
			return err
		}
		for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "initial"}} {
			if _, err := testenv.GitErr(tmpl, "", args...); err != nil {
				return err
			}
		}
		out, err := testenv.GitErr(tmpl, "", "rev-parse", "HEAD")
		wtBase = strings.TrimSpace(out)
		return err
	})
	repo, err := git.Open(f.ctx, f.dir)
	if err != nil {
		t.Fatal(err)
	}
	f.ops = New(repo)
	f.base = wtBase
	h := ledger.Header{RunID: "r1", Kind: kind, Baseline: testenv.HexOID(f.base), Stages: []ledger.StageDef{}}
	st := ledger.State{RunID: "r1", Status: ledger.RunRunning, Stages: []ledger.StageState{}}
	for _, s := range stages {
		h.Stages = append(h.Stages, ledger.StageDef{Name: s})
		st.Stages = append(st.Stages, ledger.StageState{Name: s, Status: ledger.StagePending})
	}
	if _, err := f.ops.Store(ledger.Writer{}).Create(f.ctx, h, st, ledger.Event{Type: ledger.EventRunStarted}, baseline.Pin("r1", "baseline", f.base)); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *wtFixture) git(dir string, args ...string) string {
	f.t.Helper()
	out, err := testenv.GitErr(dir, "", args...)
	if err != nil {
		f.t.Fatal(err)
	}
	if len(args) > 0 && args[0] == "config" {
		// A command reads configuration once (internal/git config.go); the next
		// operation here stands for the next command, which reads it anew.
		f.ops.Repo.ReloadConfig()
	}
	return out
}

func (f *wtFixture) write(dir, name, content string) {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// add gives node its worktree (as driver d1) and, with a file, commits it there.
func (f *wtFixture) add(node, file string) *WorktreeAddResult {
	f.t.Helper()
	res, err := f.ops.WorktreeAdd(f.ctx, WorktreeAddRequest{Run: "r1", Node: node, Driver: Driver{Holder: "d1"}})
	if err != nil {
		f.t.Fatal(err)
	}
	if file != "" {
		f.write(res.Path, file, node+"\n")
		f.git(res.Path, "add", file)
		f.git(res.Path, "commit", "-q", "-m", node)
	}
	return res
}

// update changes r1's state directly, as a test, writing as driver d1.
func (f *wtFixture) update(fn func(r *ledger.Run)) {
	f.t.Helper()
	_, err := f.ops.Store(Driver{Holder: "d1"}.Writer()).Update(f.ctx, "r1", func(r *ledger.Run) (*gitstate.Change, error) {
		fn(r)
		return &gitstate.Change{Event: ledger.Event{Type: "test_state"}}, nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *wtFixture) load() *ledger.Run {
	f.t.Helper()
	r, err := f.ops.Reader().Load(f.ctx, "r1")
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func TestWorktreeAddThenFindsIt(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle)
	res := f.add("a", "")
	if !res.Created || res.RunID != "r1" || res.Node != "a" || res.Baseline != f.base || res.Head != f.base || res.Branch == "" {
		t.Fatalf("first add: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(res.Path, "README")); err != nil {
		t.Fatalf("the worktree was not checked out: %v", err)
	}
	again := f.add("a", "")
	if again.Created || again.Recreated || again.Path != res.Path {
		t.Fatalf("second add: %+v, want the same worktree found", again)
	}
	list, err := f.ops.WorktreeList(f.ctx, WorktreeListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Worktrees) != 1 || list.Worktrees[0].Path != res.Path || !list.Worktrees[0].Locked || !list.Worktrees[0].OnBranch || list.Worktrees[0].Dirty {
		t.Fatalf("list: %+v", list.Worktrees)
	}
}

// A job's lease makes the add the worker's: the live driver lease of another
// process is neither needed nor touched. Without the lease, the running job's
// worktree is refused.
func TestWorktreeAddWithLeaseWritesAsTheWorker(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	tok := ledger.LeaseToken("a", 1, 0, "")
	f.update(func(r *ledger.Run) {
		r.State.Driver = &ledger.Lease{Holder: "boss", ExpiresAt: ledger.Stamp(time.Now().UTC().Add(time.Hour))}
		r.State.Jobs = []ledger.Job{{ID: "a", State: ledger.JobRunning, Needs: []string{}, Attempts: 1, Lease: tok, Holder: "w1",
			ExpiresAt: ledger.Stamp(time.Now().UTC().Add(time.Hour))}}
	})
	_, err := f.ops.WorktreeAdd(f.ctx, WorktreeAddRequest{Run: "r1", Node: "a", Driver: Driver{Holder: "w1"}})
	if !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("add without the lease: %v, want a conflict", err)
	}
	res, err := f.ops.WorktreeAdd(f.ctx, WorktreeAddRequest{Run: "r1", Node: "a", Lease: tok, Driver: Driver{Holder: "w1"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Created {
		t.Fatalf("add with the lease: %+v", res)
	}
	if d := f.load().State.Driver; d == nil || d.Holder != "boss" {
		t.Fatalf("driver lease after the worker's add: %+v, want boss's untouched", d)
	}
}

// Removing a worktree with work in it snapshots it first; the snapshot is listed,
// shown and restores byte for byte.
func TestWorktreeRemoveOfDirtyWorktreeSnapshotsFirst(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle)
	wt := f.add("a", "")
	f.write(wt.Path, "notes.txt", "unsaved work\n")
	res, err := f.ops.WorktreeRemove(f.ctx, WorktreeRemoveRequest{Run: "r1", Node: "a", Driver: Driver{Holder: "d1"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Removed || res.Snapshot == nil || len(res.Reasons) == 0 || res.Path != wt.Path {
		t.Fatalf("remove: %+v", res)
	}
	if _, err := os.Stat(wt.Path); !os.IsNotExist(err) {
		t.Fatalf("the worktree is still there: %v", err)
	}
	list, err := f.ops.RecoveryList(f.ctx, RecoveryListRequest{Run: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Snapshots) != 1 || list.Snapshots[0].ID != res.Snapshot.ID || list.Snapshots[0].Reason != "worktree remove" || list.Snapshots[0].Node != "a" {
		t.Fatalf("recovery list: %+v, want the snapshot %s", list.Snapshots, res.Snapshot.ID)
	}
	show, err := f.ops.RecoveryShow(f.ctx, RecoveryShowRequest{Snapshot: "r1/" + res.Snapshot.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(show.Unstaged) != 1 || show.Unstaged[0].Path != "notes.txt" || show.Head != f.base || show.Manifest.Node != "a" {
		t.Fatalf("recovery show: %+v", show)
	}
	to := filepath.Join(t.TempDir(), "restored")
	restored, err := f.ops.RecoveryRestore(f.ctx, RecoveryRestoreRequest{Snapshot: res.Snapshot.ID, To: to})
	if err != nil {
		t.Fatal(err)
	}
	if restored.Path != to || restored.RunID != "r1" || restored.Head == nil || *restored.Head != f.base {
		t.Fatalf("restore: %+v", restored)
	}
	if b, err := os.ReadFile(filepath.Join(to, "notes.txt")); err != nil || string(b) != "unsaved work\n" {
		t.Fatalf("restored notes.txt: %q, %v", b, err)
	}
}

func TestWorktreeRemoveOfCleanWorktreeTakesNoSnapshot(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle)
	f.add("a", "")
	res, err := f.ops.WorktreeRemove(f.ctx, WorktreeRemoveRequest{Run: "r1", Node: "a", Driver: Driver{Holder: "d1"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Removed || res.Snapshot != nil || res.Reasons == nil || len(res.Reasons) != 0 {
		t.Fatalf("remove: %+v, want removed, no snapshot, no reasons", res)
	}
}

// The union of a graph run takes its done jobs in dependency order; built again
// with nothing new, it changes nothing.
func TestUnionOfGraphRun(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	f.add("a", "a.txt")
	f.add("b", "b.txt")
	f.add("c", "c.txt")
	f.update(func(r *ledger.Run) {
		r.State.Jobs = []ledger.Job{
			{ID: "a", State: ledger.JobDone, Needs: []string{"b"}},
			{ID: "b", State: ledger.JobDone, Needs: []string{}},
			{ID: "c", State: ledger.JobPending, Needs: []string{}},
		}
	})
	res, err := f.ops.Union(f.ctx, UnionRequest{Run: "r1", Driver: Driver{Holder: "d1"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Integrated, ",") != "b,a" || !res.Changed || res.Conflicted == nil || len(res.Conflicted) != 0 || res.Baseline != f.base {
		t.Fatalf("union: %+v", res)
	}
	for _, name := range []string{"a.txt", "b.txt"} {
		if _, err := os.Stat(filepath.Join(res.Path, name)); err != nil {
			t.Fatalf("union worktree lacks %s: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(res.Path, "c.txt")); !os.IsNotExist(err) {
		t.Fatalf("union worktree holds the pending job's c.txt: %v", err)
	}
	again, err := f.ops.Union(f.ctx, UnionRequest{Run: "r1", Driver: Driver{Holder: "d1"}})
	if err != nil {
		t.Fatal(err)
	}
	if again.Changed || again.Head != res.Head || again.At != res.At {
		t.Fatalf("union again: %+v, want unchanged %s", again, res.Head)
	}
}

// --verify on a run without a verify command is refused before anything is built.
func TestUnionVerifyWithoutVerifyCommandBuildsNothing(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	f.add("a", "a.txt")
	f.update(func(r *ledger.Run) {
		r.State.Jobs = []ledger.Job{{ID: "a", State: ledger.JobDone, Needs: []string{}}}
	})
	_, err := f.ops.Union(f.ctx, UnionRequest{Run: "r1", Verify: true, Driver: Driver{Holder: "d1"}})
	if !errors.Is(err, fault.ErrUsage) {
		t.Fatalf("union --verify: %v, want a usage error", err)
	}
	if u := f.load().State.Union; u != nil {
		t.Fatalf("a union was recorded: %+v", u)
	}
}
