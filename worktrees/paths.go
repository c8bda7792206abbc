// Package worktrees manages the linked worktrees git-atlas owns, one per node and one for a run's union: where they live, creating, inspecting and recreating them, and integrating node branches into the union.
package worktrees

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// Union is the reserved node name of a run's union worktree.
const Union = "union"

// RootConfig is the git config key that moves the managed worktrees' root.
const RootConfig = gitstate.WorktreeRootConfig

// Root is the directory managed worktrees live under: atlas.worktreeRoot when set
// (a relative value is taken from the main worktree's top level, or from the git dir
// of a bare repository), else <git-common-dir>/atlas/worktrees. Both are outside every
// user's working tree by default; Add refuses a root that is not. The ledger records
// paths under it per repository (gitstate/paths.go), so a pulled run's worktrees are
// made here, never at another clone's paths.
func Root(ctx context.Context, repo *git.Repository) (string, error) {
	return gitstate.WorktreeRoot(ctx, repo)
}

// BranchFor is the short name of the branch a node's worktree has checked out:
// atlas/<run>/node/<node>, or atlas/<run>/union for the union (docs/contract.md §3).
func BranchFor(run, node string) string {
	if node == Union {
		return "atlas/" + run + "/union"
	}
	return "atlas/" + run + "/node/" + node
}

// branchRef is the full ref name of a short branch name.
func branchRef(branch string) string { return "refs/heads/" + branch }

// pinName is the pin of a node's baseline, under refs/atlas/pins/<run>/.
func pinName(node string) string { return "node/" + node }

// lockReason names the run and node, so that a person reading `git worktree list`
// knows who owns the worktree and an interrupted union can recognise its own.
func lockReason(run, node string) string { return gitstate.LockReason(run, node) }

// canon resolves symlinks in the longest existing prefix of p, so that a path we
// computed compares equal to the one git recorded for the same directory.
func canon(p string) string { return gitstate.CanonPath(p) }

func samePath(a, b string) bool { return a == b || canon(a) == canon(b) }

// within reports whether p is dir or lies under it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(canon(dir), canon(p))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// findWorktree returns the registered worktree at path, or nil.
func findWorktree(list []git.WorktreeInfo, path string) *git.WorktreeInfo {
	for i := range list {
		if samePath(list[i].Path, path) {
			return &list[i]
		}
	}
	return nil
}

// checkedOutElsewhere returns the path of a worktree other than path that has ref
// checked out ("" when none): git's own guard is bypassed by symbolic-ref, so this
// is ours.
func checkedOutElsewhere(list []git.WorktreeInfo, ref, path string) string {
	for _, w := range list {
		if w.Branch == ref && !samePath(w.Path, path) {
			return w.Path
		}
	}
	return ""
}

// checkRoot refuses a root inside one of the user's working trees (docs/contract.md §3: managed
// worktrees live outside them), except inside its .git directory.
func checkRoot(root string, list []git.WorktreeInfo) error {
	for _, w := range list {
		if w.Bare || within(w.Path, root) {
			continue // a managed worktree, or the root itself is inside it
		}
		if within(root, w.Path) && !within(root, filepath.Join(w.Path, ".git")) {
			return fault.Usage("managed worktrees would live at %s, inside the working tree %s", root, w.Path).
				WithHint("set %s to a directory outside every checkout, or unset it", RootConfig)
		}
	}
	return nil
}

// exists reports whether anything (a file, a directory, a dangling link) is at p.
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// forgetMissing drops git's registration of a worktree whose directory is gone,
// that one only: a global `git worktree prune` would also drop the user's own
// worktrees on an unmounted disk, which they may have locked for that reason or not.
func forgetMissing(ctx context.Context, repo *git.Repository, run string, rec ledger.WorktreeRec, list []git.WorktreeInfo) error {
	w := findWorktree(list, rec.Path)
	if w == nil || exists(rec.Path) {
		return nil
	}
	m, err := Own(ctx, repo, run, rec)
	if err != nil {
		return err
	}
	if err := m.Remove(ctx); err != nil {
		return fmt.Errorf("forget missing worktree %s: %w", w.Path, err)
	}
	return nil
}

