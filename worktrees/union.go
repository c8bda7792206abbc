package worktrees

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/progress"
	"github.com/git-atlas/git-atlas/ledger"
)

// UnionOptions are the choices of BuildUnion.
type UnionOptions struct {
	// Nodes are integrated in this order. nil means the run's finished nodes: a graph
	// run's DONE jobs in dependency order (ties by id); a single run's recorded node
	// worktrees, stages first in pipeline order.
	Nodes []string
	// Force moves the union branch even when its tip is not a union git-atlas built
	// (someone committed on it); that tip is kept first under a recovery ref
	// (UnionResult.Kept), in the transaction that moves the branch.
	Force bool
	// Progress hears of each node merged (nil: nobody).
	Progress progress.Reporter
	// AllowOutsideScope are jobs integrated although their branch changed paths
	// outside their scope (docs/contract.md §5.3), a person's step approved by
	// ApprovedBy, which the build's event records.
	AllowOutsideScope []string
	ApprovedBy        string
}

// UnionResult is what BuildUnion built.
type UnionResult struct {
	// Rec is the union worktree, on branch atlas/<run>/union at Union.Head.
	Rec   ledger.WorktreeRec
	Union ledger.UnionRec
	// Missing are nodes that have no branch, so nothing to integrate.
	Missing []string
	// Changed: a new union was recorded; false when it was already up to date.
	Changed bool
	// Kept is the ref that keeps the union branch's old tip (KeptCommit), a commit
	// git-atlas did not build, when Force moved the branch away from it ("" otherwise).
	Kept, KeptCommit string
	// Created: the union worktree was made by this build (its setup is owed).
	Created bool
}

// union commits are made by git-atlas itself, dated from their parents, so that the
// same baseline and node tips always give the same commits: rebuilding with nothing
// new changes nothing.
const (
	unionName  = "git-atlas"
	unionEmail = "git-atlas@localhost"
)

// BuildUnion (re)builds the union of run: starting at the run's baseline, each node's
// branch is merged in turn with `git merge-tree --write-tree` and `git commit-tree`,
// touching no worktree and no index; a node that conflicts is left out and reported
// with its paths, and the rest go on. The union worktree (node "union") is then made,
// or moved to the result if it is clean, and the build recorded (`union_built`). The
// union is never merged into any branch of the user's.
func BuildUnion(ctx context.Context, store *gitstate.Store, run string, opts UnionOptions) (*UnionResult, error) {
	repo := store.Repo
	r, err := store.Load(ctx, run)
	if err != nil {
		return nil, err
	}
	if err := open(r); err != nil {
		return nil, err
	}
	nodes, explicit, err := unionNodes(r, opts.Nodes)
	if err != nil {
		return nil, err
	}
	if err := checkAllowed(r, opts.AllowOutsideScope); err != nil {
		return nil, err
	}
	res := &UnionResult{Missing: []string{}}
	var parts []part
	for _, n := range nodes {
		tip, err := repo.ReadRef(ctx, branchRef(BranchFor(run, n)))
		if err != nil {
			return nil, err
		}
		if tip == "" {
			if explicit {
				return nil, fault.NotFound("node %s of run %s has no branch %s", n, run, BranchFor(run, n)).
					WithHint("give it a worktree with `%s`", writes(store, fault.Do("worktree add", "run", run, "node", n)))
			}
			res.Missing = append(res.Missing, n)
			continue
		}
		parts = append(parts, part{node: n, tip: tip})
	}
	var scoped ledger.UnionRec
	if parts, err = scopeParts(ctx, repo, r, parts, opts.AllowOutsideScope, &scoped); err != nil {
		return nil, err
	}
	progress.Start(opts.Progress, "integrating nodes", len(parts))
	head, integrated, conflicted, err := integrate(ctx, repo, run, r.Header.Baseline, parts, opts.Progress)
	progress.Done(opts.Progress)
	if err != nil {
		return nil, err
	}
	headID, err := git.ParseOID(head)
	if err != nil {
		return nil, err
	}
	res.Union = ledger.UnionRec{Head: headID, Integrated: integrated, Conflicted: conflicted,
		OutsideScope: scoped.OutsideScope, AllowedOutsideScope: scoped.AllowedOutsideScope}
	if len(res.Missing) > 0 {
		res.Union.Missing = res.Missing
	}
	if err := placeUnion(ctx, store, r, res, opts.Force, opts.ApprovedBy); err != nil {
		return nil, err
	}
	return res, nil
}

