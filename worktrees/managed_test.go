package worktrees

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/ledger"
)

// userWorktree makes a linked worktree of the user's beside the repository, on
// branch name, with a commit; dirty adds an uncommitted change and an ignored .env.
func (f *fixture) userWorktree(name string, dirty bool) string {
	f.t.Helper()
	p := filepath.Join(filepath.Dir(f.dir), name)
	f.git(f.dir, "worktree", "add", "-q", "-b", name, p)
	f.write(p, ".gitignore", ".env\n")
	f.write(p, "work.txt", "work\n")
	f.git(p, "add", ".gitignore", "work.txt")
	f.git(p, "commit", "-q", "-m", "work")
	if dirty {
		f.write(p, "work.txt", "work\nmore\n")
		f.write(p, ".env", "SECRET=1\n")
	}
	return gitstate.CanonPath(p)
}

// state is everything of a worktree of the user's that must never change: its git
// dir's HEAD and index bytes, its branch's tip, and every file's bytes and mode.
func (f *fixture) state(p, branch string) string {
	f.t.Helper()
	admin := strings.TrimSpace(f.git(p, "rev-parse", "--absolute-git-dir"))
	var out []string
	for _, name := range []string{"HEAD", "index"} {
		data, _ := os.ReadFile(filepath.Join(admin, name))
		out = append(out, fmt.Sprintf("%s %x", name, sha256.Sum256(data)))
	}
	out = append(out, "tip "+f.git(f.dir, "rev-parse", "refs/heads/"+branch))
	_ = filepath.WalkDir(p, func(q string, d os.DirEntry, err error) error {
		if err != nil || d.Name() == ".git" {
			return nil
		}
		if st, err := os.Lstat(q); err == nil && st.Mode().IsRegular() {
			data, _ := os.ReadFile(q)
			out = append(out, fmt.Sprintf("%s %v %x", q, st.Mode(), sha256.Sum256(data)))
		}
		return nil
	})
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// setRec records rec for its node in the ledger as a pulled or edited ledger would.
func (f *fixture) setRec(rec ledger.WorktreeRec) {
	f.t.Helper()
	if _, err := f.store.Update(f.ctx, "r1", func(r *ledger.Run) (*gitstate.Change, error) {
		if w := r.State.Worktree(rec.Node); w != nil {
			*w = rec
		} else {
			r.State.Worktrees = append(r.State.Worktrees, rec)
		}
		return &gitstate.Change{Event: ledger.Event{Type: "note"}}, nil
	}); err != nil {
		f.t.Fatal(err)
	}
}

func foreignRefusal(err error) bool {
	return errors.Is(err, git.ErrForeign) && errors.Is(err, fault.ErrRefused) && Foreign(err)
}

// A managed worktree whose .git file was edited to point at the user's linked
// worktree's git dir is foreign (issue 29): the in-place reset, `worktree add` and
// removal's gate refuse it, and the user's worktree keeps its HEAD, index, branch and
// files (the reset would have switched it to the node's branch and rewritten its
// index); the node's branch does not move.
func TestEditedGitFileLeavesTheUsersWorktreeAlone(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ledger.KindSingle)
	feat := f.userWorktree("feat", true)
	rec := f.node("a", "a.txt")
	tip := f.tip("a")
	f.write(rec.Path, "agent.txt", "an agent's file\n")
	admin := filepath.Join(gitstate.CanonPath(f.repo.CommonDir), "worktrees", "feat")
	f.write(rec.Path, ".git", "gitdir: "+admin+"\n")
	before := f.state(feat, "feat")

	if _, err := Own(f.ctx, f.repo, "r1", rec); !foreignRefusal(err) {
		t.Fatalf("Own: %v", err)
	}
	_, started, err := ResetInPlace(f.ctx, f.store, "r1", "a", tip, false)
	if !foreignRefusal(err) || started {
		t.Fatalf("ResetInPlace: started %v, %v; want a foreign refusal before anything", started, err)
	}
	if _, err := Add(f.ctx, f.store, "r1", "a", AddOptions{}); !foreignRefusal(err) {
		t.Fatalf("Add handed out a foreign worktree: %v", err)
	}
	if after := f.state(feat, "feat"); after != before {
		t.Fatalf("the user's worktree changed:\nbefore\n%s\nafter\n%s", before, after)
	}
	if f.tip("a") != tip {
		t.Fatal("the node's branch moved")
	}
	if _, err := os.Stat(filepath.Join(rec.Path, "agent.txt")); err != nil {
		t.Fatalf("the managed directory was cleaned: %v", err)
	}
}

