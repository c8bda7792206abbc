package gitstate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// Worktree paths are per repository. The ledger travels between clones (push, pull),
// but a path means something only in the repository that made it, so a ledger records
// a managed worktree's path relative to the git common dir (rel_path) when it lies
// there, and its absolute path (path) for older readers and for people. Reading, a
// path is always made this repository's: the absolute path when it is this
// repository's (under its common dir, or a worktree git-atlas made here for that node,
// as its lock says), else rel_path joined to this common dir when something is there
// (never a rel_path that climbs out of it), else the absolute path when it is under
// this repository's worktree root; otherwise the worktree is another clone's and not
// here, and its place here comes from the layout, <root>/<run>/<node>. A worktree
// merely registered to this repository is not this repository's managed one: a
// pulled record naming the user's own worktree must not make it git-atlas's
// (worktrees.Own is the gate every change to a worktree goes through).

// WorktreeRootConfig is the git config key that moves the managed worktrees' root.
const WorktreeRootConfig = "atlas.worktreeRoot"

// WorktreeRoot is the directory managed worktrees live under: atlas.worktreeRoot when
// set (a relative value is taken from the main worktree's top level, or from the git
// dir of a bare repository), else <git-common-dir>/atlas/worktrees.
func WorktreeRoot(ctx context.Context, repo *git.Repository) (string, error) {
	root, _, err := repo.ConfigPath(ctx, WorktreeRootConfig)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", WorktreeRootConfig, err)
	}
	if root == "" { // unset or empty
		return CanonPath(repo.Layout().Worktrees()), nil
	}
	if !filepath.IsAbs(root) {
		base := repo.CommonDir
		if filepath.Base(base) == ".git" {
			base = filepath.Dir(base)
		}
		root = filepath.Join(base, root)
	}
	return CanonPath(root), nil
}

// LockReason is the reason git-atlas locks the managed worktree of run's node with
// (`git worktree lock`): a person reading `git worktree list` knows who owns it, and
// this repository's own registration (local, never in a ledger) says that git-atlas
// made it.
func LockReason(run, node string) string { return fmt.Sprintf("git-atlas run %s node %s", run, node) }