// part is one node to integrate and its branch's tip.
type part struct{ node, tip string }

// unionNodes picks the nodes to integrate and says whether the caller named them.
func unionNodes(r *ledger.Run, names []string) ([]string, bool, error) {
	if names != nil {
		seen := map[string]bool{}
		for _, n := range names {
			if err := ledger.ValidName("node", n); err != nil {
				return nil, true, err
			}
			if n == Union {
				return nil, true, fault.Usage("the union cannot integrate itself")
			}
			if seen[n] {
				return nil, true, fault.Usage("node %s is named twice", n)
			}
			seen[n] = true
		}
		return names, true, nil
	}
	if r.Header.Kind == ledger.KindGraph {
		var done []ledger.Job
		for _, j := range r.State.Jobs {
			if j.State == ledger.JobDone {
				done = append(done, j)
			}
		}
		order, err := Order(done)
		return order, false, err
	}
	var nodes []string
	taken := map[string]bool{Union: true}
	for _, s := range r.State.Stages {
		if r.State.Worktree(s.Name) != nil {
			nodes, taken[s.Name] = append(nodes, s.Name), true
		}
	}
	for _, w := range r.State.Worktrees {
		if !taken[w.Node] {
			nodes, taken[w.Node] = append(nodes, w.Node), true
		}
	}
	return nodes, false, nil
}

// Order sorts jobs so that each comes after the jobs it needs, ties broken by id
// (Kahn's algorithm, smallest ready id first). Needs outside jobs are taken as met;
// a cycle among jobs is an error.
func Order(jobs []ledger.Job) ([]string, error) {
	in := map[string]bool{}
	for _, j := range jobs {
		if in[j.ID] {
			return nil, fault.Refused("job %s is listed twice", j.ID)
		}
		in[j.ID] = true
	}
	waiting := map[string]int{}
	dependents := map[string][]string{}
	for _, j := range jobs {
		seen := map[string]bool{}
		for _, n := range j.Needs {
			if in[n] && !seen[n] {
				seen[n] = true
				waiting[j.ID]++
				dependents[n] = append(dependents[n], j.ID)
			}
		}
	}
	var ready []string
	for _, j := range jobs {
		if waiting[j.ID] == 0 {
			ready = append(ready, j.ID)
		}
	}
	sort.Strings(ready)
	order := make([]string, 0, len(jobs))
	for len(ready) > 0 {
		id := ready[0]
		ready = ready[1:]
		order = append(order, id)
		for _, d := range dependents[id] {
			if waiting[d]--; waiting[d] == 0 {
				i := sort.SearchStrings(ready, d)
				ready = append(ready[:i], append([]string{d}, ready[i:]...)...)
			}
		}
	}
	if len(order) != len(jobs) {
		var stuck []string
		for _, j := range jobs {
			if waiting[j.ID] > 0 {
				stuck = append(stuck, j.ID)
			}
		}
		sort.Strings(stuck)
		return nil, fault.Refused("jobs %s need each other in a cycle", strings.Join(stuck, ", "))
	}
	return order, nil
}