// A record whose branch is not the run's is never recreated or reset (its branch
// would move to the baseline: a branch of the user's, with commits only it holds),
// nor a record adopted at import.
func TestRecordOnAnotherBranchMovesNoBranch(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ledger.KindSingle)
	f.userWorktree("release", false)
	tip := strings.TrimSpace(f.git(f.dir, "rev-parse", "refs/heads/release"))
	f.git(f.dir, "worktree", "remove", filepath.Join(filepath.Dir(f.dir), "release")) // the branch checked out nowhere
	root, err := Root(f.ctx, f.repo)
	if err != nil {
		t.Fatal(err)
	}
	rec := ledger.WorktreeRec{Node: "b", Path: filepath.Join(root, "r1", "b"), Branch: "release", Baseline: testenv.HexOID(f.base), Head: testenv.HexOID(f.base)}
	f.setRec(rec)
	if _, err := Recreate(f.ctx, f.store, "r1", "b", tip); !foreignRefusal(err) {
		t.Fatalf("Recreate: %v", err)
	}
	if _, err := Add(f.ctx, f.store, "r1", "b", AddOptions{}); !foreignRefusal(err) {
		t.Fatalf("Add: %v", err)
	}
	if now := strings.TrimSpace(f.git(f.dir, "rev-parse", "refs/heads/release")); now != tip {
		t.Fatalf("the user's branch moved from %s to %s", tip, now)
	}
	if exists(rec.Path) {
		t.Fatal("a worktree was made for the record")
	}
	adopted := ledger.WorktreeRec{Node: "c", Path: filepath.Join(root, "r1", "c"), Branch: BranchFor("r1", "c"), Adopted: "kimi-atlas"}
	if _, err := Own(f.ctx, f.repo, "r1", adopted); !foreignRefusal(err) {
		t.Fatalf("Own of an adopted record: %v", err)
	}
}

// A symbolic link inside the managed root that points out of it (at a clean worktree
// of the user's) is foreign: the union is not moved, locked or put on its branch
// there.
func TestUnionThroughASymlinkOutOfTheRoot(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ledger.KindSingle)
	f.node("a", "a.txt")
	if _, err := BuildUnion(f.ctx, f.store, "r1", UnionOptions{}); err != nil {
		t.Fatal(err)
	}
	u := *f.load().State.Worktree(Union)
	m, err := Own(f.ctx, f.repo, "r1", u)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Remove(f.ctx); err != nil {
		t.Fatal(err)
	}
	clean := f.userWorktree("clean", false)
	if err := os.Symlink(clean, u.Path); err != nil {
		t.Fatal(err)
	}
	f.node("b", "b.txt") // the union moves on: the worktree would be moved to it
	before := f.state(clean, "clean")
	if _, err := BuildUnion(f.ctx, f.store, "r1", UnionOptions{}); !foreignRefusal(err) {
		t.Fatalf("BuildUnion: %v", err)
	}
	if after := f.state(clean, "clean"); after != before {
		t.Fatalf("the user's worktree changed:\nbefore\n%s\nafter\n%s", before, after)
	}
}

