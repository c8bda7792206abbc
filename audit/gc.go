package audit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/par"
	"github.com/git-atlas/git-atlas/internal/progress"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/recovery"
	"github.com/git-atlas/git-atlas/worktrees"
)

// Action kinds of a gc plan.
const (
	RemoveWorktree = "remove-worktree" // a finished run's worktree, snapshot first
	DeleteBranch   = "delete-branch"   // an atlas/ branch of a finished or gone run, reachable from a kept ref
	DropRun        = "drop-run"        // an old finished run's ledger ref and mutex file
	DeleteRef      = "delete-ref"      // a pin (or, with --recoveries, a recovery ref) of a dropped or gone run
	KeepRun        = "keep-run"        // a stopped run: interrupted, not finished, so gc leaves it whole (listed, never done)
	// KeepWorktree: a worktree a ledger record names that git-atlas does not manage
	// (worktrees.Own): foreign, left as it is (listed, never done).
	KeepWorktree   = "keep-worktree"
	RemoveLeftover = "remove-leftover" // a temporary file or trash directory older than LeftoverGrace (docs/contract.md §11.12)
	// RemoveStray: a stray (docs/contract.md §15) under the managed root: git's record of a
	// worktree that is gone, or a directory git no longer knows (snapshotted first
	// when it holds anything).
	RemoveStray = "remove-stray"
	// KeepStray: a stray directory gc cannot remove without losing something
	// (listed, never done): one of a live (or unreadable) run that holds files.
	KeepStray = "keep-stray"
)

