// Package audit classifies every worktree and every atlas/ branch and ref against the run ledger, and plans and applies the garbage collection of what finished runs left behind (docs/contract.md §8).
package audit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/par"
	"github.com/git-atlas/git-atlas/internal/progress"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/recovery"
	"github.com/git-atlas/git-atlas/trust"
	"github.com/git-atlas/git-atlas/worktrees"
)

// Labels of worktrees and refs (docs/contract.md §8).
const (
	Active      = "active"      // its run is live
	Interrupted = "interrupted" // its run needs resuming
	Orphaned    = "orphaned"    // its run is finished or gone
	Dirty       = "dirty"
	Missing     = "missing" // its directory is gone (prunable)
	Locked      = "locked"
	Foreign     = "foreign"    // not git-atlas's: listed, never touched
	Unreadable  = "unreadable" // its run's ledger cannot be read
	// Making: a checkout another git-atlas process is making right now; left alone.
	Making = "making"
	// HalfMade: a checkout a process began and never finished (it died): it may hold
	// an agent's work, which `git atlas resume` or `worktree add` preserves.
	HalfMade = "half-made"
	// Broken: git cannot read the worktree (no HEAD, or a HEAD at no commit); the
	// next resume or worktree add of its node sets it aside whole.
	Broken   = "broken"
	Finished = "finished" // a run ref whose run completed or failed here
	// FinishedElsewhere: a run ref whose run completed or failed by the word of
	// another clone's ledger (no event this clone wrote finished it, and no person
	// trusted the run here): gc keeps it, its worktrees and its snapshots as if live
	// (docs/contract.md §8).
	FinishedElsewhere = "finished-elsewhere"
	StaleBranch       = "stale-branch"
	Unpinned          = "unpinned"
	Recovery          = "recovery"
	Pin               = "pin"
	RunLabel          = "run"
	Branch            = "branch"
	// SetAside: a directory a checkout git could not read was renamed to (killed
	// before git wrote its HEAD, then written into): kept whole, never removed, and
	// listed until a person has looked (worktrees.SetAside).
	SetAside = "set-aside"
	// Stray: left under the managed root by no run (docs/contract.md §15): a directory there
	// git no longer knows, git's record of a managed worktree whose directory is gone,
	// an atlas/ branch of a run that no longer exists. gc removes it (a snapshot first
	// when it holds anything); anything outside the managed root stays foreign.
	Stray = "stray"
)

// Worktree is one worktree of `git worktree list`, classified.
type Worktree struct {
	Path   string   `json:"path"`
	RunID  string   `json:"run_id"`
	Node   string   `json:"node"`
	Branch string   `json:"branch,omitempty"`
	Labels []string `json:"labels"`
	// Reason says why a worktree a ledger record names is foreign: not one git-atlas
	// manages (worktrees.Own), so nothing changes it.
	Reason string `json:"reason,omitempty"`
	// TextWithheld: Reason was withheld, for an agent, because it quotes the record
	// of a run neither started nor trusted here (set by the agent-facing front ends).
	TextWithheld bool `json:"text_withheld,omitempty"`
	// claimed: a ledger record names this foreign worktree (not adopted at import):
	// a pulled or edited record pointing at a worktree of the user's.
	claimed bool
}

// Ref is one ref under refs/atlas/ or refs/heads/atlas/, classified.
type Ref struct {
	Ref    string   `json:"ref"`
	ID     string   `json:"id"`
	RunID  string   `json:"run_id"`
	Labels []string `json:"labels"`
	// Size is the disk usage in bytes of a recovery snapshot's tree (with --size).
	Size *int64 `json:"size,omitempty"`
}

// Report is what Audit found.
type Report struct {
	Worktrees []Worktree `json:"worktrees"`
	Refs      []Ref      `json:"refs"`
	Attention bool       `json:"attention"`
	// Leftovers are the temporary files and directories failed or killed writes
	// left (docs/contract.md §11.12); gc removes those older than LeftoverGrace. They lose nothing
	// and need no person: not a matter of attention.
	Leftovers []Leftover `json:"leftovers,omitempty"`

	runs map[string]gitstate.Entry
	// elsewhere are the runs finished by the word of another clone (FinishedElsewhere).
	elsewhere map[string]bool
	// diverged are the runs with a chain kept under refs/atlas/diverged/.
	diverged map[string]bool
	refs     map[string]string // name -> id
	trees    []git.WorktreeInfo
}