// integrate merges each part into the union in turn, from base. A node whose tip is
// already in the union counts as integrated with no new commit.
func integrate(ctx context.Context, repo *git.Repository, run string, start git.OID, parts []part, prog progress.Reporter) (string, []string, map[string][]string, error) {
	integrated, conflicted := []string{}, map[string][]string{}
	if start.IsZero() {
		return "", nil, nil, fmt.Errorf("union baseline: run %s records none", run)
	}
	ids := []git.OID{start}
	for _, p := range parts {
		tip, err := git.ParseOID(p.tip)
		if err != nil {
			return "", nil, nil, fmt.Errorf("node %s: %w", p.node, err)
		}
		ids = append(ids, tip)
	}
	dates, err := repo.CommitDates(ctx, ids)
	if err != nil {
		return "", nil, nil, err
	}
	cur, curDate := start, dates[start.String()]
	for i, p := range parts {
		progress.Add(prog, 1)
		tip := ids[i+1]
		in, err := repo.Contains(ctx, cur, tip)
		if err != nil {
			return "", nil, nil, err
		}
		if in {
			integrated = append(integrated, p.node)
			continue
		}
		tree, paths, err := repo.MergeTree(ctx, cur, tip)
		if err != nil {
			return "", nil, nil, fmt.Errorf("integrate node %s: %w", p.node, err)
		}
		if paths != nil {
			conflicted[p.node] = paths
			continue
		}
		date := max(curDate, dates[p.tip])
		msg := fmt.Sprintf("git-atlas union of run %s: integrate node %s", run, p.node)
		commit, err := commitTree(ctx, repo, tree, []git.OID{cur, tip}, date, msg)
		if err != nil {
			return "", nil, nil, fmt.Errorf("integrate node %s: %w", p.node, err)
		}
		cur, curDate = commit, date
		integrated = append(integrated, p.node)
	}
	if len(conflicted) == 0 {
		conflicted = nil
	}
	return cur.String(), integrated, conflicted, nil
}

// commitTree writes a commit with git-atlas's identity at date, unsigned whatever
// commit.gpgSign says, so that it is the same commit every time.
func commitTree(ctx context.Context, repo *git.Repository, tree git.OID, parents []git.OID, date int64, msg string) (git.OID, error) {
	return repo.CommitTreeAs(ctx, tree, parents, msg, git.Signature{Name: unionName, Email: unionEmail, When: date})
}

// placeUnion points the union branch and worktree at res.Union.Head and records the
// build. The order keeps every crash recoverable by running union again: an existing
// worktree is first moved (detached) to the new head, then the ledger and branch are
// written in one transaction, then the worktree is put back on its branch; a missing
// one is created after the transaction, as Add does.
//
// It reads what stands where the union goes (locateUnion), decides what to do to
// the branch and the worktree or refuses (checkBranch, worktreeSteps: no change
// made yet), then does it in that order (prepare, recordUnion, finish).
func placeUnion(ctx context.Context, store *gitstate.Store, r *ledger.Run, res *UnionResult, force bool, approvedBy string) error {
	repo, head := store.Repo, res.Union.Head
	p, err := locateUnion(ctx, repo, r, head)
	if err != nil {
		return err
	}
	p.again = writes(store, p.again)
	built := ""
	if r.State.Union != nil {
		built = r.State.Union.Head.String()
	}
	if err := p.checkBranch(built, force); err != nil {
		return err
	}
	info, err := inspect(ctx, repo, p.rec, p.list)
	if err != nil {
		return err
	}
	steps, err := p.worktreeSteps(info)
	if err != nil {
		return err
	}
	if info.Exists {
		// The recorded union worktree is moved, locked, put on its branch or handed
		// out as the union: only one git-atlas manages.
		if p.m, err = Own(ctx, repo, p.run, p.rec); err != nil {
			return err
		}
	}
	if err := p.prepare(ctx, repo, steps); err != nil {
		return err
	}
	// The union worktree gets a block of ports of its own, as a node does, recorded
	// with the build under the repository's port lock (docs/contract.md §15).
	n := r.Header.Ports
	if len(p.rec.Ports) > 0 {
		n = 0 // it holds its block
	}
	alloc, err := AllocatePorts(ctx, store, p.run, n)
	if err != nil {
		return err
	}
	defer alloc.Release()
	if n > 0 {
		if p.rec.Ports, err = alloc.Pick(Union); err != nil {
			return err
		}
	}
	res.Rec, res.Created = p.rec, steps.create
	if p.needsRecord(r.State.Union, res.Union) {
		res.Changed = true
		if err := recordUnion(ctx, store, p, res, approvedBy); err != nil {
			return err
		}
	} else {
		res.Union.At = r.State.Union.At
	}
	alloc.Release()
	return p.finish(ctx, repo, steps)
}