// materialize creates the worktree of rec at commit: detached and locked first (so
// that no branch, not even one checked out in the user's main worktree, can block
// it, docs/git-notes.md), then its HEAD is pointed at the node's branch, which the caller has
// already set to commit. The user's hooks never run (every internal call disables
// them).
// Materialize is how every managed worktree is checked out, by this package and by
// recovery's replay worktrees alike: see materialize.
func Materialize(ctx context.Context, repo *git.Repository, run string, rec ledger.WorktreeRec, commit git.OID) error {
	return materialize(ctx, repo, run, rec, commit)
}

func materialize(ctx context.Context, repo *git.Repository, run string, rec ledger.WorktreeRec, at git.OID) error {
	// A checkout, and its marker beside it, is made only under the managed root.
	if _, err := Placed(ctx, repo, run, rec); err != nil {
		return err
	}
	// The marker beside the directory says "git-atlas is making this checkout". It is
	// owned (an flock that dies with this process and the git it starts): a held one is
	// a checkout in progress, which nobody else touches; one left by a killed process
	// marks a half-made checkout, which is snapshotted like any worktree before it is
	// removed (an agent may have been given its path and worked in it).
	m, tookOver, err := ClaimMaking(run, rec)
	if err != nil {
		return err
	}
	if tookOver {
		m.Drop()
		return fault.Conflict("worktree %s of node %s was left half-made by a process that died", rec.Path, rec.Node).
			WithHint("run the command again: it preserves what is there and makes the worktree anew")
	}
	if exists(rec.Path) { // another process made it between our look and our marker
		_ = m.Done()
		return errMadeConcurrently(rec)
	}
	if at.IsZero() {
		_ = m.Done()
		return fmt.Errorf("worktree %s of node %s: no commit to check out", rec.Path, rec.Node)
	}
	if err := repo.AddWorktree(ctx, rec.Path, at, lockReason(run, rec.Node), m.File()); err != nil {
		if !exists(rec.Path) {
			_ = m.Done() // git made nothing (it cleans up after itself)
		} else {
			m.Drop() // something is there: half-made, for the next claimant to preserve
		}
		return fmt.Errorf("create worktree %s: %w", rec.Path, err)
	}
	wt, err := Own(ctx, repo, run, rec)
	if err == nil {
		err = attach(ctx, wt, rec)
	}
	if err == nil {
		err = bootstrap(ctx, repo, run, rec)
	}
	if err != nil {
		m.Drop()
		return err
	}
	return m.Done()
}

const materializingSuffix = ".atlas-materializing"

// MaterializingSuffix ends the name of a checkout's marker beside it.
const MaterializingSuffix = materializingSuffix

// errMadeConcurrently is the conflict of a worktree another process made first.
func errMadeConcurrently(rec ledger.WorktreeRec) error {
	return madeConcurrently{fault.Conflict("worktree %s of node %s was made concurrently by another process", rec.Path, rec.Node).
		WithHint("run the command again")}
}

// madeConcurrently tells Add that the worktree it was about to make now exists.
type madeConcurrently struct{ error }

func (e madeConcurrently) Unwrap() error { return e.error }

// ClaimMaking makes this process the owner of the "being made" marker of rec's
// worktree. tookOver: the marker's owner died, so the directory (if any) is a
// half-made checkout that may hold an agent's work. A live owner is a conflict.
func ClaimMaking(run string, rec ledger.WorktreeRec) (m *git.Marker, tookOver bool, err error) {
	m, tookOver, err = git.ClaimMarker(rec.Path+materializingSuffix, "git-atlas run "+run+" node "+rec.Node)
	if held, ok := errors.AsType[*git.MarkerHeldError](err); ok {
		return nil, false, fault.Conflict("worktree %s of node %s is being made by another git-atlas process (%s)", rec.Path, rec.Node, held.Owner).
			WithHint("wait for it to finish, then run the command again")
	}
	if err != nil {
		return nil, false, fmt.Errorf("mark worktree %s as being made: %w", rec.Path, err)
	}
	return m, tookOver, nil
}