// Options tune Audit.
type Options struct {
	Size bool      // measure recovery snapshots
	Now  time.Time // zero: the store's clock
	// Progress hears of the per-worktree and per-snapshot checks (nil: nobody).
	Progress progress.Reporter
}

// Has reports whether labels holds l.
func Has(labels []string, l string) bool {
	return slices.Contains(labels, l)
}

// attention labels: something a person (or gc) should look at.
var attention = []string{Orphaned, StaleBranch, Unpinned, Unreadable, HalfMade, Broken, SetAside, Stray}

func needsAttention(labels []string) bool {
	for _, l := range attention {
		if Has(labels, l) {
			return true
		}
	}
	return false
}

// runState is the label of run id's liveness: active, interrupted, finished,
// finished elsewhere, or unreadable; "" when the run is gone.
func (rep *Report) runState(id string, now time.Time) string {
	e, ok := rep.runs[id]
	switch {
	case !ok:
		return ""
	case e.Err != nil || e.Run == nil:
		return Unreadable
	case ledger.RunTerminal(e.Run.State.Status) && rep.elsewhere[id]:
		return FinishedElsewhere
	case ledger.RunTerminal(e.Run.State.Status):
		return Finished
	case e.Run.Interrupted(now):
		return Interrupted
	}
	return Active
}

// finished reports whether run id is finished here: completed or failed, by an event
// this clone wrote or in a run a person trusted here (finishedElsewhere). Every
// decision of gc's that removes or drops anything because a run is finished asks this.
func (rep *Report) finished(id string) bool {
	e, ok := rep.runs[id]
	return ok && e.Err == nil && e.Run != nil && ledger.RunTerminal(e.Run.State.Status) && !rep.elsewhere[id]
}

// finishedElsewhere names the runs whose ledger says they are finished on another
// clone's word alone: the event with which each became finished (gitstate's
// FinishedBy) is not one this clone wrote (its MAC), or a pull once replaced the run's
// chain with a remote's (a chain kept under refs/atlas/diverged/<run>/: the remote's
// may end on an old finish of this clone's, taken from a chain this clone left behind,
// after this clone went on working), and no person trusted the run here. A shared
// ledger is written by every clone that shares it, so a hostile one could declare any
// run finished, a live one of this clone's among them; gc then removes nothing and
// drops nothing of that run's (docs/contract.md §8).
func finishedElsewhere(ctx context.Context, store *gitstate.Store, entries []gitstate.Entry, diverged map[string]bool) (map[string]bool, error) {
	key, _ := store.SessionKey() // without one, no event reads as this clone's
	intents := trust.NewIntents(store.Repo)
	var ids []string
	var runs []*ledger.Run
	for _, e := range entries {
		if e.Err == nil && e.Run != nil && ledger.RunTerminal(e.Run.State.Status) && !intents.Vouched(ctx, e.ID, e.Run.Header.Intent) {
			ids, runs = append(ids, e.ID), append(runs, e.Run)
		}
	}
	finishes, err := store.FinishedBy(ctx, runs)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for i, id := range ids {
		if finishes[i] == nil || !key.OwnEvent(id, finishes[i]) || diverged[id] {
			out[id] = true
		}
	}
	return out, nil
}

// divergedRuns are the runs with a chain kept under refs/atlas/diverged/ among the
// ref names.
func divergedRuns(names []string) map[string]bool {
	out := map[string]bool{}
	for _, name := range names {
		if c, err := gitstate.ParseCarriedRef(name); err == nil && c.Kind == gitstate.KindDiverged {
			out[c.Run] = true
		}
	}
	return out
}

