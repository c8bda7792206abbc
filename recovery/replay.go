package recovery

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/confine"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/worktrees"
)

// RecoverRequest is `git atlas recover RUN --stage S [...]`.
type RecoverRequest struct {
	Stage string
	// Node names the stage's worktree; "" means the stage's name. When the ledger has
	// no worktree for it, the stage ran in the user's checkout (CheckoutPath).
	Node string
	// CheckoutPath is the user's checkout to snapshot, read-only, in that case.
	CheckoutPath string
	// Worktree makes a managed worktree on the replay branch.
	Worktree bool
	// Apply puts the snapshot into that worktree: files as they were, index as it was.
	Apply bool
	// Force lets Options.PatchOut replace an existing file.
	Force bool
	Options
}

// Recovered is what Recover did.
type Recovered struct {
	Run      string
	Stage    string
	Source   string  // SourceWorktree, SourceCheckout, or "" when the worktree was gone
	Snapshot *Result // nil when there was nothing left to snapshot
	Replay   ledger.ReplayRec
	Node     string // the replay worktree's node, with Worktree
	Applied  bool
}

// Recover is "preserve and replay" (docs/contract.md §7): snapshot the stage's worktree (or the
// user's checkout, without touching it), create the branch atlas/<run>/replay/<stage>/<n>
// at the stage's baseline, optionally a managed worktree on it with the snapshot
// applied, and record a stage_recovered event. The original worktree is left as it is.
func Recover(ctx context.Context, store *gitstate.Store, run string, req RecoverRequest) (*Recovered, error) {
	if err := ledger.ValidName("stage", req.Stage); err != nil {
		return nil, err
	}
	node := req.Node
	if node == "" {
		node = req.Stage
	} else if err := ledger.ValidName("node", node); err != nil {
		return nil, err
	}
	if req.Apply {
		req.Worktree = true
	}
	// Every input is checked before anything is written: bad input never leaves a
	// snapshot, a patch or a branch behind.
	r, err := store.Load(ctx, run)
	if err != nil {
		return nil, err
	}
	if err := r.Writable(); err != nil {
		return nil, err
	}
	_, st, ok := r.Stage(req.Stage)
	if !ok {
		return nil, fault.NotFound("run %s has no stage %q", run, req.Stage)
	}
	if req.Node != "" && r.State.Worktree(node) == nil && r.State.Job(node) == nil {
		return nil, fault.Named(fault.ErrNotFound, "run %s has no node %q", run, node).
			WithHint("`%s` shows its worktrees; without {node}, recover takes the stage's own worktree, or your checkout if the stage ran there", fault.Do("worktree list", "run", run))
	}
	if req.PatchOut != "" {
		p, err := patchOut(ctx, store.Repo, req.PatchOut, req.Force)
		if err != nil {
			return nil, err
		}
		req.PatchOut, req.ReplacePatch = p, req.Force
	}
	base := r.Header.Baseline
	if n := len(st.Attempts); n > 0 && !st.Attempts[n-1].Baseline.IsZero() {
		base = st.Attempts[n-1].Baseline
	}
	repo := store.Repo
	out := &Recovered{Run: run, Stage: req.Stage}

	t := Target{Run: run, Stage: req.Stage, Baseline: base}
	if wt := r.State.Worktree(node); wt != nil {
		// Snapshotted (and the snapshot pushed with the run) only when git-atlas
		// manages it: a record naming a worktree of the user's is refused.
		m, err := worktrees.Own(ctx, store.Repo, run, *wt)
		if err != nil {
			return nil, err
		}
		t.Node, t.Path, t.Source = node, m.Path, SourceWorktree
	} else if req.Node == "" {
		if req.CheckoutPath == "" {
			return nil, fault.NotFound("run %s has no worktree for stage %q, and there is no checkout of yours to snapshot here (a bare repository, or a worktree git-atlas manages)", run, req.Stage).
				WithHint("run it from your checkout: %s", fault.Do("recover", "dir", fault.Placeholder("<your checkout>"), "run", run, "stage", req.Stage))
		}
		t.Path, t.Source = req.CheckoutPath, SourceCheckout
	}
	root, err := worktrees.Root(ctx, repo)
	if err != nil {
		return nil, err
	}
	if req.Worktree {
		// The replay worktree's name and place, as the write below will choose them
		// (re-checked there against the ledger it writes on).
		n, err := nextReplay(ctx, repo, r, run, req.Stage)
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("replay-%s-%d", req.Stage, n)
		if err := ledger.ValidName("node", name); err != nil {
			return nil, fault.Named(fault.ErrUsage, "stage name %q is too long for a replay worktree (%s): recover it without {worktree}", req.Stage, name)
		}
		if p := filepath.Join(root, run, name); exists(p) {
			return nil, fault.Conflict("%s exists already", p).WithHint("remove it or run `%s`", fault.Do("audit"))
		}
	}
	// t.Path is "" for a job's node whose worktree is gone: nothing left to snapshot.
	if _, err := os.Lstat(t.Path); t.Path != "" && err == nil {
		if req.Reason == "" {
			req.Reason = "recover"
		}
		out.Source = t.Source
		if out.Snapshot, err = Snapshot(ctx, store, t, req.Options); err != nil {
			return nil, err
		}
	} else if t.Path != "" && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	// What --apply writes is checked before the branch and worktree are made.
	var applied *checkedSnap
	if req.Apply && out.Snapshot != nil {
		s, err := Open(ctx, repo, out.Snapshot.Rec.Commit.String())
		if err != nil {
			return nil, err
		}
		if applied, err = checkSnap(ctx, repo, s); err != nil {
			return nil, err
		}
	}

	var wtPath string
	var ports []int
	// A replay worktree gets a block of ports of its own, as a node does, picked and
	// recorded under the repository's port lock (docs/contract.md §15).
	n := 0
	if req.Worktree {
		n = r.Header.Ports
	}
	alloc, err := worktrees.AllocatePorts(ctx, store, run, n)
	if err != nil {
		return nil, err
	}
	_, err = store.Update(ctx, run, func(r *ledger.Run) (*gitstate.Change, error) {
		n, err := nextReplay(ctx, repo, r, run, req.Stage)
		if err != nil {
			return nil, err
		}
		branch := fmt.Sprintf("atlas/%s/replay/%s/%d", run, req.Stage, n)
		rec := ledger.ReplayRec{Stage: req.Stage, Branch: branch, Baseline: base}
		if out.Snapshot != nil {
			rec.Snapshot = out.Snapshot.Rec.ID
		}
		if req.Worktree {
			out.Node = fmt.Sprintf("replay-%s-%d", req.Stage, n)
			if err := ledger.ValidName("node", out.Node); err != nil {
				return nil, err
			}
			wtPath = filepath.Join(root, run, out.Node)
			if _, err := os.Lstat(wtPath); err == nil {
				return nil, fault.Conflict("%s exists already", wtPath).WithHint("remove it or run `%s`", fault.Do("audit"))
			}
			rec.Worktree = wtPath
			if ports, err = alloc.Pick(out.Node); err != nil {
				return nil, err
			}
			r.State.Worktrees = append(r.State.Worktrees, ledger.WorktreeRec{Node: out.Node, Stage: req.Stage, Path: wtPath,
				Branch: branch, Baseline: base, Head: base, Ports: ports})
		}
		r.State.Replays = append(r.State.Replays, rec)
		out.Replay = rec
		data := ledger.StageRecoveredData{Branch: branch, Baseline: base, Snapshot: rec.Snapshot,
			Worktree: rec.Worktree, Source: out.Source, Apply: req.Apply, Ports: ports}
		return &gitstate.Change{
			Event: ledger.StageRecoveredEvent(ledger.About{Stage: req.Stage}, data),
			Refs:  []git.RefUpdate{{Name: "refs/heads/" + branch, New: base.String(), Old: git.ZeroID}},
		}, nil
	})
	alloc.Release()
	if err != nil {
		return nil, err
	}
	if !req.Worktree {
		return out, nil
	}
	// The ledger names the worktree before it exists: a crash here leaves a "missing"
	// (or half-made) worktree, which resume and audit know how to handle.
	rec := ledger.WorktreeRec{Node: out.Node, Stage: req.Stage, Path: wtPath, Branch: out.Replay.Branch, Baseline: base, Head: base, Ports: ports}
	if err := worktrees.Materialize(ctx, repo, run, rec, base); err != nil {
		return out, fmt.Errorf("add replay worktree: %w", err)
	}
	wt := repo.Worktree(wtPath)
	if applied != nil {
		if err := applyTo(ctx, wt, applied); err != nil {
			return out, fmt.Errorf("apply %s to %s: %w", applied.Commit, wtPath, err)
		}
		out.Applied = true
	}
	return out, nil
}