// Making says whether a checkout of path was begun and not finished: inProgress
// while the process making it lives, halfMade when that process died (what is
// there may hold an agent's work: snapshot it before anything is removed).
func Making(path string) (inProgress, halfMade bool, owner string) {
	ok, live, owner := git.ProbeMarker(path + materializingSuffix)
	return ok && live, ok && !live, owner
}

// SetAsideMark is in the name of a directory SetAsideUnreadable set aside:
// <root>/<run>/<node>.atlas-broken-<random>.
const SetAsideMark = ".atlas-broken-"

// SetAside lists the directories SetAsideUnreadable left under the managed root
// (of run, or of every run when run is ""), sorted. Each holds whatever an agent
// wrote into a checkout git could not read: nothing removes them, so they are
// reported (resume, audit) until a person has looked.
func SetAside(root, run string) []string {
	if run == "" {
		run = "*"
	}
	found, _ := filepath.Glob(filepath.Join(root, run, "*"+SetAsideMark+"*"))
	var dirs []string
	for _, p := range found {
		if st, err := os.Lstat(p); err == nil && st.IsDir() {
			dirs = append(dirs, p)
		}
	}
	sort.Strings(dirs)
	return dirs
}

// SetAsideUnreadable renames a worktree directory git cannot read (no HEAD, or a
// HEAD at no commit: a checkout killed before git wrote it; a .git file deleted by
// hand) aside, whole,
// next to where it was, and drops git's registration of it, so that nothing in it is
// ever deleted; an empty directory holds nothing and is just removed. It returns the
// new path, or "" when the directory was readable or absent. Only a directory under
// the managed root (Placed) is touched: any other is refused.
func SetAsideUnreadable(ctx context.Context, repo *git.Repository, run string, rec ledger.WorktreeRec) (string, error) {
	path, err := Placed(ctx, repo, run, rec)
	if err != nil {
		return "", err
	}
	st, err := os.Lstat(path)
	if err != nil || !st.IsDir() {
		return "", nil
	}
	// Readable means what a snapshot needs: a HEAD and a status. `git worktree add`
	// killed early leaves HEAD at the null id ("bad object HEAD" for status).
	wt := repo.Worktree(path)
	if _, _, err := wt.Head(ctx); err == nil {
		if _, err := wt.Dirty(ctx); err == nil {
			return "", nil
		}
	}
	forget := func() error {
		rec.Path = path
		m, err := Own(ctx, repo, run, rec) // the directory is gone: its registration, if any
		if err != nil {
			return err
		}
		return m.Remove(ctx)
	}
	if entries, err := os.ReadDir(path); err == nil && len(entries) == 0 {
		if err := os.Remove(path); err != nil {
			return "", err
		}
		return "", forget()
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	aside := fmt.Sprintf("%s%s%x", path, SetAsideMark, b)
	if err := os.Rename(path, aside); err != nil {
		return "", fmt.Errorf("set aside unreadable worktree %s: %w", path, err)
	}
	return aside, forget()
}

// attach points the managed worktree's HEAD at rec's branch.
func attach(ctx context.Context, m *git.Managed, rec ledger.WorktreeRec) error {
	if err := m.AttachBranch(ctx, branchRef(rec.Branch), "git-atlas: attach "+rec.Branch); err != nil {
		return fmt.Errorf("check out %s in %s: %w", rec.Branch, rec.Path, err)
	}
	return nil
}

// lock locks a managed worktree that someone unlocked.
func lock(ctx context.Context, m *git.Managed, run, node string) error {
	if err := m.Lock(ctx, lockReason(run, node)); err != nil {
		return fmt.Errorf("lock worktree %s: %w", m.Path, err)
	}
	return nil
}