// CanonPath resolves symlinks in the longest existing prefix of p, so that a path we
// computed compares equal to the one git recorded for the same directory.
func CanonPath(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for cur := p; ; {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// under reports whether p is dir or lies below it (both clean and absolute).
func under(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// common is this repository's common dir, symlinks resolved (computed once).
func (s *Store) common() string {
	s.commonOnce.Do(func() { s.commonDir = CanonPath(s.Repo.CommonDir) })
	return s.commonDir
}

// root is this repository's worktree root (read once, when first needed: only a path
// outside the common dir needs it).
func (s *Store) root(ctx context.Context) (string, error) {
	s.rootOnce.Do(func() { s.rootDir, s.rootErr = WorktreeRoot(ctx, s.Repo) })
	return s.rootDir, s.rootErr
}

// localPath is where a recorded worktree is in this repository. abs is the writer's
// absolute path, rel its path from the writer's common dir ("" when it had none).
// node is the record's node ("" for a replay's path): a worktree git-atlas made for
// it here under a root the configuration has moved away from since is found by its
// lock. adopted: import recorded a worktree another system made, kept where it is
// when it is a worktree of this repository (nothing ever changes it). Any other path
// is not believed because it names a worktree of this repository: a ledger is shared
// data, and a record of a pulled run naming one of the user's own worktrees is
// another clone's path, whose place here comes from the layout. Whatever this
// returns, nothing changes a worktree that worktrees.Own refuses.
func (s *Store) localPath(ctx context.Context, run, node, rel, abs string, adopted bool) string {
	if abs != "" && filepath.IsAbs(abs) {
		// Recorded paths are canonical already: the common case costs no system call.
		if p := filepath.Clean(abs); under(p, s.common()) {
			return p // this repository's
		}
		p := CanonPath(abs)
		if under(p, s.common()) {
			return p // this repository's
		}
		if node != "" {
			if _, err := s.Repo.Managed(p, nil, LockReason(run, node)); err == nil {
				return p // made here for this node, locked so (local state)
			}
		}
		if adopted && s.Repo.OwnsWorktree(p) {
			return p
		}
	}
	if rel != "" && !filepath.IsAbs(rel) {
		// A relative path is the common dir's: one that climbs out of it (../../x) is
		// no path git-atlas wrote.
		if p := filepath.Join(s.common(), filepath.FromSlash(rel)); under(p, s.common()) && exists(p) {
			return p
		}
	}
	name := abs
	if name == "" {
		name = rel
	}
	if name == "" {
		return ""
	}
	root, err := s.root(ctx)
	if err != nil {
		if rel != "" {
			return filepath.Join(s.common(), filepath.FromSlash(rel))
		}
		return abs // cannot tell: as recorded
	}
	if abs != "" && filepath.IsAbs(abs) && under(CanonPath(abs), root) {
		return CanonPath(abs) // under this repository's root (one outside the common dir)
	}
	// Not made here (yet): its place here, by the layout, <root>/<run>/<node> (a
	// replay's, with no node, by its recorded name). This is also where a clone with
	// another worktree root finds its own worktree again after a clone with the
	// default root rewrote the record.
	if node != "" {
		return filepath.Join(root, run, node)
	}
	return filepath.Join(root, run, filepath.Base(filepath.FromSlash(name)))
}

// exists reports whether anything is at p.
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// relPath is what the ledger records of an absolute path beside it: the path from the
// common dir, "" when it lies outside.
func (s *Store) relPath(abs string) string {
	if abs == "" || !filepath.IsAbs(abs) {
		return ""
	}
	p := filepath.Clean(abs)
	if !under(p, s.common()) {
		if p = CanonPath(abs); !under(p, s.common()) {
			return ""
		}
	}
	rel, err := filepath.Rel(s.common(), p)
	if err != nil {
		return ""
	}
	return filepath.ToSlash(rel)
}

// localize makes the worktree paths of a run read from the ledger this repository's.
func (s *Store) localize(ctx context.Context, r *ledger.Run) {
	id := r.State.RunID
	for i := range r.State.Worktrees {
		w := &r.State.Worktrees[i]
		w.Path, w.RelPath = s.localPath(ctx, id, w.Node, w.RelPath, w.Path, w.Adopted != ""), ""
	}
	for i := range r.State.Replays {
		p := &r.State.Replays[i]
		if p.Worktree != "" || p.WorktreeRel != "" {
			p.Worktree, p.WorktreeRel = s.localPath(ctx, id, "", p.WorktreeRel, p.Worktree, false), ""
		}
	}
}

// portable is st as the ledger records it: each path also relative to the common dir.
// st itself is left alone (its caller goes on using its paths).
func (s *Store) portable(st *ledger.State) *ledger.State {
	if len(st.Worktrees) == 0 && len(st.Replays) == 0 {
		return st
	}
	c := *st
	c.Worktrees = append([]ledger.WorktreeRec(nil), st.Worktrees...)
	for i := range c.Worktrees {
		c.Worktrees[i].RelPath = s.relPath(c.Worktrees[i].Path)
	}
	c.Replays = append([]ledger.ReplayRec(nil), st.Replays...)
	for i := range c.Replays {
		c.Replays[i].WorktreeRel = s.relPath(c.Replays[i].Worktree)
	}
	if st.Replays == nil {
		c.Replays = nil
	}
	if st.Worktrees == nil {
		c.Worktrees = nil
	}
	return &c
}

// BranchRun is the run whose branch ref is, when ref has a shape git-atlas gives a
// branch (docs/contract.md §3, ParseCarriedRef): BranchesPrefix<run>/node/<node>,
// <run>/union or <run>/replay/<stage>/<n>. Any other ref under refs/heads/atlas/ (a
// person's own atlas/wip, say) is no run's: ok is false, and git-atlas never deletes,
// pushes or pulls it as a run's.
func BranchRun(ref string) (run string, ok bool) {
	c, err := ParseCarriedRef(ref)
	if err != nil || c.Kind != KindBranch {
		return "", false
	}
	return c.Run, true
}
