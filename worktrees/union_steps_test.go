package worktrees

import (
	"errors"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/ledger"
)

// testPlace is a union of run r1 at head h2 whose worktree would live at path, with
// the worktrees git lists.

// Commit ids the union's steps compare, as git prints them.
var (
	b0 = strings.Repeat("b", 40)
	h1 = strings.Repeat("1", 40)
	h2 = strings.Repeat("2", 40)
	x9 = strings.Repeat("9", 40)
)

func testPlace(recorded bool, oldTip string, list ...git.WorktreeInfo) *unionPlace {
	rec := ledger.WorktreeRec{Node: Union, Path: "/nowhere/atlas/r1/union", Branch: BranchFor("r1", Union), Baseline: testenv.HexOID(b0), Head: testenv.HexOID(h2)}
	p := &unionPlace{run: "r1", rec: rec, list: list, ref: branchRef(rec.Branch), oldTip: oldTip}
	if recorded {
		prev := rec
		prev.Head = testenv.HexOID(h1)
		p.prev = &prev
	}
	return p
}

func TestUnionCheckBranch(t *testing.T) {
	t.Parallel()
	ref := branchRef(BranchFor("r1", Union))
	elsewhere := git.WorktreeInfo{Path: "/nowhere/other", Head: h1, Branch: ref}
	for _, c := range []struct {
		name   string
		oldTip string
		built  string
		force  bool
		list   []git.WorktreeInfo
		want   error // a fault kind, or nil
	}{
		{name: "no branch yet", oldTip: ""},
		{name: "branch at the last union", oldTip: h1, built: h1},
		{name: "branch already at the head", oldTip: h2, built: h1},
		{name: "someone committed on it", oldTip: x9, built: h1, want: fault.ErrRefused},
		{name: "someone committed on it, forced", oldTip: x9, built: h1, force: true},
		{name: "checked out in another worktree", oldTip: h1, built: h1, list: []git.WorktreeInfo{elsewhere}, want: fault.ErrConflict},
		{name: "checked out elsewhere, but no move", oldTip: h2, built: h1, list: []git.WorktreeInfo{elsewhere}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := testPlace(true, c.oldTip, c.list...).checkBranch(c.built, c.force)
			if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
				t.Fatalf("checkBranch: %v, want %v", err, c.want)
			}
		})
	}
}

func TestUnionWorktreeSteps(t *testing.T) {
	t.Parallel()
	path := "/nowhere/atlas/r1/union"
	ours := git.WorktreeInfo{Path: path, Head: h1, Branch: branchRef(BranchFor("r1", Union)), Locked: true, LockReason: lockReason("r1", Union)}
	theirs := git.WorktreeInfo{Path: path, Head: h1, Locked: true, LockReason: "mine"}
	onBranch := branchRef(BranchFor("r1", Union))
	for _, c := range []struct {
		name     string
		recorded bool
		taken    bool
		info     Info
		list     []git.WorktreeInfo
		want     unionSteps
		err      error
	}{
		{name: "nothing there", want: unionSteps{create: true}},
		{name: "something else at the path", taken: true, err: fault.ErrConflict},
		{name: "recorded, at the head on its branch", recorded: true, taken: true, list: []git.WorktreeInfo{ours},
			info: Info{Exists: true, Locked: true, Head: h2, Branch: onBranch}},
		{name: "recorded, at the head on its branch, dirty", recorded: true, taken: true, list: []git.WorktreeInfo{ours},
			info: Info{Exists: true, Locked: true, Dirty: true, Head: h2, Branch: onBranch}},
		{name: "recorded, at the last union", recorded: true, taken: true, list: []git.WorktreeInfo{ours},
			info: Info{Exists: true, Locked: true, Head: h1, Branch: onBranch}, want: unionSteps{move: true, reattach: true}},
		{name: "recorded, at the head but detached", recorded: true, taken: true, list: []git.WorktreeInfo{ours},
			info: Info{Exists: true, Locked: true, Head: h2}, want: unionSteps{reattach: true}},
		{name: "recorded, unlocked", recorded: true, taken: true, list: []git.WorktreeInfo{ours},
			info: Info{Exists: true, Head: h2, Branch: onBranch}, want: unionSteps{lock: true}},
		{name: "recorded, dirty, at another commit", recorded: true, taken: true, list: []git.WorktreeInfo{ours},
			info: Info{Exists: true, Locked: true, Dirty: true, Head: h1, Branch: onBranch}, err: fault.ErrRefused},
		{name: "unrecorded, locked by git-atlas", taken: true, list: []git.WorktreeInfo{ours},
			info: Info{Exists: true, Locked: true, Head: h1, Branch: onBranch}, want: unionSteps{move: true, reattach: true}},
		{name: "unrecorded, locked by someone else", taken: true, list: []git.WorktreeInfo{theirs},
			info: Info{Exists: true, Locked: true, Head: h1}, err: fault.ErrConflict},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := testPlace(c.recorded, h1, c.list...)
			p.taken = c.taken
			got, err := p.worktreeSteps(c.info)
			if (c.err == nil) != (err == nil) || (c.err != nil && !errors.Is(err, c.err)) {
				t.Fatalf("worktreeSteps: %v, want %v", err, c.err)
			}
			if err == nil && got != c.want {
				t.Fatalf("worktreeSteps: %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestUnionNeedsRecord(t *testing.T) {
	t.Parallel()
	u := ledger.UnionRec{Head: testenv.HexOID(h2), Integrated: []string{"a"}}
	same := testPlace(true, h2)
	same.prev.Head = testenv.HexOID(h2)
	if same.needsRecord(&u, u) {
		t.Error("needsRecord true for the union the ledger already has")
	}
	if !same.needsRecord(nil, u) {
		t.Error("needsRecord false for a first union")
	}
	other := u
	other.Integrated = []string{"a", "b"}
	if !same.needsRecord(&u, other) {
		t.Error("needsRecord false for a union that integrated more")
	}
	if p := testPlace(true, h1); !p.needsRecord(&u, u) {
		t.Error("needsRecord false with the branch to move")
	}
	if p := testPlace(false, h2); !p.needsRecord(&u, u) {
		t.Error("needsRecord false for a worktree the ledger lacks")
	}
}