// Audit reads `git worktree list`, the ledger and the atlas refs once each and
// classifies every worktree and ref. It changes nothing. The errors of the many
// independent checks (a status, a size) are gathered into one *multierror.Error
// returned with the report, so one failure never hides the others.
//
// In steps: read the three lists, classify the worktrees and the refs from them
// alone, run the checks that need git (a status per worktree, a size per snapshot) in
// parallel, add the directories set aside, and decide whether anything needs
// attention.
func Audit(ctx context.Context, store *gitstate.Store, opt Options) (*Report, error) {
	now := opt.Now
	if now.IsZero() {
		now = store.Now()
	}
	rep, entries, names, err := read(ctx, store)
	if err != nil {
		return nil, err
	}
	rep.diverged = divergedRuns(names)
	if rep.elsewhere, err = finishedElsewhere(ctx, store, entries, rep.diverged); err != nil {
		return nil, err
	}
	root, rootErr := worktrees.Root(ctx, store.Repo)
	gate, gateErr := worktrees.NewGate(ctx, store.Repo)
	own := func(run string, rec ledger.WorktreeRec) error {
		if gateErr != nil {
			return gateErr
		}
		return gate.Foreign(run, rec)
	}
	dirtyChecks := rep.classifyWorktrees(owners(entries), own, root, rootErr, now)
	sizeChecks := rep.classifyRefs(names, opt.Size, now)
	var checks []func() error
	for _, k := range dirtyChecks {
		checks = append(checks, statusCheck(ctx, store.Repo, &rep.Worktrees[k]))
	}
	for _, k := range sizeChecks {
		checks = append(checks, sizeCheck(ctx, store.Repo, &rep.Refs[k]))
	}
	// In parallel once the lists are complete, four at once. Each writes only its own
	// element; their errors are gathered in this order.
	progress.Start(opt.Progress, "checking worktrees", len(checks))
	errs := par.Join(par.Each(len(checks), 4, func(i int) error {
		defer progress.Add(opt.Progress, 1)
		return checks[i]()
	}))
	progress.Done(opt.Progress)
	if rootErr == nil {
		rep.addSetAside(root)
		rep.addStrayDirs(root)
	}
	rep.addLeftovers(store.Repo, root, rootErr == nil, now)
	rep.Attention = rep.needsAttention()
	return rep, errs
}

// read lists the worktrees, the ledger's runs and the atlas refs (their names in
// order).
func read(ctx context.Context, store *gitstate.Store) (*Report, []gitstate.Entry, []string, error) {
	repo := store.Repo
	trees, err := repo.ListWorktrees(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	entries, err := store.List(ctx, gitstate.ListOptions{Depth: gitstate.ListFull})
	if err != nil {
		return nil, nil, nil, err
	}
	atlasRefs, err := repo.ListRefs(ctx, "refs/atlas", "refs/heads/atlas")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("list atlas refs: %w", err)
	}
	rep := &Report{Worktrees: []Worktree{}, Refs: []Ref{}, runs: map[string]gitstate.Entry{}, refs: map[string]string{}, trees: trees}
	for _, e := range entries {
		rep.runs[e.ID] = e
	}
	var names []string
	for _, ref := range atlasRefs {
		rep.refs[ref.Name] = ref.ID
		names = append(names, ref.Name)
	}
	return rep, entries, names, nil
}

// owner is the run and node a worktree belongs to, and the record naming it (nil for
// a worktree no record names).
type owner struct {
	run, node string
	rec       *ledger.WorktreeRec
}

// owners maps each path a ledger record names to its run and node (the last run
// listed wins a path two runs name).
func owners(entries []gitstate.Entry) map[string]owner {
	owners := map[string]owner{}
	for _, e := range entries {
		if e.Run == nil {
			continue
		}
		for i, w := range e.Run.State.Worktrees {
			owners[filepath.Clean(w.Path)] = owner{e.ID, w.Node, &e.Run.State.Worktrees[i]}
		}
	}
	return owners
}