// unionPlace is where a union build goes and what stands there, as read before
// anything is changed.
type unionPlace struct {
	run string
	// again is the union step that builds it again, as its writer runs it.
	again fault.Step
	// rec is the union worktree as the build records it: at the new head.
	rec ledger.WorktreeRec
	// prev is the union worktree the ledger records now (nil before the first build).
	prev *ledger.WorktreeRec
	list []git.WorktreeInfo
	// ref is the union branch's full name, oldTip its tip now ("": no branch).
	ref, oldTip string
	// keep: oldTip is a commit git-atlas did not build, moved away from with force;
	// it is kept under KeptRef before the branch moves.
	keep bool
	// taken: something is at rec.Path (a worktree or not).
	taken bool
	// m is the worktree at rec.Path, checked (Own), when it is moved, locked or
	// reattached.
	m *git.Managed
}

// locateUnion reads where run's union at head goes: the recorded union worktree's
// path, or its place under Root for a first build, and the union branch's tip.
func locateUnion(ctx context.Context, repo *git.Repository, r *ledger.Run, head git.OID) (*unionPlace, error) {
	run := r.Header.RunID
	p := &unionPlace{run: run, again: fault.Do("union", "run", run), rec: ledger.WorktreeRec{Node: Union, Branch: BranchFor(run, Union), Baseline: r.Header.Baseline, Head: head},
		prev: r.State.Worktree(Union)}
	var err error
	if p.list, err = repo.ListWorktrees(ctx); err != nil {
		return nil, err
	}
	if p.prev != nil {
		p.rec.Path, p.rec.Ports = p.prev.Path, p.prev.Ports
	} else {
		root, err := Root(ctx, repo)
		if err != nil {
			return nil, err
		}
		if err := checkRoot(root, p.list); err != nil {
			return nil, err
		}
		p.rec.Path = filepath.Join(root, run, Union)
	}
	p.ref = branchRef(p.rec.Branch)
	if p.oldTip, err = repo.ReadRef(ctx, p.ref); err != nil {
		return nil, err
	}
	p.taken = exists(p.rec.Path)
	return p, nil
}

// checkBranch refuses to move a union branch someone committed on (its tip is
// neither the new head nor built, the union last recorded) unless force, and one
// checked out in another worktree.
func (p *unionPlace) checkBranch(built string, force bool) error {
	head := p.rec.Head.String()
	if p.oldTip != "" && p.oldTip != head && p.oldTip != built {
		if !force {
			return fault.Named(fault.ErrRefused, "union branch %s is at %s, which is not a union git-atlas built: someone committed on it", p.rec.Branch, p.oldTip).
				WithHint("keep that work on another branch (`git branch <name> %s`), or run again with {force}: the commit is then kept under %s", p.oldTip, KeptRef(p.run, p.oldTip))
		}
		p.keep = true
	}
	if p.oldTip != head {
		if other := checkedOutElsewhere(p.list, p.ref, p.rec.Path); other != "" {
			return fault.Conflict("union branch %s is checked out in %s", p.rec.Branch, other).WithHint("switch that worktree to another branch first")
		}
	}
	return nil
}

// unionSteps is what placing the union does to its worktree.
type unionSteps struct {
	// move: the worktree is at another commit and is moved, detached, to the new
	// head before the record.
	move bool
	// lock: the worktree lost its lock and is locked again before the record.
	lock bool
	// reattach: the worktree is put back on the union branch after the record.
	reattach bool
	// create: there is no worktree; it is made after the record.
	create bool
}