// A record naming another node's or another run's worktree under the managed root,
// on its own run's branch, passes every other check (under the root, .git and git's
// registration agree, the branch is the run's): its place is not <root>/<run>/<node>,
// so it is foreign. Resume would otherwise snapshot that worktree into this run,
// remake it on this run's branch, and push the snapshot with this run.
func TestRecordNamingAnotherPlaceUnderTheRoot(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ledger.KindSingle)
	a := f.node("a", "a.txt")
	f.write(a.Path, "notes.txt", "the agent's work\n")
	before := f.state(a.Path, BranchFor("r1", "a"))
	gate, err := NewGate(f.ctx, f.repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		run string
		rec ledger.WorktreeRec
	}{
		{"r1", ledger.WorktreeRec{Node: "b", Path: a.Path, Branch: BranchFor("r1", "b")}},
		{"r2", ledger.WorktreeRec{Node: "a", Path: a.Path, Branch: BranchFor("r2", "a")}},
	} {
		if _, err := gate.Own(c.run, c.rec); !foreignRefusal(err) || !strings.Contains(err.Error(), "not the place of node "+c.rec.Node+" of run "+c.run) {
			t.Errorf("Own(%s, node %s at %s): %v", c.run, c.rec.Node, c.rec.Path, err)
		}
		if err := gate.Foreign(c.run, c.rec); !foreignRefusal(err) {
			t.Errorf("Foreign(%s, node %s): %v", c.run, c.rec.Node, err)
		}
		if _, err := Placed(f.ctx, f.repo, c.run, c.rec); !foreignRefusal(err) {
			t.Errorf("Placed(%s, node %s): %v", c.run, c.rec.Node, err)
		}
	}
	if _, err := gate.Own("r1", a); err != nil {
		t.Fatalf("the node's own record: %v", err)
	}

	f.setRec(ledger.WorktreeRec{Node: "b", Path: a.Path, Branch: BranchFor("r1", "b"), Baseline: testenv.HexOID(f.base), Head: testenv.HexOID(f.base)})
	if _, started, err := ResetInPlace(f.ctx, f.store, "r1", "b", f.base, false); !foreignRefusal(err) || started {
		t.Fatalf("ResetInPlace: started %v, %v; want a foreign refusal before anything", started, err)
	}
	if after := f.state(a.Path, BranchFor("r1", "a")); after != before {
		t.Fatalf("node a's worktree changed:\nbefore\n%s\nafter\n%s", before, after)
	}
	// Nor is a worktree made at a place of the record's choosing.
	elsewhere := filepath.Join(filepath.Dir(a.Path), "elsewhere")
	f.setRec(ledger.WorktreeRec{Node: "c", Path: elsewhere, Branch: BranchFor("r1", "c"), Baseline: testenv.HexOID(f.base), Head: testenv.HexOID(f.base)})
	if _, err := Recreate(f.ctx, f.store, "r1", "c", ""); !foreignRefusal(err) {
		t.Fatalf("Recreate: %v", err)
	}
	if exists(elsewhere) {
		t.Fatal("a worktree was made at the record's place")
	}
}

// Port blocks are unique only under the port lock: an allocation that cannot take it
// fails (a conflict, to try again) instead of picking blocks without it. Not parallel:
// it shortens the package's wait.
func TestPortsRefusedWithoutTheLock(t *testing.T) {
	f := newFixture(t, ledger.KindSingle)
	defer func(w time.Duration) { portsWait = w }(portsWait)
	portsWait = 20 * time.Millisecond
	release, ok, err := f.repo.TryMutex(portsMutex)
	if err != nil || !ok {
		t.Fatalf("take the port lock: %v %v", ok, err)
	}
	if _, err := AllocatePorts(f.ctx, f.store, "r1", 2); !errors.Is(err, fault.ErrConflict) {
		t.Errorf("an allocation while another holds the lock: %v, want a conflict", err)
	}
	release()
	a, err := AllocatePorts(f.ctx, f.store, "r1", 2)
	if err != nil {
		t.Fatalf("an allocation once the lock is free: %v", err)
	}
	a.Release()
}