// classifyWorktrees labels every worktree git lists from the lists alone and returns
// the indexes of those whose status must still be checked (present and git-atlas's).
func (rep *Report) classifyWorktrees(owners map[string]owner, own func(string, ledger.WorktreeRec) error, root string, rootErr error, now time.Time) []int {
	var dirtyChecks []int
	for i, t := range rep.trees {
		w := Worktree{Path: t.Path, Branch: strings.TrimPrefix(t.Branch, "refs/heads/"), Labels: []string{}}
		if t.Locked {
			w.Labels = append(w.Labels, Locked)
		}
		st, serr := os.Stat(t.Path)
		missing := t.Prunable || serr != nil || !st.IsDir()
		if missing {
			w.Labels = append(w.Labels, Missing)
		}
		o, owned := owners[filepath.Clean(t.Path)]
		if !owned && i > 0 {
			o, owned = unrecordedOwner(t, root, rootErr)
		}
		if !owned || i == 0 {
			w.Labels = append([]string{Foreign}, w.Labels...)
			rep.Worktrees = append(rep.Worktrees, w)
			continue
		}
		if o.rec != nil {
			// A ledger names it: git-atlas's only when it manages it (worktrees.Own);
			// otherwise foreign, never status-checked or collected.
			if err := own(o.run, *o.rec); err != nil {
				w.RunID, w.Node, w.Reason, w.claimed = o.run, o.node, err.Error(), o.rec.Adopted == ""
				w.Labels = append([]string{Foreign}, w.Labels...)
				rep.Worktrees = append(rep.Worktrees, w)
				continue
			}
		}
		w.RunID, w.Node = o.run, o.node
		_, ok := rep.runs[o.run]
		state := rep.runState(o.run, now)
		if state == "" || state == Finished {
			state = Orphaned
		}
		w.Labels = append([]string{state}, w.Labels...)
		if missing && state == Orphaned && (!ok || o.rec == nil) && rootErr == nil && underRoot(t.Path, root) {
			// git's record of a managed worktree that is gone, which no ledger
			// record of a run names (a recorded one is gc's remove-worktree)
			w.Labels = append(w.Labels, Stray)
		}
		rep.Worktrees = append(rep.Worktrees, w)
		if !missing {
			dirtyChecks = append(dirtyChecks, len(rep.Worktrees)-1)
		}
	}
	return dirtyChecks
}

// unrecordedOwner says whose a worktree no ledger record names is: git-atlas's own
// when its lock says so, or when it lives under the managed root on an atlas/ branch.
func unrecordedOwner(t git.WorktreeInfo, root string, rootErr error) (owner, bool) {
	if run, node, ok := parseLockReason(t.LockReason); ok {
		return owner{run: run, node: node}, true
	}
	if rootErr == nil && strings.HasPrefix(filepath.Clean(t.Path), root+string(filepath.Separator)) && isRunBranch(t.Branch) {
		rel, _ := filepath.Rel(root, t.Path)
		run, node, _ := strings.Cut(filepath.ToSlash(rel), "/")
		return owner{run: run, node: node}, true
	}
	return owner{}, false
}

// classifyRefs labels every atlas ref and returns the indexes of the snapshots whose
// size must be measured (with size).
func (rep *Report) classifyRefs(names []string, size bool, now time.Time) []int {
	var sizeChecks []int
	for _, name := range names {
		r := Ref{Ref: name, ID: rep.refs[name], Labels: []string{}}
		switch {
		case strings.HasPrefix(name, gitstate.RunsPrefix):
			r.RunID = strings.TrimPrefix(name, gitstate.RunsPrefix)
			e := rep.runs[r.RunID]
			r.Labels = append(r.Labels, RunLabel)
			if s := rep.runState(r.RunID, now); s != "" {
				r.Labels = append(r.Labels, s)
			}
			if _, pinned := rep.refs[gitstate.PinRef(r.RunID, "baseline")]; !pinned && e.Run != nil {
				r.Labels = append(r.Labels, Unpinned)
			}
		case strings.HasPrefix(name, gitstate.PinsPrefix):
			r.RunID, _, _ = strings.Cut(strings.TrimPrefix(name, gitstate.PinsPrefix), "/")
			r.Labels = append(r.Labels, Pin)
			if _, ok := rep.runs[r.RunID]; !ok {
				r.Labels = append(r.Labels, Orphaned)
			}
		case strings.HasPrefix(name, ledger.RecoveryPrefix):
			r.RunID, _, _ = strings.Cut(strings.TrimPrefix(name, ledger.RecoveryPrefix), "/")
			r.Labels = append(r.Labels, Recovery)
			if size {
				sizeChecks = append(sizeChecks, len(rep.Refs))
			}
		case isRunBranch(name):
			// Only a shape git-atlas gives a branch is a run's: a person's own
			// atlas/wip is "other", never deleted.
			r.RunID, _ = gitstate.BranchRun(name)
			r.Labels = append(r.Labels, Branch)
			_, ok := rep.runs[r.RunID]
			if s := rep.runState(r.RunID, now); s == "" || s == Finished {
				r.Labels = append(r.Labels, StaleBranch)
			}
			if !ok {
				r.Labels = append(r.Labels, Stray) // its run no longer exists
			}
		default:
			r.Labels = append(r.Labels, "other")
		}
		rep.Refs = append(rep.Refs, r)
	}
	return sizeChecks
}