// worktreeSteps decides, from info (the worktree at p.rec.Path as it is), what the
// union worktree needs to end at the new head on its branch, or refuses: a
// worktree git-atlas did not record, local changes a move would lose, a path taken
// by something else. It changes nothing.
func (p *unionPlace) worktreeSteps(info Info) (unionSteps, error) {
	var s unionSteps
	rec, run := p.rec, p.run
	switch {
	case info.Exists:
		if w := findWorktree(p.list, rec.Path); p.prev == nil && (!w.Locked || w.LockReason != lockReason(run, Union)) {
			return s, fault.Conflict("path %s is taken by a worktree git-atlas did not record", rec.Path).WithHint("move it away and run again")
		}
		if info.Head != rec.Head.String() || !info.OnBranch(rec) {
			if info.Dirty {
				return s, fault.Refused("the union worktree %s has local changes: they would be lost", rec.Path).
					WithHint("commit them on another branch or discard them there, then run `%s` again", p.again)
			}
			s.move = info.Head != rec.Head.String()
			s.reattach = true
		}
		s.lock = !info.Locked
	case p.taken:
		return s, fault.Conflict("path %s of the union worktree is taken by something that is not its worktree", rec.Path).WithHint("move it away and run again")
	default:
		s.create = true
	}
	return s, nil
}

// prepare does the steps that come before the record: the move, then the lock.
func (p *unionPlace) prepare(ctx context.Context, repo *git.Repository, s unionSteps) error {
	if s.move {
		if err := moveDetached(ctx, p.m, p.rec.Head); err != nil {
			return err
		}
	}
	if s.lock {
		return lock(ctx, p.m, p.run, Union)
	}
	return nil
}

// needsRecord reports whether the build differs from what the ledger has (recorded,
// the run's last union): another worktree record, a branch to move, another union.
func (p *unionPlace) needsRecord(recorded *ledger.UnionRec, u ledger.UnionRec) bool {
	return p.prev == nil || !sameRec(*p.prev, p.rec) || p.oldTip != p.rec.Head.String() || recorded == nil || !sameUnion(*recorded, u)
}

// recordUnion records the build (`union_built`) and moves the union branch in the
// same transaction, as long as the branch is still where p read it.
func recordUnion(ctx context.Context, store *gitstate.Store, p *unionPlace, res *UnionResult, approvedBy string) error {
	repo, rec, head := store.Repo, p.rec, p.rec.Head.String()
	_, err := store.Update(ctx, p.run, func(r *ledger.Run) (*gitstate.Change, error) {
		if err := open(r); err != nil {
			return nil, err
		}
		now, err := repo.ReadRef(ctx, p.ref)
		if err != nil {
			return nil, err
		}
		if now != p.oldTip {
			return nil, fault.Conflict("union branch %s moved while the union was built", rec.Branch).WithHint("run the command again")
		}
		res.Union.At = ledger.Stamp(store.Now())
		u := res.Union
		r.State.Union = &u
		if w := r.State.Worktree(Union); w != nil {
			*w = rec
		} else {
			r.State.Worktrees = append(r.State.Worktrees, rec)
		}
		var refs []git.RefUpdate
		var kept *ledger.KeptTip
		if p.keep {
			// The commit someone made on the union branch is kept before the branch
			// leaves it, in the same transaction: nothing is lost, not even to gc.
			k := KeptRef(p.run, p.oldTip)
			cur, err := repo.ReadRef(ctx, k)
			if err != nil {
				return nil, err
			}
			switch cur {
			case p.oldTip: // kept by an earlier run of this command
			case "":
				refs = append(refs, git.RefUpdate{Name: k, New: p.oldTip, Old: git.ZeroID})
			default:
				return nil, fault.Conflict("%s holds %s, not the union branch's tip %s", k, cur, p.oldTip).WithHint("keep %s yourself (`git branch <name> %s`)", p.oldTip, p.oldTip)
			}
			res.Kept, res.KeptCommit = k, p.oldTip
			oldTip, err := git.ParseOID(p.oldTip)
			if err != nil {
				return nil, err
			}
			kept = &ledger.KeptTip{Ref: k, Commit: oldTip}
		}
		if p.oldTip != head {
			old := p.oldTip
			if old == "" {
				old = git.ZeroID
			}
			refs = append(refs, git.RefUpdate{Name: p.ref, New: head, Old: old})
		}
		conflicted := u.Conflicted
		if conflicted == nil {
			conflicted = map[string][]string{}
		}
		d := ledger.UnionBuiltData{Head: p.rec.Head, Integrated: u.Integrated, Conflicted: conflicted, Missing: res.Missing, Path: rec.Path,
			Kept: kept, OutsideScope: u.OutsideScope, Ports: rec.Ports}
		if len(u.AllowedOutsideScope) > 0 {
			d.AllowedOutsideScope, d.ApprovedBy = u.AllowedOutsideScope, approvedBy
		}
		return &gitstate.Change{Event: ledger.UnionBuiltEvent(ledger.About{}, d), Refs: refs}, nil
	})
	return err
}

