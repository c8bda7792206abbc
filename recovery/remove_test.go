package recovery_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/recovery"
)

func lastEvent(t *testing.T, f *fixture) ledger.Event {
	t.Helper()
	events, err := f.store.Log(context.Background(), f.run)
	if err != nil {
		t.Fatal(err)
	}
	return events[len(events)-1]
}

func recoveryRefs(t *testing.T, f *fixture) []string {
	t.Helper()
	return strings.Fields(run(t, f.dir, "for-each-ref", "--format=%(refname)", "refs/atlas/recovery/"))
}

// A clean worktree whose HEAD its branch keeps: nothing to lose, no snapshot.
func TestRemoveCleanTakesNoSnapshot(t *testing.T) {
	t.Parallel() // its own repository; no package globals, no Setenv
	f := newFixture(t, 0)
	wt := f.worktree("n")
	res, err := recovery.PreserveAndRemove(context.Background(), f.store, f.run, "n", recovery.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Snapshot != nil || res.Risk.Any() {
		t.Fatalf("snapshot of a clean worktree: %+v", res)
	}
	if _, err := os.Lstat(wt); !os.IsNotExist(err) {
		t.Fatalf("worktree still there: %v", err)
	}
	if refs := recoveryRefs(t, f); len(refs) != 0 {
		t.Fatalf("recovery refs: %v", refs)
	}
	if ev := lastEvent(t, f); ev.Type != "worktree_removed" {
		t.Fatalf("last event %s", ev.Type)
	}
	if strings.Contains(run(t, f.dir, "worktree", "list", "--porcelain"), wt) {
		t.Fatal("worktree not pruned")
	}
}

// A clean worktree on a detached HEAD with commits no ref reaches: removing it would
// lose those commits, so it is snapshotted and the snapshot keeps them through gc.
func TestRemoveUnreachableHead(t *testing.T) {
	t.Parallel() // its own repository; no package globals, no Setenv
	f := newFixture(t, 0)
	wt := f.worktree("n")
	corpus[0].apply(t, f, wt) // unreachable-commits
	head := strings.TrimSpace(run(t, wt, "rev-parse", "HEAD"))
	ctx := context.Background()
	res, err := recovery.PreserveAndRemove(ctx, f.store, f.run, "n", recovery.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Snapshot == nil || !res.Risk.Unreachable || res.Risk.Dirty {
		t.Fatalf("want a snapshot for an unreachable HEAD only: %+v", res)
	}
	run(t, f.dir, "reflog", "expire", "--expire=now", "--all")
	run(t, f.dir, "gc", "-q", "--prune=now")
	again := filepath.Join(t.TempDir(), "wt")
	if _, err := recovery.Restore(ctx, f.repo, res.Snapshot.Rec.Commit, again, true); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(run(t, again, "rev-parse", "HEAD")); got != head {
		t.Fatalf("HEAD %s, want %s", got, head)
	}
	run(t, again, "cat-file", "-e", head+"~1:detached-1.txt")
}

// A worktree whose directory was deleted by hand: pruned and recorded, no snapshot.
func TestRemoveMissing(t *testing.T) {
	t.Parallel() // its own repository; no package globals, no Setenv
	f := newFixture(t, 0)
	wt := f.worktree("n")
	remove(t, wt)
	res, err := recovery.PreserveAndRemove(context.Background(), f.store, f.run, "n", recovery.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Snapshot != nil || !res.Risk.Missing {
		t.Fatalf("%+v", res)
	}
	if strings.Contains(run(t, f.dir, "worktree", "list", "--porcelain"), wt) {
		t.Fatal("worktree not pruned")
	}
	if ev := lastEvent(t, f); ev.Type != "worktree_removed" {
		t.Fatalf("last event %s", ev.Type)
	}
}

// A ledger that names the main worktree (or a directory that is no worktree) never
// gets it deleted.
func TestRemoveRefusesWhatIsNotManaged(t *testing.T) {
	t.Parallel() // its own repository; no package globals, no Setenv
	f := newFixture(t, 0)
	plain := filepath.Join(t.TempDir(), "plain")
	write(t, filepath.Join(plain, "keep.txt"), "keep\n")
	ctx := context.Background()
	for node, path := range map[string]string{"main": f.dir, "plain": plain} {
		_, err := f.store.Update(ctx, f.run, func(r *ledger.Run) (*gitstate.Change, error) {
			r.State.Worktrees = append(r.State.Worktrees, ledger.WorktreeRec{Node: node, Path: path})
			return &gitstate.Change{Event: ledger.Event{Type: "test_worktrees"}}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		res, err := recovery.PreserveAndRemove(ctx, f.store, f.run, node, recovery.Options{})
		// A recorded path outside this repository's worktree root that is not one of
		// its linked worktrees reads as another clone's (gitstate.CanonPath): its place
		// here is missing, and only the record goes. Either way the path named is
		// never touched (checked below).
		if err == nil && res != nil && res.Path != path && res.Risk.Missing {
			continue
		}
		if !errors.Is(err, fault.ErrRefused) {
			t.Fatalf("%s: want refused, got %v", node, err)
		}
	}
	if _, err := os.Stat(filepath.Join(f.dir, "staged.txt")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(plain, "keep.txt")); err != nil {
		t.Fatal(err)
	}
}

// A nested repository's files are not in any tree: the worktree is snapshotted but
// not removed.
func TestRemoveRefusesNestedRepository(t *testing.T) {
	t.Parallel() // its own repository; no package globals, no Setenv
	f := newFixture(t, 0)
	wt := f.worktree("n")
	nested := filepath.Join(wt, "vendor", "lib")
	run(t, "", "init", "-q", nested)
	write(t, filepath.Join(nested, "code.txt"), "only here\n")
	run(t, nested, "add", "-A")
	run(t, nested, "commit", "-q", "-m", "nested")
	write(t, filepath.Join(nested, "code.txt"), "uncommitted in the nested repo\n")
	res, err := recovery.PreserveAndRemove(context.Background(), f.store, f.run, "n", recovery.Options{})
	if !errors.Is(err, fault.ErrRefused) {
		t.Fatalf("want refused, got %v", err)
	}
	if res == nil || res.Snapshot == nil || len(res.Snapshot.Manifest.Embedded) != 1 {
		t.Fatalf("want a snapshot naming the nested repository: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(nested, "code.txt")); err != nil {
		t.Fatalf("nested repository removed: %v", err)
	}
}

// Unknown run, node and snapshot are not-found errors; bad names are usage errors.
func TestRemoveErrors(t *testing.T) {
	t.Parallel() // its own repository; no package globals, no Setenv
	f := newFixture(t, 0)
	ctx := context.Background()
	if _, err := recovery.PreserveAndRemove(ctx, f.store, f.run, "nope", recovery.Options{}); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("unknown node: %v", err)
	}
	if _, err := recovery.PreserveAndRemove(ctx, f.store, "nope", "n", recovery.Options{}); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("unknown run: %v", err)
	}
	if _, err := recovery.PreserveAndRemove(ctx, f.store, f.run, "../x", recovery.Options{}); !errors.Is(err, fault.ErrUsage) {
		t.Errorf("bad node: %v", err)
	}
	if _, err := recovery.Find(ctx, f.store, "r1/none"); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("unknown snapshot: %v", err)
	}
}

// Options.Always snapshots even a worktree with nothing to lose.
func TestRemoveAlways(t *testing.T) {
	t.Parallel() // its own repository; no package globals, no Setenv
	f := newFixture(t, 0)
	f.worktree("n")
	res, err := recovery.PreserveAndRemove(context.Background(), f.store, f.run, "n", recovery.Options{Always: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Snapshot == nil || res.Risk.Any() {
		t.Fatalf("want a snapshot of a clean worktree: %+v", res)
	}
}

// recover branches at the stage's last attempt baseline, numbers replays, and still
// makes the replay branch when the stage's worktree is gone (nothing to snapshot).
func TestRecoverAtStageBaseline(t *testing.T) {
	t.Parallel() // its own repository; no package globals, no Setenv
	f := newFixture(t, 0)
	ctx := context.Background()
	theirs := strings.TrimSpace(run(t, f.dir, "rev-parse", "theirs"))
	_, err := f.store.Update(ctx, f.run, func(r *ledger.Run) (*gitstate.Change, error) {
		if err := ledger.ApplyStageTransition(r, "code", ledger.StageDispatched, "", testenv.HexOID(theirs), ledger.Stamp(time.Now().UTC()), ledger.RandomNonce()); err != nil {
			return nil, err
		}
		data := ledger.StageTransitionData{From: ledger.StagePending, To: ledger.StageDispatched}
		return &gitstate.Change{Event: ledger.StageTransitionEvent(ledger.About{Stage: "code"}, data)}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wt := f.worktree("code")
	write(t, filepath.Join(wt, "work.txt"), "the stage's work\n")
	first, err := recovery.Recover(ctx, f.store, f.run, recovery.RecoverRequest{Stage: "code"})
	if err != nil {
		t.Fatal(err)
	}
	if first.Snapshot == nil || first.Source != recovery.SourceWorktree || first.Replay.Branch != "atlas/r1/replay/code/1" || first.Replay.Baseline.String() != theirs {
		t.Fatalf("first recover: %+v", first)
	}
	if got := strings.TrimSpace(run(t, f.dir, "rev-parse", "refs/heads/atlas/r1/replay/code/1")); got != theirs {
		t.Fatalf("replay branch at %s, want the stage's baseline %s", got, theirs)
	}
	if _, err := os.Stat(filepath.Join(wt, "work.txt")); err != nil {
		t.Fatalf("recover touched the original worktree: %v", err)
	}
	remove(t, wt)
	second, err := recovery.Recover(ctx, f.store, f.run, recovery.RecoverRequest{Stage: "code"})
	if err != nil {
		t.Fatal(err)
	}
	if second.Snapshot != nil || second.Replay.Branch != "atlas/r1/replay/code/2" {
		t.Fatalf("second recover: %+v", second)
	}
	if ev := lastEvent(t, f); ev.Type != "stage_recovered" || ev.Stage != "code" {
		t.Fatalf("last event %+v", ev)
	}
}

// A file rewritten with the same size and mtime as its index entry records, the index
// no newer than the entry: only git's racy-entry check can see the change, and the
// snapshot must hold the new bytes. (The private index copies keep the index's mtime
// for this check; the transcript resume_graph, which rewrites a file right after the
// worktree is made, failed 4 times in 20 before they did, 0 in 20 after.)
func TestSnapshotSeesRacyRewrite(t *testing.T) {
	t.Parallel() // its own repository; no package globals, no Setenv
	f := newFixture(t, 0)
	wt := f.worktree("n")
	gitDir := strings.TrimSpace(run(t, wt, "rev-parse", "--absolute-git-dir"))
	file := filepath.Join(wt, "staged.txt")
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	// Same size, same mtime as the index entry records: only git's racy-entry check
	// (entry not older than the index file) can see the change.
	write(t, file, "STAGED\n")
	m := st.ModTime()
	for _, p := range []string{file, filepath.Join(gitDir, "index")} {
		if err := os.Chtimes(p, m, m); err != nil {
			t.Fatal(err)
		}
	}
	res, err := recovery.PreserveAndRemove(context.Background(), f.store, f.run, "n", recovery.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Snapshot == nil {
		t.Fatal("the rewrite was not seen: no snapshot")
	}
	if got := run(t, f.dir, "cat-file", "blob", res.Snapshot.Rec.Commit.String()+":staged.txt"); got != "STAGED\n" {
		t.Fatalf("snapshot holds %q", got)
	}
}

// git renames a transaction's ref locks one at a time, the ledger's first: a writer
// killed between them leaves the snapshot recorded, its ref missing and the ref's
// lock behind. Taking the same snapshot again pins the recorded commit, once the dead
// writer's lock is old enough to be taken for one; removal then has its snapshot. A
// lock left long enough ago is removed at once; a fresh one is waited out, and the
// wait told (once, with the lock's path) to the repository's OnLockWait.
func TestSnapshotRecordedWithoutRef(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		age   time.Duration // the lock's when the removal starts
		stale time.Duration // the repository's StaleLockAge
		told  bool
	}{
		{"old-lock", time.Hour, 300 * time.Millisecond, false}, // however slow the machine, taken at once
		// Still fresh when the snapshot is retaken, however slow the machine: the
		// removal's work before it (status, the snapshot's commits) takes well under 3 s.
		{"fresh-lock", 0, 3 * time.Second, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFixture(t, 0)
			f.store.Repo.StaleLockAge = c.stale // this repository's alone
			var told []string
			f.store.Repo.OnLockWait = func(lock string, _ time.Duration) { told = append(told, lock) }
			wt := f.worktree("n")
			write(t, filepath.Join(wt, "work.txt"), "agent's work\n")
			target := recovery.Target{Run: f.run, Node: "n", Stage: "code", Path: wt, Baseline: testenv.HexOID(f.base), Source: recovery.SourceWorktree}
			first, err := recovery.Snapshot(ctx, f.store, target, recovery.Options{Reason: "test"})
			if err != nil {
				t.Fatal(err)
			}
			ref := first.Rec.Ref
			run(t, f.dir, "update-ref", "-d", ref)
			lock := filepath.Join(f.repo.CommonDir, filepath.FromSlash(ref)+".lock")
			write(t, lock, first.Rec.Commit.String()+"\n") // the dead writer's
			old := time.Now().Add(-c.age)
			if err := os.Chtimes(lock, old, old); err != nil {
				t.Fatal(err)
			}

			removed, err := recovery.PreserveAndRemove(ctx, f.store, f.run, "n", recovery.Options{Reason: "test"})
			if err != nil {
				t.Fatal(err)
			}
			if removed.Snapshot == nil || !removed.Snapshot.Reused || removed.Snapshot.Rec.ID != first.Rec.ID {
				t.Fatalf("want the recorded snapshot reused: %+v", removed.Snapshot)
			}
			if got := strings.TrimSpace(run(t, f.dir, "for-each-ref", "--format=%(objectname)", ref)); got != first.Rec.Commit.String() {
				t.Fatalf("%s = %q after the retake, want the recorded %s", ref, got, first.Rec.Commit)
			}
			if _, err := os.Stat(lock); !os.IsNotExist(err) {
				t.Fatalf("the dead writer's lock is still there (%v)", err)
			}
			if _, err := os.Stat(wt); !os.IsNotExist(err) {
				t.Fatalf("worktree not removed (%v)", err)
			}
			switch {
			case c.told && (len(told) != 1 || filepath.Base(told[0]) != filepath.Base(lock)):
				t.Errorf("told %q; want the lock %s once", told, lock)
			case !c.told && len(told) != 0:
				t.Errorf("told %q of a lock removed at once", told)
			}
		})
	}
}

// Ignored files may hold secrets and snapshots are pushed: a removal keeps them out
// of the snapshot (unless IncludeIgnored) and names each one it deletes, with its
// size; with IncludeIgnored they are in the tree and nothing is named. Everything
// that is not ignored is in the snapshot either way.
func TestRemoveNamesTheIgnoredFilesItDeletes(t *testing.T) {
	t.Parallel()
	for _, include := range []bool{false, true} {
		f := newFixture(t, 0)
		wt := f.worktree("n")
		write(t, filepath.Join(wt, "secret.log"), "token=hunter2\n")
		write(t, filepath.Join(wt, "build", "out.bin"), "12345")
		write(t, filepath.Join(wt, "build", "more.bin"), "123")
		write(t, filepath.Join(wt, "work.txt"), "not ignored\n")
		res, err := recovery.PreserveAndRemove(context.Background(), f.store, f.run, "n", recovery.Options{IncludeIgnored: include})
		if err != nil {
			t.Fatal(err)
		}
		if res.Snapshot == nil {
			t.Fatal("no snapshot of a worktree with work and ignored files")
		}
		tree := run(t, f.dir, "ls-tree", "-r", "--name-only", res.Snapshot.Rec.Commit.String())
		if !strings.Contains(tree, "work.txt\n") {
			t.Fatalf("the snapshot lacks work.txt:\n%s", tree)
		}
		if got := strings.Contains(tree, "secret.log\n") && strings.Contains(tree, "build/out.bin\n"); got != include {
			t.Fatalf("include %v: ignored files in the snapshot: %v\n%s", include, got, tree)
		}
		var named []string
		for _, e := range res.IgnoredDeleted {
			named = append(named, fmt.Sprintf("%s dir=%v files=%d size=%d", e.String(), e.Dir, e.Files, e.Size))
		}
		want := "build dir=true files=2 size=8,secret.log dir=false files=1 size=14"
		if include {
			want = ""
		}
		if got := strings.Join(named, ","); got != want {
			t.Fatalf("include %v: deleted ignored %q, want %q", include, got, want)
		}
		if !include && !strings.Contains(string(lastEvent(t, f).Data), `"ignored_deleted"`) {
			t.Fatalf("the worktree_removed event does not name the ignored files: %s", lastEvent(t, f).Data)
		}
	}
}