// isRunBranch reports whether ref is a branch of a run's shape (gitstate.BranchRun).
func isRunBranch(ref string) bool {
	_, ok := gitstate.BranchRun(ref)
	return ok
}

// statusCheck labels a present worktree of git-atlas's dirty, being made, half-made,
// missing or broken.
func statusCheck(ctx context.Context, repo *git.Repository, w *Worktree) func() error {
	return func() error {
		// A checkout being made (or left half-made) has no readable HEAD until git
		// finishes it: it is classified by its marker, never status-checked.
		if l := makingLabel(w.Path); l != "" {
			w.Labels = append(w.Labels, l)
			return nil
		}
		dirty, err := repo.Worktree(w.Path).Dirty(ctx)
		if err != nil && ctx.Err() == nil {
			// Another agent may be removing, re-adding or making this worktree while
			// we look (git then reports the half-gone directory as of "dubious
			// ownership", or a new one's HEAD as a bad object): a directory that went
			// away is missing, not an error, a checkout begun meanwhile is classified
			// by its marker, and one still there is read again once its remover had
			// time to end.
			for try := 0; try < 3 && err != nil; try++ {
				select {
				case <-ctx.Done():
					return fmt.Errorf("status of worktree %s: %w", w.Path, ctx.Err())
				case <-time.After(50 * time.Millisecond):
				}
				if _, serr := os.Lstat(w.Path); errors.Is(serr, fs.ErrNotExist) {
					w.Labels = append(w.Labels, Missing)
					return nil
				}
				if l := makingLabel(w.Path); l != "" {
					w.Labels = append(w.Labels, l)
					return nil
				}
				dirty, err = repo.Worktree(w.Path).Dirty(ctx)
			}
		}
		if err != nil && ctx.Err() == nil {
			if sha, _, herr := repo.Worktree(w.Path).Head(ctx); herr != nil || strings.Trim(sha, "0") == "" {
				// No HEAD git can read: a checkout killed before its marker existed,
				// or a .git file damaged by hand. Reported, not fatal.
				w.Labels = append(w.Labels, Broken)
				return nil
			}
		}
		if err != nil {
			return fmt.Errorf("status of worktree %s: %w", w.Path, err)
		}
		if dirty {
			w.Labels = append(w.Labels, Dirty)
		}
		return nil
	}
}

// sizeCheck measures a recovery snapshot's tree.
func sizeCheck(ctx context.Context, repo *git.Repository, r *Ref) func() error {
	return func() error {
		id, err := git.ParseOID(r.ID)
		if err != nil {
			return fmt.Errorf("size of %s: %w", r.Ref, err)
		}
		n, err := repo.TreeDiskUsage(ctx, id)
		if err != nil {
			return fmt.Errorf("size of %s: %w", r.Ref, err)
		}
		r.Size = &n
		return nil
	}
}

// addSetAside lists the directories set aside under the managed root.
func (rep *Report) addSetAside(root string) {
	for _, p := range worktrees.SetAside(root, "") {
		rel, _ := filepath.Rel(root, p)
		run, name, _ := strings.Cut(filepath.ToSlash(rel), "/")
		node, _, _ := strings.Cut(name, worktrees.SetAsideMark)
		rep.Worktrees = append(rep.Worktrees, Worktree{Path: p, RunID: run, Node: node, Labels: []string{SetAside}})
	}
}

// underRoot reports whether path lies under the managed root.
func underRoot(path, root string) bool {
	return strings.HasPrefix(filepath.Clean(path), root+string(filepath.Separator))
}