// applyTo puts a checked snapshot into a fresh worktree git-atlas made: its files
// become the snapshot's tree and its index the snapshot's index (with the conflict
// stages). A direct tree checkout rather than `git apply`: no whitespace or context
// rules apply.
func applyTo(ctx context.Context, wt *git.Worktree, s *checkedSnap) error {
	if err := wt.ResetTo(ctx, s.tree); err != nil {
		return err
	}
	if err := wt.SetIndex(ctx, s.index, s.Unmerged); err != nil {
		return err
	}
	if err := leaveSparse(wt.Path, s.Snap); err != nil {
		return err
	}
	if err := wt.SkipWorktree(ctx, append(paths(s.Manifest.SkipWorktree), paths(s.Manifest.Sparse)...)); err != nil {
		return err
	}
	return wt.AssumeUnchanged(ctx, paths(s.Manifest.AssumeUnchanged))
}

// paths are names as paths.
func paths(names []Name) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n.String()
	}
	return out
}

// leaveSparse removes from dir the files of the snapshot's sparse entries (absent on
// purpose when it was taken; the tree holds their index blob), each confined to dir
// and removed itself, never through a link.
func leaveSparse(dir string, s *Snap) error {
	if len(s.Manifest.Sparse) == 0 {
		return nil
	}
	root, err := confine.New(dir)
	if err != nil {
		return err
	}
	for _, n := range s.Manifest.Sparse {
		p, err := root.Leaf(n.String())
		if err != nil {
			return err
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// nextReplay is one more than the highest replay number of the stage, in the ledger
// or among the branches (a branch made by a run whose ledger write was lost).
func nextReplay(ctx context.Context, repo *git.Repository, r *ledger.Run, run, stage string) (int, error) {
	prefix := fmt.Sprintf("atlas/%s/replay/%s/", run, stage)
	max := 0
	bump := func(branch string) {
		if n, err := strconv.Atoi(strings.TrimPrefix(branch, prefix)); err == nil && strings.HasPrefix(branch, prefix) && n > max {
			max = n
		}
	}
	for _, rp := range r.State.Replays {
		bump(rp.Branch)
	}
	refs, err := repo.ListRefs(ctx, "refs/heads/"+strings.TrimSuffix(prefix, "/"))
	if err != nil {
		return 0, err
	}
	for _, ref := range refs {
		bump(strings.TrimPrefix(ref.Name, "refs/heads/"))
	}
	return max + 1, nil
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// patchOut checks where the request's patch_out asks the patch to go (its directory resolved,
// symbolic links included) and returns it clean: an absolute path, not a directory, never a symbolic link
// (the patch would be written wherever it points), never inside a working tree of
// the repository (the user's checkout or any worktree: not even a new file goes
// there, as it could be a tracked or edited one) nor its git directory, and not over
// an existing file unless force.
func patchOut(ctx context.Context, repo *git.Repository, path string, force bool) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fault.Named(fault.ErrUsage, "{patch_out} %q is not an absolute path", path)
	}
	dir := confine.RealPath(filepath.Dir(path))
	root, err := confine.New(dir)
	if err != nil {
		return "", err
	}
	p, err := root.Leaf(filepath.Base(path))
	if err != nil {
		return "", fault.Named(fault.ErrUsage, "{patch_out} %s: %v", path, err)
	}
	if wt, err := repo.WorkingTreeOf(ctx, dir); err != nil {
		return "", err
	} else if wt != "" {
		return "", fault.Named(fault.ErrUsage, "{patch_out} %s is inside the working tree %s, and git-atlas never writes into a working tree", path, wt).
			WithHint("write it outside (e.g. {patch_out} %s), or leave {patch_out} out: the patch goes under <git-common-dir>/atlas/recovery/", filepath.Join(filepath.Dir(wt), filepath.Base(p)))
	}
	for _, gd := range []string{repo.CommonDir, repo.GitDir} {
		if gd != "" && confine.Within(p, confine.RealPath(gd)) {
			return "", fault.Named(fault.ErrUsage, "{patch_out} %s is inside the repository's git directory %s", path, gd).
				WithHint("write it outside, or leave {patch_out} out: the patch goes under <git-common-dir>/atlas/recovery/")
		}
	}
	info, err := os.Lstat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return filepath.Clean(path), nil
	case err != nil:
		return "", fault.Named(fault.ErrUsage, "{patch_out} %s: %v", path, err)
	case info.Mode()&os.ModeSymlink != 0:
		return "", fault.Named(fault.ErrUsage, "{patch_out} %s is a symbolic link: the patch is never written through one", path)
	case !info.Mode().IsRegular():
		return "", fault.Named(fault.ErrUsage, "{patch_out} %s is not a regular file", path)
	case !force:
		return "", fault.Named(fault.ErrUsage, "{patch_out} %s exists", path).WithHint("choose a new file, or pass {force} to replace it")
	}
	return filepath.Clean(path), nil
}