// Action is one step of a gc plan.
type Action struct {
	Kind   string `json:"action"`
	RunID  string `json:"run_id"`
	Node   string `json:"node,omitempty"`
	Path   string `json:"path,omitempty"`
	Ref    string `json:"ref,omitempty"`
	Old    string `json:"old,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Why is Reason when it names request fields ({max_size}): each front end spells
	// them (Spell; docs/contract.md §4.6).
	Why fault.Text `json:"-"`
	// Patch is the patch file deleted with a recovery snapshot's ref.
	Patch string `json:"patch,omitempty"`
	// Snapshot is the recovery snapshot taken before a removal (--apply only).
	Snapshot string `json:"snapshot,omitempty"`
	// IgnoredDeleted are the ignored files the removal deleted without their bytes in
	// the snapshot, by name, count and size (--apply only).
	IgnoredDeleted []recovery.IgnoredEntry `json:"ignored_deleted,omitempty"`
	// IgnoredToDelete are the ignored files the removal would delete without their
	// bytes in its snapshot (all of them without --include-ignored), by name, count
	// and size (the plan only: --apply reports IgnoredDeleted).
	IgnoredToDelete []recovery.IgnoredEntry `json:"ignored_to_delete,omitempty"`
	// Kept is the recovery ref that keeps a stray branch's commit, which no other ref
	// holds, made with the branch's deletion (docs/contract.md §15).
	Kept string `json:"kept,omitempty"`
	// Size is the bytes a remove-leftover step frees, or the bytes of the objects
	// only a snapshot deleted for --max-size holds.
	Size int64 `json:"size,omitempty"`
	Done bool  `json:"done"`
	// Skipped says why --apply did not do a planned step (its re-check failed).
	Skipped string `json:"skipped,omitempty"`
}

// because is a with its reason in words that name request fields (format and args,
// fields as {name}): Reason in plain words until a front end spells it (Spell).
func (a Action) because(format string, args ...any) Action {
	a.Why = fault.Textf(format, args...)
	a.Reason = a.Why.String()
	return a
}

// Spell sets a's Reason from its Why as the front end sp writes it (a reason that
// names no field keeps its words).
func (a *Action) Spell(sp fault.Spelling) {
	if a.Why.Format != "" && sp.Field != nil {
		a.Reason = a.Why.Spell(sp)
	}
}

// GCOptions tune Plan and Apply.
type GCOptions struct {
	// Before: finished runs last updated longer ago than this are dropped.
	Before time.Duration
	// Recoveries also drops the recovery snapshots of dropped and gone runs.
	Recoveries bool
	// KeepLast, when not negative, keeps the newest KeepLast finished runs: only
	// those beyond them drop (and only those older than Before, when Before is set).
	KeepLast int
	// MaxSize, with Recoveries, when positive: the snapshots of finished runs go too,
	// oldest first, until the bytes only snapshots hold fit in MaxSize.
	MaxSize int64
	Now     time.Time
	// Progress hears of the worktree removals (nil: nobody).
	Progress progress.Reporter
	// newest are the finished runs KeepLast keeps (nil: no KeepLast).
	newest map[string]bool
	// Ignored is --include-ignored with its cap, for the snapshots taken before a
	// removal (of the options, only IncludeIgnored and IgnoredCap are read).
	Ignored recovery.Options
}

// Plan says what gc would do, from a report; it changes nothing. Worktrees come first,
// then ref deletions. Branches are planned as they would be after the worktree
// removals, whose snapshots may make a branch tip reachable: Apply re-plans them.
func Plan(ctx context.Context, repo *git.Repository, rep *Report, opt GCOptions) ([]Action, error) {
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	opt.newest = newest(rep, opt.KeepLast, opt.Now)
	acts := planWorktrees(rep)
	for i := range acts {
		if a := &acts[i]; a.Kind == RemoveWorktree {
			// A removal deletes the ignored files its snapshot leaves out: the plan
			// names them first.
			list, err := recovery.IgnoredToDelete(ctx, repo, a.Path, opt.Ignored)
			if err != nil {
				return nil, err
			}
			if len(list) > 0 {
				a.IgnoredToDelete = list
			}
		}
	}
	refActs, err := planRefs(ctx, repo, rep, opt, acts, nil)
	acts = append(append(append(acts, refActs...), planKept(rep)...), planLeftovers(rep, opt)...)
	return append(acts, planStrays(rep)...), err
}

// planStrays removes the strays: git's records of managed worktrees that are gone
// (nothing is left to lose), and directories git no longer knows, empty, or of a
// finished run (snapshotted into that run first). A directory with files of a live
// run or of none is listed as kept. (A stray branch goes with the stale branches,
// planRefs: deleted once another ref holds its commits, else kept.)
func planStrays(rep *Report) []Action {
	var acts []Action
	for _, w := range rep.Worktrees {
		if !Has(w.Labels, Stray) {
			continue
		}
		if Has(w.Labels, Missing) {
			acts = append(acts, Action{Kind: RemoveStray, RunID: w.RunID, Node: w.Node, Path: w.Path, Reason: "git's record of a managed worktree whose directory is gone"})
			continue
		}
		if why := strayKept(rep, w); why != "" {
			acts = append(acts, Action{Kind: KeepStray, RunID: w.RunID, Node: w.Node, Path: w.Path, Reason: why})
			continue
		}
		reason := "a directory git no longer knows, empty"
		switch {
		case emptyDir(w.Path):
		case !runExists(rep, w.RunID):
			reason = "a directory git no longer knows, of a run that no longer exists: snapshot first, kept under " + ledger.RecoveryPrefix + w.RunID + "/"
		default:
			reason = "a directory git no longer knows: snapshot first"
		}
		acts = append(acts, Action{Kind: RemoveStray, RunID: w.RunID, Node: w.Node, Path: w.Path, Reason: reason})
	}
	return acts
}

// strayKept says why a stray directory with files stays ("" when gc may snapshot and
// remove it): a finished run records its snapshot; a run that no longer exists has it
// kept by its recovery ref alone (recovery.SnapshotStray); a live or unreadable run's
// stays, and so does one under a name no snapshot can take.
func strayKept(rep *Report, w Worktree) string {
	if emptyDir(w.Path) {
		return ""
	}
	e, ok := rep.runs[w.RunID]
	switch {
	case ledger.ValidName("run", w.RunID) != nil || ledger.ValidName("node", w.Node) != nil:
		return "holds files under a name no snapshot can take: look, then remove it by hand"
	case !ok:
		return ""
	case e.Run == nil:
		return "holds files, and its run cannot be read"
	case !ledger.RunTerminal(e.Run.State.Status):
		return "holds files, and its run is not finished"
	case !rep.finished(w.RunID):
		return "holds files, and its run is finished only by another clone's word"
	}
	return ""
}

// strayBaseline is what stands in for HEAD and index in the snapshot of a stray
// directory whose run is gone: the run's baseline pin when it is left, else the
// checkout's HEAD.
func strayBaseline(ctx context.Context, repo *git.Repository, run string) (git.OID, error) {
	if pin, err := repo.ReadRef(ctx, gitstate.PinRef(run, "baseline")); err != nil {
		return git.OID{}, err
	} else if pin != "" {
		return git.ParseOID(pin)
	}
	head, err := repo.ResolveCommit(ctx, git.HeadRev())
	if err != nil {
		return git.OID{}, fmt.Errorf("no baseline for its snapshot: its run's pin is gone and HEAD is no commit: %w", err)
	}
	return head, nil
}

// emptyDir reports whether dir holds nothing.
func emptyDir(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	names, _ := f.Readdirnames(1)
	return len(names) == 0
}

// removeStray does a planned remove-stray step when its re-check still finds the
// stray: a record of a gone worktree goes through git.Managed (so only one of
// git-atlas's); a directory is snapshotted into its finished run when it holds
// anything, and removed.
func removeStray(ctx context.Context, store *gitstate.Store, rep *Report, a *Action) error {
	var now *Worktree
	for i := range rep.Worktrees {
		if w := &rep.Worktrees[i]; w.Path == a.Path && Has(w.Labels, Stray) {
			now = w
		}
	}
	if now == nil {
		a.Skipped = "no longer a stray"
		return nil
	}
	if Has(now.Labels, Missing) {
		roots, err := worktrees.Roots(ctx, store.Repo)
		if err != nil {
			return err
		}
		m, err := store.Repo.Managed(a.Path, roots, "git-atlas run "+a.RunID+" node "+a.Node)
		if err != nil {
			return fmt.Errorf("remove stray record %s: %w", a.Path, err)
		}
		if !m.Missing() {
			a.Skipped = "its directory is back"
			return nil
		}
		if err := m.Remove(ctx); err != nil {
			return fmt.Errorf("remove stray record %s: %w", a.Path, err)
		}
		a.Done = true
		return nil
	}
	if why := strayKept(rep, *now); why != "" {
		a.Skipped = why
		return nil
	}
	if !emptyDir(a.Path) {
		t := recovery.Target{Run: a.RunID, Node: a.Node, Path: a.Path}
		snapshot := recovery.SnapshotSetAside
		if e, ok := rep.runs[a.RunID]; ok {
			t.Baseline = e.Run.Header.Baseline
		} else {
			// Its run is gone: no ledger records the snapshot, its ref keeps it.
			base, err := strayBaseline(ctx, store.Repo, a.RunID)
			if err != nil {
				return fmt.Errorf("snapshot stray directory %s: %w", a.Path, err)
			}
			t.Baseline, snapshot = base, recovery.SnapshotStray
		}
		res, err := snapshot(ctx, store, t, recovery.Options{Reason: "gc: stray directory"})
		if err != nil {
			return fmt.Errorf("snapshot stray directory %s: %w", a.Path, err)
		}
		a.Snapshot = res.Rec.ID
		if !runExists(rep, a.RunID) {
			a.Kept = res.Rec.Ref
		}
		a.IgnoredDeleted = res.Manifest.Ignored
	}
	if err := os.RemoveAll(a.Path); err != nil {
		return fmt.Errorf("remove stray directory %s: %w", a.Path, err)
	}
	if err := git.SyncDir(filepath.Dir(a.Path)); err != nil {
		return fmt.Errorf("remove stray directory %s: %w", a.Path, err)
	}
	a.Done = true
	// The record of the files copied into it goes with it (docs/contract.md §15).
	return worktrees.ForgetIncluded(store.Repo, a.RunID, a.Node)
}

// runExists reports whether run's ledger exists (readable or not).
func runExists(rep *Report, run string) bool {
	_, found := rep.runs[run]
	return found
}

// planLeftovers removes the leftovers older than LeftoverGrace.
func planLeftovers(rep *Report, opt GCOptions) []Action {
	var acts []Action
	for _, l := range rep.Leftovers {
		if opt.Now.Sub(l.at) >= LeftoverGrace {
			acts = append(acts, Action{Kind: RemoveLeftover, Path: l.Path, Size: l.Size, Reason: l.Kind + ", " + l.Age + " old"})
		}
	}
	return acts
}

// removeLeftover removes a planned leftover if it is still older than the grace
// period (a file of the same name may have been made since the plan).
func removeLeftover(a *Action, now time.Time) error {
	fi, err := os.Lstat(a.Path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		a.Skipped = "already gone"
		return nil
	case err != nil:
		return err
	case now.Sub(fi.ModTime()) < LeftoverGrace:
		a.Skipped = "it changed since the plan"
		return nil
	}
	if fi.IsDir() {
		err = os.RemoveAll(a.Path)
	} else {
		err = git.Remove(a.Path)
	}
	if err != nil {
		return fmt.Errorf("remove leftover %s: %w", a.Path, err)
	}
	a.Done = true
	return nil
}

// planKept lists the stopped runs. A stopped run was interrupted on purpose, not
// finished (docs/contract.md §5.1: `resume` takes it up again), so gc removes none of its
// worktrees, branches or refs; it says so, because a person may expect otherwise.
func planKept(rep *Report) []Action {
	var ids []string
	for id, e := range rep.runs {
		if e.Run != nil && e.Run.State.Status == ledger.RunStopped {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	var acts []Action
	for _, id := range ids {
		acts = append(acts, Action{Kind: KeepRun, RunID: id, Ref: gitstate.RunsPrefix + id,
			Reason: "stopped: interrupted, not finished; resume it, or finish it as completed or failed for gc to clean it up"})
	}
	return acts
}

func planWorktrees(rep *Report) []Action {
	var acts []Action
	for _, w := range rep.Worktrees {
		if w.claimed {
			acts = append(acts, Action{Kind: KeepWorktree, RunID: w.RunID, Node: w.Node, Path: w.Path, Reason: "foreign: " + w.Reason})
			continue
		}
		if Has(w.Labels, Foreign) || !Has(w.Labels, Orphaned) {
			continue
		}
		if Has(w.Labels, Making) || Has(w.Labels, HalfMade) || Has(w.Labels, Broken) {
			// Being made, or left unfinished or unreadable: whatever is there is
			// preserved by the resume or worktree add of its node, never by gc.
			continue
		}
		e, ok := rep.runs[w.RunID]
		if !ok || e.Run == nil || e.Run.State.Worktree(w.Node) == nil {
			continue // gone run or unrecorded worktree: audit lists it, a person decides
		}
		if e.Run.State.Worktree(w.Node).Adopted != "" {
			continue // adopted at import: not git-atlas's to remove (recovery.PreserveAndRemove refuses)
		}
		reason := "run " + e.Run.State.Status
		if Has(w.Labels, Dirty) {
			reason += ", dirty: snapshot first"
		}
		acts = append(acts, Action{Kind: RemoveWorktree, RunID: w.RunID, Node: w.Node, Path: w.Path, Reason: reason})
	}
	return acts
}

// newest names the keep newest runs finished here (by their last update, no later
// than now; nil when keep is negative: no such limit). Runs finished elsewhere take
// no place among them: they are kept anyway.
func newest(rep *Report, keep int, now time.Time) map[string]bool {
	if keep < 0 {
		return nil
	}
	type run struct {
		id string
		at time.Time
	}
	var done []run
	for id, e := range rep.runs {
		if !rep.finished(id) {
			continue
		}
		t, _ := updated(e, now)
		done = append(done, run{id, t})
	}
	sort.Slice(done, func(i, j int) bool {
		if !done[i].at.Equal(done[j].at) {
			return done[i].at.After(done[j].at)
		}
		return done[i].id > done[j].id
	})
	kept := map[string]bool{}
	for i := 0; i < keep && i < len(done); i++ {
		kept[done[i].id] = true
	}
	return kept
}

// updated is when e's run was last updated by its ledger, no later than now: a
// ledger from elsewhere may say any time. ok is false for a time stamp that does not
// parse (the zero time then).
func updated(e gitstate.Entry, now time.Time) (t time.Time, ok bool) {
	t, err := ledger.ParseStamp(e.Run.State.UpdatedAt)
	if t.After(now) {
		return now, true
	}
	return t, err == nil
}

// droppable reports whether run id is finished here, older than opt.Before and not
// among the newest opt.KeepLast.
func droppable(rep *Report, id string, opt GCOptions) bool {
	if !rep.finished(id) {
		return false
	}
	if opt.newest != nil && opt.newest[id] {
		return false
	}
	t, ok := updated(rep.runs[id], opt.Now)
	return ok && (opt.Before <= 0 || opt.Now.Sub(t) >= opt.Before)
}

// planRefs plans the ref deletions of a gc that does removing first. old, when not
// nil, names the runs old enough to drop as a first audit saw them (removing a
// worktree records an event, which makes the run look new again).
//
// In steps: what the worktrees that stay keep (their runs and branches), which runs
// drop, the pins, snapshots and run refs that go with them, then which stale branches
// may go (only those whose commits another ref keeps).
func planRefs(ctx context.Context, repo *git.Repository, rep *Report, opt GCOptions, removing []Action, old map[string]bool) ([]Action, error) {
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	checkedOut, keepsRun := staying(rep, removing)
	drop := dropping(rep, opt, old, keepsRun)
	acts, deleting, branches := refActions(repo, rep, opt, drop, checkedOut)
	if opt.Recoveries && opt.MaxSize > 0 {
		more, err := sizeActions(ctx, repo, rep, opt.MaxSize, deleting)
		if err != nil {
			return acts, err
		}
		acts = append(acts, more...)
	}
	if len(branches) == 0 {
		return acts, nil
	}
	more, err := branchActions(ctx, repo, branches, deleting)
	return append(acts, more...), err
}

// staying finds what the worktrees that stay after removing keep: the branches
// checked out in them (git's view, and the ledger's recorded branches, which a HEAD a
// killed checkout never wrote hides from git) and the runs they belong to.
func staying(rep *Report, removing []Action) (checkedOut, keepsRun map[string]bool) {
	removed := map[string]bool{}
	for _, a := range removing {
		if a.Kind == RemoveWorktree {
			removed[filepath.Clean(a.Path)] = true
		}
	}
	checkedOut, keepsRun = map[string]bool{}, map[string]bool{}
	for _, t := range rep.trees {
		if !removed[filepath.Clean(t.Path)] && t.Branch != "" {
			checkedOut[t.Branch] = true
		}
	}
	for _, e := range rep.runs {
		if e.Run == nil {
			continue
		}
		for _, w := range e.Run.State.Worktrees {
			if removed[filepath.Clean(w.Path)] {
				continue
			}
			keepsRun[e.ID] = true
			if w.Branch != "" {
				checkedOut["refs/heads/"+strings.TrimPrefix(w.Branch, "refs/heads/")] = true
			}
		}
	}
	return checkedOut, keepsRun
}

// dropping names the runs that drop: finished, old, and no worktree left.
func dropping(rep *Report, opt GCOptions, old, keepsRun map[string]bool) map[string]bool {
	drop := map[string]bool{}
	for id := range rep.runs {
		if (old == nil && droppable(rep, id, opt) || old[id] && rep.finished(id)) && !keepsRun[id] {
			drop[id] = true
		}
	}
	return drop
}

// refActions plans the run refs, pins and (with --recoveries) snapshots of dropped or
// gone runs, in the refs' order, and returns the stale branches nothing checks out,
// which may go only when another ref keeps their commits.
func refActions(repo *git.Repository, rep *Report, opt GCOptions, drop, checkedOut map[string]bool) (acts []Action, deleting map[string]bool, branches []Ref) {
	// A run is gone when no ledger of it is left here: a chain of it kept under
	// refs/atlas/diverged/ is its history still, and its pins and snapshots stay.
	gone := func(run string) bool { _, ok := rep.runs[run]; return !ok && !rep.diverged[run] }
	deleting = map[string]bool{}
	for _, r := range rep.Refs {
		switch {
		case Has(r.Labels, RunLabel) && drop[r.RunID]:
			acts = append(acts, Action{Kind: DropRun, RunID: r.RunID, Ref: r.Ref, Old: r.ID, Reason: "finished " + rep.runs[r.RunID].Run.State.UpdatedAt})
		case Has(r.Labels, Pin) && (drop[r.RunID] || gone(r.RunID)):
			acts = append(acts, Action{Kind: DeleteRef, RunID: r.RunID, Ref: r.Ref, Old: r.ID, Reason: "pin of a dropped run"})
		case Has(r.Labels, Recovery) && opt.Recoveries && (drop[r.RunID] || gone(r.RunID)):
			acts = append(acts, Action{Kind: DeleteRef, RunID: r.RunID, Ref: r.Ref, Old: r.ID, Patch: patchPath(repo, r.Ref)}.because("recovery snapshot ({recoveries})"))
		case Has(r.Labels, StaleBranch) && !checkedOut[r.Ref]:
			branches = append(branches, r)
			continue
		default:
			continue
		}
		deleting[acts[len(acts)-1].Ref] = true
	}
	return acts, deleting, branches
}

// sizeActions plans, for --recoveries --max-size, the deletion of the snapshots of
// runs finished here, oldest first, until the bytes of the objects only those of
// them that stay hold fit in max (docs/contract.md §15). A deleted snapshot frees at least the
// objects no other ref reaches; objects it shares with another snapshot that stays
// are counted as kept, so the plan never stops short of the budget.
func sizeActions(ctx context.Context, repo *git.Repository, rep *Report, max int64, deleting map[string]bool) ([]Action, error) {
	var all, names []string
	var tips []git.OID
	var cands []int // indexes into tips of the snapshots of finished runs
	for _, r := range rep.Refs {
		if !Has(r.Labels, Recovery) {
			continue
		}
		all = append(all, r.Ref)
		id, err := git.ParseOID(r.ID)
		if err != nil || deleting[r.Ref] {
			continue
		}
		if rep.finished(r.RunID) {
			cands = append(cands, len(tips))
		}
		tips, names = append(tips, id), append(names, r.Ref)
	}
	if len(cands) == 0 {
		return nil, nil
	}
	// The budget is for the snapshots of runs finished here, the ones gc may drop
	// (group 1): the bytes of others, a live run's or one finished elsewhere, neither
	// count against it nor make gc drop more to make up for them.
	group := make([]int, len(tips))
	for _, k := range cands {
		group[k] = 1
	}
	each, together, err := repo.UniqueBytes(ctx, tips, all, group)
	if err != nil {
		return nil, fmt.Errorf("measure snapshots: %w", err)
	}
	dated, err := repo.RefCommits(ctx, names)
	if err != nil {
		return nil, err
	}
	// Oldest by the ledger's record of each snapshot (its clock's time), else by the
	// snapshot commit's date.
	when := map[string]time.Time{}
	for _, d := range dated {
		when[d.Ref] = time.Unix(d.When, 0)
	}
	for _, e := range rep.runs {
		if e.Run == nil {
			continue
		}
		for _, sn := range e.Run.State.Snapshots {
			if t, err := ledger.ParseStamp(sn.CreatedAt); err == nil {
				when[sn.Ref] = t
			}
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := names[cands[i]], names[cands[j]]
		if !when[a].Equal(when[b]) {
			return when[a].Before(when[b])
		}
		return a < b
	})
	total := together[1]
	var acts []Action
	for _, k := range cands {
		if total <= max {
			break
		}
		total -= each[k]
		run, _, _ := strings.Cut(strings.TrimPrefix(names[k], ledger.RecoveryPrefix), "/")
		acts = append(acts, Action{Kind: DeleteRef, RunID: run, Ref: names[k], Old: tips[k].String(), Patch: patchPath(repo, names[k]),
			Size: each[k]}.because("recovery snapshot of a finished run, oldest first, over {max_size} %d", max))
		deleting[names[k]] = true
	}
	return acts, nil
}

// branchActions plans the deletion of each stale branch whose commits a ref that
// stays keeps (a candidate keeps no other candidate alive); one whose commits are
// nowhere else is kept.
func branchActions(ctx context.Context, repo *git.Repository, branches []Ref, deleting map[string]bool) ([]Action, error) {
	for _, b := range branches {
		deleting[b.Ref] = true
	}
	var acts []Action
	var errs []error
	for _, b := range branches {
		keeper, err := keptContaining(ctx, repo, b.ID, deleting)
		if err != nil {
			errs = append(errs, fmt.Errorf("branch %s: %w", b.Ref, err))
			continue
		}
		if keeper == "" {
			// A stray branch (its run is gone) whose commits nothing else holds: a
			// recovery ref keeps its tip first, then it goes (docs/contract.md §15).
			// Any other stays.
			if Has(b.Labels, Stray) && ledger.ValidName("run", b.RunID) == nil {
				kept := StrayBranchRef(b.RunID, b.ID)
				acts = append(acts, Action{Kind: DeleteBranch, RunID: b.RunID, Ref: b.Ref, Old: b.ID, Kept: kept,
					Reason: "its run no longer exists and nothing else holds its commits: kept under " + kept + " first"})
			}
			continue
		}
		acts = append(acts, Action{Kind: DeleteBranch, RunID: b.RunID, Ref: b.Ref, Old: b.ID, Reason: "reachable from " + keeper})
	}
	return acts, par.Join(errs)
}

// StrayBranchRef is the recovery ref that keeps commit, the tip of a branch of run
// (a run that no longer exists) that no other ref holds, when gc deletes the branch.
func StrayBranchRef(run, commit string) string {
	return ledger.RecoveryPrefix + run + "/branch-kept-" + commit[:min(12, len(commit))]
}

// keepStrayBranch makes the recovery ref a's branch deletion plans (Action.Kept), at
// the branch's tip, create-only (or finds it there), and flushes it: durable before
// the branch goes.
func keepStrayBranch(ctx context.Context, repo *git.Repository, a *Action) error {
	cur, err := repo.ReadRef(ctx, a.Kept)
	if err != nil {
		return err
	}
	switch cur {
	case a.Old:
	case "":
		if err := repo.UpdateRefs(ctx, "atlas gc: keep "+a.Ref, git.RefUpdate{Name: a.Kept, New: a.Old, Old: git.ZeroID}); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%s holds %s, not the branch's tip %s", a.Kept, cur, a.Old)
	}
	return repo.SyncRefs(a.Kept)
}

// keptContaining names a ref, not among deleting, whose history contains sha.
func keptContaining(ctx context.Context, repo *git.Repository, sha string, deleting map[string]bool) (string, error) {
	id, err := git.ParseOID(sha)
	if err != nil {
		return "", err
	}
	names, err := repo.RefsContainingUnder(ctx, id, "refs/heads", "refs/atlas/recovery", "refs/atlas/pins", "refs/tags")
	if err != nil {
		return "", err
	}
	for _, name := range names {
		if !deleting[name] {
			return name, nil
		}
	}
	return "", nil
}

// Apply carries out a gc. It makes the plan Plan would print from a fresh audit and
// does that plan, never more: it removes the planned worktrees (each snapshotted
// first when anything could be lost), then audits again and re-plans the ref
// deletions, and deletes a planned ref only when the re-check still plans it (the
// same ref at the same value; a run ref's own tip moves with the removals' events),
// as compare-and-swap updates one transaction per run. A ref the re-check no longer
// plans is kept, and so is every snapshot this pass took or reused: it holds the
// bytes of a worktree gc just removed. Foreign worktrees and live, interrupted or
// stopped runs are never touched. Errors of independent steps are gathered; the
// actions returned say which were done, and why any planned one was not.
func Apply(ctx context.Context, store *gitstate.Store, opt GCOptions) ([]Action, error) {
	if opt.Now.IsZero() {
		opt.Now = store.Now()
	}
	rep, err := Audit(ctx, store, Options{Now: opt.Now, Progress: opt.Progress})
	if err != nil && rep == nil {
		return nil, err
	}
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	opt.newest = newest(rep, opt.KeepLast, opt.Now)
	old := map[string]bool{}
	for id := range rep.runs {
		if droppable(rep, id, opt) {
			old[id] = true
		}
	}
	plan, err := Plan(ctx, store.Repo, rep, opt)
	if err != nil {
		errs = append(errs, err)
	}
	touched := map[string]bool{}
	var acts, refActs, kept, leftovers, strays []Action
	for _, a := range plan {
		switch a.Kind {
		case RemoveWorktree:
			acts = append(acts, a)
		case RemoveStray, KeepStray:
			strays = append(strays, a)
		case KeepRun, KeepWorktree:
			kept = append(kept, a)
		case RemoveLeftover:
			leftovers = append(leftovers, a)
		default:
			refActs = append(refActs, a)
		}
	}
	for i := range leftovers {
		if err := removeLeftover(&leftovers[i], opt.Now); err != nil {
			errs = append(errs, err)
		}
	}
	for i := range strays {
		if strays[i].Kind != RemoveStray {
			continue
		}
		if err := removeStray(ctx, store, rep, &strays[i]); err != nil {
			errs = append(errs, err)
		}
		if strays[i].Done {
			touched[strays[i].RunID] = true
		}
	}
	taken := map[string]bool{} // refs of the snapshots this pass took or reused
	progress.Start(opt.Progress, "removing worktrees", len(acts))
	for i := range acts {
		a := &acts[i]
		a.IgnoredToDelete = nil // what was deleted is IgnoredDeleted
		res, err := recovery.PreserveAndRemove(ctx, store, a.RunID, a.Node,
			recovery.Options{Reason: "gc", IncludeIgnored: opt.Ignored.IncludeIgnored, IgnoredCap: opt.Ignored.IgnoredCap})
		progress.Add(opt.Progress, 1)
		if res != nil && res.Snapshot != nil {
			a.Snapshot = res.Snapshot.Rec.ID
			taken[res.Snapshot.Rec.Ref] = true
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("remove worktree %s: %w", a.Path, err))
			continue
		}
		a.Done = true
		a.IgnoredDeleted = res.IgnoredDeleted
		touched[a.RunID] = true
	}
	if len(refActs) == 0 {
		removeEmptyRunDirs(ctx, store.Repo, touched)
		return append(append(append(acts, kept...), leftovers...), strays...), par.Join(errs)
	}
	progress.Done(opt.Progress)
	if len(acts) > 0 {
		if rep, err = Audit(ctx, store, Options{Now: opt.Now, Progress: opt.Progress}); err != nil {
			errs = append(errs, err)
			if rep == nil {
				return append(append(append(append(acts, refActs...), kept...), leftovers...), strays...), par.Join(errs)
			}
		}
	}
	again, err := planRefs(ctx, store.Repo, rep, opt, nil, old)
	if err != nil {
		errs = append(errs, err)
	}
	still := map[string]Action{}
	for _, a := range again {
		still[a.Kind+" "+a.Ref] = a
	}
	// Each run's refs go in one transaction: a lost race leaves that run whole.
	byRun := map[string][]int{}
	var order []string
	for i := range refActs {
		a := &refActs[i]
		b, ok := still[a.Kind+" "+a.Ref]
		switch {
		case taken[a.Ref]:
			a.Skipped = "this gc pass took it: it holds the worktree it removed"
			continue
		case !ok:
			a.Skipped = "no longer applies"
			continue
		case a.Kind != DropRun && b.Old != a.Old:
			a.Skipped = "it moved since the plan"
			continue
		}
		a.Old = b.Old
		if a.Kept != "" {
			if err := keepStrayBranch(ctx, store.Repo, a); err != nil {
				a.Skipped = "its commits could not be kept first"
				errs = append(errs, fmt.Errorf("keep branch %s under %s: %w", a.Ref, a.Kept, err))
				continue
			}
		}
		if _, ok := byRun[a.RunID]; !ok {
			order = append(order, a.RunID)
		}
		byRun[a.RunID] = append(byRun[a.RunID], i)
	}
	sort.Strings(order)
	for _, run := range order {
		var ups []git.RefUpdate
		for _, i := range byRun[run] {
			ups = append(ups, git.RefUpdate{Name: refActs[i].Ref, Old: refActs[i].Old, New: store.Repo.NullID()})
		}
		err := deleteRefs(ctx, store.Repo, ups)
		if err != nil {
			errs = append(errs, fmt.Errorf("gc run %s: %w", run, err))
			continue
		}
		touched[run] = true
		for _, i := range byRun[run] {
			a := &refActs[i]
			a.Done = true
			switch {
			case a.Kind == DropRun:
				_ = store.Repo.RemoveMutex(gitstate.RunMutex(run))
			case a.Kind == DeleteRef && a.Patch != "":
				// The snapshot's own patch, at the path gc owns (never a --patch-out file).
				// Its directory is flushed: a crash never brings back a patch whose
				// ref is gone (nothing would find it to remove it again).
				if err := git.Remove(a.Patch); err != nil && !errors.Is(err, os.ErrNotExist) {
					errs = append(errs, fmt.Errorf("remove patch %s: %w", a.Patch, err))
				}
			}
		}
	}
	removeEmptyRunDirs(ctx, store.Repo, touched)
	return append(append(append(append(acts, refActs...), kept...), leftovers...), strays...), par.Join(errs)
}

// patchPath is where a recovery snapshot's patch lives by default; gc removes that
// file with the snapshot's ref (a --patch-out file elsewhere is the user's).
func patchPath(repo *git.Repository, ref string) string {
	rest, ok := strings.CutPrefix(ref, ledger.RecoveryPrefix)
	if !ok {
		return ""
	}
	run, id, ok := strings.Cut(rest, "/")
	if !ok || strings.Contains(id, "/") {
		return ""
	}
	p := repo.Layout().Patch(run, id)
	if st, err := os.Lstat(p); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return p
}

// removeEmptyRunDirs removes the per-run directories gc's own removals may have
// emptied: the run's worktree directory under the managed root and its recovery
// patch directory. os.Remove removes only an empty directory: anything still in
// one keeps it.
func removeEmptyRunDirs(ctx context.Context, repo *git.Repository, runs map[string]bool) {
	root, rootErr := worktrees.Root(ctx, repo)
	for run := range runs {
		if ledger.ValidName("run", run) != nil {
			continue
		}
		if rootErr == nil {
			_ = git.Remove(filepath.Join(root, run))
		}
		_ = git.Remove(repo.Layout().RecoveryDir(run))
	}
}

// deleteRefs deletes one run's refs in one transaction, waiting out a lock in the
// way (git.Repository.WaitLocks): gc is never in a hurry, and giving up would leave
// the run half-collected until the next gc.
func deleteRefs(ctx context.Context, repo *git.Repository, ups []git.RefUpdate) error {
	return repo.WaitLocks(ctx, func() error { return repo.UpdateRefs(ctx, "atlas gc", ups...) })
}