// addStrayDirs lists the directories <root>/<run>/<name> git no longer knows as a
// worktree: not one git lists, not set aside, not a removal's trash, and with no
// checkout being made there (its marker).
func (rep *Report) addStrayDirs(root string) {
	known := map[string]bool{}
	for _, t := range rep.trees {
		known[filepath.Clean(t.Path)] = true
		if real, err := filepath.EvalSymlinks(t.Path); err == nil {
			known[real] = true
		}
	}
	runs, _ := os.ReadDir(root)
	for _, run := range runs {
		if !run.IsDir() {
			continue
		}
		names, _ := os.ReadDir(filepath.Join(root, run.Name()))
		for _, n := range names {
			p := filepath.Join(root, run.Name(), n.Name())
			switch {
			case !n.IsDir() || known[p], strings.Contains(n.Name(), worktrees.SetAsideMark), strings.HasPrefix(n.Name(), recovery.TrashPrefix),
				strings.HasSuffix(n.Name(), worktrees.MaterializingSuffix):
				continue
			}
			if real, err := filepath.EvalSymlinks(p); err == nil && known[real] {
				continue
			}
			if inProgress, halfMade, _ := worktrees.Making(p); inProgress || halfMade {
				continue // being made, or left half-made: resume's or worktree add's
			}
			rep.Worktrees = append(rep.Worktrees, Worktree{Path: p, RunID: run.Name(), Node: n.Name(), Labels: []string{Stray}})
		}
	}
}

// Leftover is a temporary file or directory a failed or killed write left.
type Leftover struct {
	// Kind: tmp-object (git's or git-atlas's temporary object or pack file),
	// tmp-index (a snapshot's temporary index), trash (a worktree directory a
	// killed removal had moved aside, its snapshot already recorded).
	Kind string    `json:"kind"`
	Path string    `json:"path"`
	Size int64     `json:"size"`
	Age  string    `json:"age"`
	at   time.Time // its modification time
}

// LeftoverTrash is the kind of a worktree directory a killed removal left aside.
const LeftoverTrash = "trash"

// LeftoverGrace is how old a leftover must be before gc removes it: a concurrent git
// may still be writing a temporary object file (git's own prune waits two weeks for
// objects; an hour is plenty for a temporary file), a concurrent removal still
// deleting its trash.
const LeftoverGrace = time.Hour

// addLeftovers lists the temporary files in the object store and git-atlas's
// directories, and the trash directories beside the managed worktrees.
func (rep *Report) addLeftovers(repo *git.Repository, root string, haveRoot bool, now time.Time) {
	for _, l := range repo.Leftovers(0) {
		rep.Leftovers = append(rep.Leftovers, Leftover{Kind: l.Kind, Path: l.Path, Size: l.Size, at: l.ModTime})
	}
	if haveRoot {
		dirs, _ := filepath.Glob(filepath.Join(root, "*", recovery.TrashPrefix+"*"))
		for _, d := range dirs {
			fi, err := os.Lstat(d)
			if err != nil || !fi.IsDir() {
				continue
			}
			rep.Leftovers = append(rep.Leftovers, Leftover{Kind: LeftoverTrash, Path: d, Size: diskSize(d), at: fi.ModTime()})
		}
	}
	for i := range rep.Leftovers {
		rep.Leftovers[i].Age = now.Sub(rep.Leftovers[i].at).Truncate(time.Second).String()
	}
}

// diskSize is the bytes of the regular files under dir.
func diskSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// needsAttention says whether any worktree or ref needs a person (or gc): a label
// of attention, or a missing worktree of git-atlas's.
func (rep *Report) needsAttention() bool {
	for i := range rep.Worktrees {
		if needsAttention(rep.Worktrees[i].Labels) || (Has(rep.Worktrees[i].Labels, Missing) && !Has(rep.Worktrees[i].Labels, Foreign)) || rep.Worktrees[i].claimed {
			return true
		}
	}
	for _, r := range rep.Refs {
		if needsAttention(r.Labels) {
			return true
		}
	}
	return false
}

// makingLabel is Making or HalfMade when a checkout of path was begun and not
// finished, "" otherwise.
func makingLabel(path string) string {
	inProgress, halfMade, _ := worktrees.Making(path)
	switch {
	case inProgress:
		return Making
	case halfMade:
		return HalfMade
	}
	return ""
}

// parseLockReason reads worktrees' lock reason "git-atlas run <run> node <node>".
func parseLockReason(reason string) (run, node string, ok bool) {
	f := strings.Fields(reason)
	if len(f) != 5 || f[0] != "git-atlas" || f[1] != "run" || f[3] != "node" {
		return "", "", false
	}
	return f[2], f[4], true
}