// KeptRef is the recovery ref that keeps commit, a tip of run's union branch that
// git-atlas did not build, when `union --force` moves the branch away from it.
func KeptRef(run, commit string) string {
	return ledger.RecoveryPrefix + run + "/union-kept-" + commit[:min(12, len(commit))]
}

// finish does the steps that come after the record: a missing worktree is made
// (git's registration of a deleted one dropped first), a moved one put back on its
// branch.
func (p *unionPlace) finish(ctx context.Context, repo *git.Repository, s unionSteps) error {
	switch {
	case s.create:
		if err := forgetMissing(ctx, repo, p.run, p.rec, p.list); err != nil {
			return err
		}
		return materialize(ctx, repo, p.run, p.rec, p.rec.Head)
	case s.reattach:
		return attach(ctx, p.m, p.rec)
	}
	return nil
}

// moveDetached moves a clean managed worktree to commit: a two-way read-tree (which
// refuses to overwrite local changes), then HEAD detached at commit.
func moveDetached(ctx context.Context, m *git.Managed, id git.OID) error {
	if err := m.MoveDetached(ctx, id, "git-atlas: union"); err != nil {
		return fmt.Errorf("update the union worktree %s: %w", m.Path, err)
	}
	return nil
}

func sameUnion(a, b ledger.UnionRec) bool {
	if len(a.Conflicted) == 0 && len(b.Conflicted) == 0 {
		a.Conflicted, b.Conflicted = nil, nil
	}
	if len(a.OutsideScope) == 0 && len(b.OutsideScope) == 0 {
		a.OutsideScope, b.OutsideScope = nil, nil
	}
	if len(a.AllowedOutsideScope) == 0 && len(b.AllowedOutsideScope) == 0 {
		a.AllowedOutsideScope, b.AllowedOutsideScope = nil, nil
	}
	return a.Head == b.Head && slices.Equal(a.Integrated, b.Integrated) && reflect.DeepEqual(a.Conflicted, b.Conflicted) && slices.Equal(a.Missing, b.Missing) &&
		reflect.DeepEqual(a.OutsideScope, b.OutsideScope) && reflect.DeepEqual(a.AllowedOutsideScope, b.AllowedOutsideScope)
}

// sameRec compares the fields of two worktree records that git-atlas itself writes.
func sameRec(a, b ledger.WorktreeRec) bool {
	return a.Node == b.Node && a.Stage == b.Stage && a.Path == b.Path && a.Branch == b.Branch &&
		a.Baseline == b.Baseline && a.Head == b.Head && a.Untrusted == b.Untrusted && slices.Equal(a.Ports, b.Ports)
}

// RecordUnionVerify records the result of the run's verify run in the union worktree
// at head (`union --verify`), in a `union_verified` event. A union rebuilt at another
// head since is a conflict: the result belongs to the union it judged.
func RecordUnionVerify(ctx context.Context, store *gitstate.Store, run, head string, vr *ledger.VerifyResult) error {
	_, err := store.Update(ctx, run, func(r *ledger.Run) (*gitstate.Change, error) {
		if r.State.Union == nil || r.State.Union.Head.String() != head {
			return nil, fault.Conflict("the union of run %s moved while its verify ran; nothing recorded", run).WithHint("run `%s` again", writes(store, fault.Do("union", "run", run, "verify", true)))
		}
		u := *r.State.Union
		u.Verify = vr
		r.State.Union = &u
		data := ledger.UnionVerifiedData{Head: r.State.Union.Head, Passed: vr.Passed, ExitCode: vr.ExitCode, TimedOut: vr.TimedOut, Tail: vr.Tail}
		return &gitstate.Change{Event: ledger.UnionVerifiedEvent(ledger.About{}, data)}, nil
	})
	return err
}
