package worktrees

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/git-atlas/git-atlas/baseline"
	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/gitid"
	"github.com/git-atlas/git-atlas/ledger"
)

// AddOptions are the choices of Add.
type AddOptions struct {
	// Baseline is the revision the node starts from. "" means the recorded one for a
	// worktree the ledger already has, else the run's baseline.
	Baseline string
	// Preserve snapshots (when anything could be lost) and removes the worktree of a
	// recorded node, keeping its record: Add calls it for a checkout a killed process
	// left half-made, which an agent may have worked in. recovery provides it (wired
	// by the command line: worktrees cannot import recovery); nil refuses such a
	// worktree instead.
	Preserve func(ctx context.Context, run, node, reason string) error
	// Lease is the caller's lease token on the node's job (graph runs). A job that is
	// RUNNING gives its worktree only to the holder of its current lease, so a zombie
	// worker whose lease was ended (by a resume, a reap or a receipt) never shares a
	// worktree with its replacement: a stale or missing token is a conflict.
	Lease string
	// Unfenced skips the lease check: resume recreating a worktree it reset.
	Unfenced bool
}

// Added is what Add did.
type Added struct {
	Rec ledger.WorktreeRec
	// Created: the worktree was made for the first time.
	Created bool
	// Recreated: the ledger had it, its directory was gone, and it was made again
	// on its branch as the branch stands (no commit is dropped).
	Recreated bool
	// Reattached: the node's worktree had been removed and its branch kept; the new
	// worktree is on that branch at its tip (its commits are the node's work).
	Reattached bool
}

// Add gives run's node its managed worktree: a linked worktree under Root, locked,
// on branch atlas/<run>/node/<node> at the node's baseline, pinned at
// refs/atlas/pins/<run>/node/<node>, recorded in the ledger (`worktree_added`).
//
// The ledger write (record, branch and pin in one transaction) comes before the
// directory, so a crash in between leaves a recorded worktree that is missing, and
// running Add again finishes it. Add is idempotent for a worktree that exists as
// recorded; a path or branch held by anything else is a conflict.
func Add(ctx context.Context, store *gitstate.Store, run, node string, opts AddOptions) (*Added, error) {
	if err := ledger.ValidName("node", node); err != nil {
		return nil, err
	}
	if node == Union {
		return nil, fault.Usage("%q is the reserved node name of the union worktree", Union).WithHint("build it with `%s`", writes(store, fault.Do("union", "run", run)))
	}
	repo := store.Repo
	r, err := store.Load(ctx, run)
	if err != nil {
		return nil, err
	}
	if err := open(r); err != nil {
		return nil, err
	}
	if err := fence(r, node, opts); err != nil {
		return nil, err
	}
	var base git.OID
	if opts.Baseline != "" {
		if base, err = baseline.Resolve(ctx, repo, opts.Baseline); err != nil {
			return nil, err
		}
	}
	if rec := r.State.Worktree(node); rec != nil {
		if !base.IsZero() && base != rec.Baseline {
			return nil, fault.Named(fault.ErrConflict, "node %s of run %s already has a worktree at baseline %s, not %s", node, run, rec.Baseline, base).
				WithHint("leave out {baseline} to keep it")
		}
		return ensure(ctx, store, run, *rec, r.Header.Ports, opts)
	}
	if base.IsZero() {
		// A node whose worktree was removed keeps its pin: it starts from the same
		// baseline again.
		pin, err := repo.ReadRef(ctx, gitstate.PinRef(run, pinName(node)))
		if err != nil {
			return nil, err
		}
		if base, err = gitid.ParseOptional(pin); err != nil {
			return nil, err
		}
	}
	// A new node may not take a name the layout reserves: replay-<stage>-<n> is a
	// replay worktree's, <name>.atlas-materializing the marker of node <name>.
	if err := ledger.CheckNodeName("node", node); err != nil {
		return nil, err
	}
	if base.IsZero() {
		base = r.Header.Baseline
	}
	return create(ctx, store, r, node, base, opts)
}

// fence checks the caller's lease (AddOptions.Lease) against the node's job.
func fence(r *ledger.Run, node string, opts AddOptions) error {
	if opts.Unfenced {
		return nil
	}
	j := r.State.Job(node)
	if j == nil {
		if opts.Lease != "" {
			return fault.Named(fault.ErrUsage, "node %s of run %s is not a job of a graph run: {lease} applies to jobs", node, r.Header.RunID)
		}
		return nil
	}
	if opts.Lease != "" {
		return ledger.CheckLease(&r.State, node, opts.Lease)
	}
	if j.State == ledger.JobRunning {
		return fault.Conflict("job %s of run %s is RUNNING under a lease: its worktree goes only to the lease's holder", node, r.Header.RunID).
			WithHint("pass the token `%s` printed: `%s`", fault.Do("job claim"), fault.Do("worktree add", "run", r.Header.RunID, "node", node, "lease", fault.Placeholder("TOKEN")))
	}
	return nil
}

// open refuses a finished run: its worktrees are orphans for audit and gc.
func open(r *ledger.Run) error {
	if ledger.RunTerminal(r.State.Status) {
		return fault.Refused("run %s is %s: it gets no more worktrees", r.Header.RunID, r.State.Status)
	}
	return nil
}

// create makes a node's first worktree.
func create(ctx context.Context, store *gitstate.Store, r *ledger.Run, node string, base git.OID, opts AddOptions) (*Added, error) {
	repo, run := store.Repo, r.Header.RunID
	root, err := Root(ctx, repo)
	if err != nil {
		return nil, err
	}
	list, err := repo.ListWorktrees(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkRoot(root, list); err != nil {
		return nil, err
	}
	rec := ledger.WorktreeRec{Node: node, Path: filepath.Join(root, run, node), Branch: BranchFor(run, node), Baseline: base, Head: base}
	if _, _, ok := r.Stage(node); ok {
		rec.Stage = node
	}
	if w := findWorktree(list, rec.Path); w != nil || exists(rec.Path) {
		return nil, fault.Conflict("path %s is taken by something git-atlas did not record for node %s of run %s", rec.Path, node, run).
			WithHint("move it away, or set %s to another directory", RootConfig)
	}
	// A block of ports for the node, unique among the repository's live nodes: under
	// the repository's lock from the look at the others to the record (docs/contract.md §15).
	ports, err := AllocatePorts(ctx, store, run, r.Header.Ports)
	if err != nil {
		return nil, err
	}
	release := ports.Release
	if rec.Ports, err = ports.Pick(node); err != nil {
		release()
		return nil, err
	}
	reattached := false
	_, err = store.Update(ctx, run, func(r *ledger.Run) (*gitstate.Change, error) {
		if err := open(r); err != nil {
			return nil, err
		}
		if r.State.Worktree(node) != nil {
			return nil, fault.Conflict("node %s of run %s got a worktree concurrently", node, run).WithHint("run the command again")
		}
		if err := fence(r, node, opts); err != nil { // the lease may have ended meanwhile
			return nil, err
		}
		// Checked on every try: a ref conflict inside the transaction would only be
		// retried by the store.
		refs, err := pinRefs(ctx, repo, run, rec)
		if err != nil {
			return nil, err
		}
		tip, err := repo.ReadRef(ctx, branchRef(rec.Branch))
		if err != nil {
			return nil, err
		}
		branch := git.RefUpdate{Name: branchRef(rec.Branch), New: base.String(), Old: git.ZeroID}
		rec.Head, reattached = base, false
		if tip != "" {
			// The branch of a node whose worktree was removed: its commits are the
			// node's work, so the new worktree continues on it (docs/contract.md §4.3).
			own, err := ownBranch(ctx, repo, run, rec, tip)
			if err != nil {
				return nil, err
			}
			if !own {
				return nil, foreignBranch(rec)
			}
			branch = git.RefUpdate{Name: branchRef(rec.Branch), New: tip, Old: tip} // verify: still there
			if rec.Head, err = git.ParseOID(tip); err != nil {
				return nil, err
			}
			reattached = true
		}
		refs = append(refs, branch)
		r.State.Worktrees = append(r.State.Worktrees, rec)
		return &gitstate.Change{Event: addedEvent(rec, false, git.OID{}), Refs: refs}, nil
	})
	release()
	if err != nil {
		return nil, err
	}
	if err := materialize(ctx, repo, run, rec, rec.Head); err != nil {
		return nil, err
	}
	return &Added{Rec: rec, Created: !reattached, Reattached: reattached}, nil
}

// ownBranch reports whether an existing branch is provably the node's own: this run
// pinned the node's baseline (the pin and the branch are made in one transaction, and
// removing a worktree keeps both) and the branch's tip descends from that pin.
func ownBranch(ctx context.Context, repo *git.Repository, run string, rec ledger.WorktreeRec, tip string) (bool, error) {
	pin, err := repo.ReadRef(ctx, gitstate.PinRef(run, pinName(rec.Node)))
	if err != nil || pin == "" || pin != rec.Baseline.String() {
		return false, err
	}
	from, err := git.ParseOID(pin)
	if err != nil {
		return false, err
	}
	to, err := git.ParseOID(tip)
	if err != nil {
		return false, err
	}
	return repo.IsAncestor(ctx, from, to)
}

// foreignBranch is the conflict of a branch with the node's name that git-atlas did
// not make for it. Its commits may be someone's only copy: the advice keeps them.
func foreignBranch(rec ledger.WorktreeRec) error {
	return fault.Conflict("branch %s exists, but the ledger does not account for it", rec.Branch).
		WithHint("if it is not this node's, rename it to keep its commits (`git branch -m %s <new name>`), then run the command again", rec.Branch)
}

// pinRefs pins rec's baseline at refs/atlas/pins/<run>/node/<node>, create-only; a pin
// already there at the same commit needs nothing, at another one is a conflict.
func pinRefs(ctx context.Context, repo *git.Repository, run string, rec ledger.WorktreeRec) ([]git.RefUpdate, error) {
	if rec.Node == Union {
		return nil, nil // the union starts at the run's baseline, pinned by the run
	}
	pin, err := repo.ReadRef(ctx, gitstate.PinRef(run, pinName(rec.Node)))
	if err != nil {
		return nil, err
	}
	switch pin {
	case "":
		return []git.RefUpdate{baseline.Pin(run, pinName(rec.Node), rec.Baseline.String())}, nil
	case rec.Baseline.String():
		return nil, nil
	default:
		return nil, fault.Conflict("node %s of run %s was pinned at %s, not %s", rec.Node, run, pin, rec.Baseline)
	}
}

// branchMoved is the conflict of a branch that is not where the caller saw it.
func branchMoved(rec ledger.WorktreeRec, now, seen string) error {
	if seen == "" {
		return foreignBranch(rec)
	}
	return fault.Conflict("branch %s moved (now %s, expected %s): its new commits are not preserved", rec.Branch, dashed(now), seen).
		WithHint("preserve them first, then run the command again")
}

func addedEvent(rec ledger.WorktreeRec, recreated bool, resetFrom git.OID) ledger.Event {
	d := ledger.WorktreeAddedData{Node: rec.Node, Path: rec.Path, Branch: rec.Branch, Baseline: rec.Baseline, Head: rec.Head, Recreated: recreated,
		Ports: rec.Ports, ResetFrom: resetFrom}
	return ledger.WorktreeAddedEvent(ledger.About{Stage: rec.Stage, Job: jobOf(rec)}, d)
}

func jobOf(rec ledger.WorktreeRec) string {
	if rec.Stage != "" || rec.Node == Union {
		return ""
	}
	return rec.Node
}

// ensure makes a recorded worktree exist as recorded: nothing to do when it does;
// recreated on its branch (as the branch stands) when its directory is gone.
//
// A worktree handed out again without ports when its run has them (its job's lease
// was fenced, which freed its block) gets a block again first (docs/contract.md §15).
func ensure(ctx context.Context, store *gitstate.Store, run string, rec ledger.WorktreeRec, ports int, opts AddOptions) (*Added, error) {
	added, err := ensureOnce(ctx, store, run, rec, ports, opts)
	if _, ok := errors.AsType[madeConcurrently](err); ok {
		// Another process made it first: it now exists as recorded, which is all we
		// were asked for.
		return ensureOnce(ctx, store, run, rec, ports, opts)
	}
	return added, err
}

func ensureOnce(ctx context.Context, store *gitstate.Store, run string, rec ledger.WorktreeRec, ports int, opts AddOptions) (*Added, error) {
	if len(rec.Ports) > 0 {
		ports = 0 // it holds its block
	}
	repo := store.Repo
	if err := preserveHalfMade(ctx, store, run, rec, opts); err != nil {
		return nil, err
	}
	list, err := repo.ListWorktrees(ctx)
	if err != nil {
		return nil, err
	}
	info, err := inspect(ctx, repo, rec, list)
	if err != nil {
		return nil, err
	}
	if info.Exists {
		// Handed to a worker as the node's worktree: only one git-atlas manages.
		m, err := Own(ctx, repo, run, rec)
		if err != nil {
			return nil, err
		}
		if !info.OnBranch(rec) {
			return nil, fault.Conflict("worktree %s of node %s is not on its branch %s (HEAD %s)", rec.Path, rec.Node, rec.Branch, headDesc(info)).
				WithHint("`%s` preserves its work and recreates it", writes(store, fault.Do("resume", "run", run)))
		}
		if !info.Locked {
			if err := lock(ctx, m, run, rec.Node); err != nil {
				return nil, err
			}
		}
		if ports > 0 {
			if rec.Ports, err = recordPorts(ctx, store, run, rec, ports, opts); err != nil {
				return nil, err
			}
		}
		if rec.Head, err = git.ParseOID(info.Head); err != nil {
			return nil, err
		}
		return &Added{Rec: rec}, nil
	}
	// Made again where the ledger says, on the branch it names: only under the
	// managed root, on a branch of the run's.
	if _, err := Placed(ctx, repo, run, rec); err != nil {
		return nil, err
	}
	tip, err := checkFree(ctx, repo, list, rec)
	if err != nil {
		return nil, err
	}
	if rec.Head, err = gitid.ParseOptional(tip); err != nil {
		return nil, err
	}
	if tip == "" {
		rec.Head = rec.Baseline // the branch was deleted: start it again at the baseline
	}
	alloc, err := AllocatePorts(ctx, store, run, ports)
	if err != nil {
		return nil, err
	}
	if ports > 0 {
		if rec.Ports, err = alloc.Pick(rec.Node); err != nil {
			alloc.Release()
			return nil, err
		}
	}
	err = record(ctx, store, run, rec, tip, false)
	alloc.Release()
	if err != nil {
		return nil, err
	}
	if err := forgetMissing(ctx, repo, run, rec, list); err != nil {
		return nil, err
	}
	if err := materialize(ctx, repo, run, rec, rec.Head); err != nil {
		return nil, err
	}
	return &Added{Rec: rec, Recreated: true}, nil
}

// recordPorts gives the existing worktree rec, recorded without ports, a block of n
// again, recorded (`worktree_ports`) under the port lock; the caller's lease is
// checked again in that write. A block recorded meanwhile by another process is
// the one returned.
func recordPorts(ctx context.Context, store *gitstate.Store, run string, rec ledger.WorktreeRec, n int, opts AddOptions) ([]int, error) {
	alloc, err := AllocatePorts(ctx, store, run, n)
	if err != nil {
		return nil, err
	}
	defer alloc.Release()
	ports, err := alloc.Pick(rec.Node)
	if err != nil {
		return nil, err
	}
	_, err = store.Update(ctx, run, func(r *ledger.Run) (*gitstate.Change, error) {
		cur := r.State.Worktree(rec.Node)
		if cur == nil || cur.Path != rec.Path {
			return nil, fault.Conflict("the worktree record of node %s of run %s changed concurrently", rec.Node, run).WithHint("run the command again")
		}
		if err := fence(r, rec.Node, opts); err != nil {
			return nil, err
		}
		if len(cur.Ports) > 0 {
			ports = cur.Ports
			return nil, nil
		}
		cur.Ports = ports
		about := ledger.About{Stage: rec.Stage, Job: jobOf(rec)}
		return &gitstate.Change{Event: ledger.WorktreePortsEvent(about, ledger.WorktreePortsData{Node: rec.Node, Ports: ports})}, nil
	})
	if err != nil {
		return nil, err
	}
	return ports, nil
}

// preserveHalfMade deals with a checkout a killed process began and never finished:
// it is claimed (a live maker is a conflict), preserved (snapshot when anything could
// be lost, then removed), and its marker cleared, so that it is made again clean.
func preserveHalfMade(ctx context.Context, store *gitstate.Store, run string, rec ledger.WorktreeRec, opts AddOptions) error {
	inProgress, halfMade, owner := Making(rec.Path)
	if inProgress {
		return fault.Conflict("worktree %s of node %s is being made by another git-atlas process (%s)", rec.Path, rec.Node, owner).
			WithHint("wait for it to finish, then run the command again")
	}
	if !halfMade {
		return nil
	}
	m, tookOver, err := ClaimMaking(run, rec)
	if err != nil {
		return err
	}
	if !tookOver { // its maker finished meanwhile
		return m.Done()
	}
	if opts.Preserve == nil {
		m.Drop()
		return fault.Refused("worktree %s of node %s was left half-made by a process that died", rec.Path, rec.Node).
			WithHint("`%s` preserves it and makes it again", writes(store, fault.Do("resume", "run", run)))
	}
	if err := opts.Preserve(ctx, run, rec.Node, "checkout never finished"); err != nil {
		m.Drop()
		return fmt.Errorf("preserve half-made worktree %s: %w", rec.Path, err)
	}
	return m.Done()
}

// checkFree checks that a missing worktree can be made again: nothing else at its
// path, its branch not checked out anywhere. It returns the branch's tip.
func checkFree(ctx context.Context, repo *git.Repository, list []git.WorktreeInfo, rec ledger.WorktreeRec) (string, error) {
	if exists(rec.Path) {
		return "", fault.Conflict("path %s of node %s is taken by something that is not its worktree", rec.Path, rec.Node).
			WithHint("move it away and run the command again")
	}
	if other := checkedOutElsewhere(list, branchRef(rec.Branch), rec.Path); other != "" {
		return "", fault.Conflict("branch %s of node %s is checked out in %s", rec.Branch, rec.Node, other).
			WithHint("switch that worktree to another branch first")
	}
	return repo.ReadRef(ctx, branchRef(rec.Branch))
}

// record writes rec back to the ledger with a worktree_added event (recreated). The
// branch must still be at tip ("" = gone). A gone branch is created at rec.Head;
// with reset, an existing one is moved from tip to rec.Head in the same transaction
// (compare-and-swap). A deleted pin is made again.
func record(ctx context.Context, store *gitstate.Store, run string, rec ledger.WorktreeRec, tip string, reset bool) error {
	repo := store.Repo
	_, err := store.Update(ctx, run, func(r *ledger.Run) (*gitstate.Change, error) {
		cur := r.State.Worktree(rec.Node)
		if cur == nil || cur.Path != rec.Path || cur.Branch != rec.Branch || cur.Baseline != rec.Baseline {
			return nil, fault.Conflict("the worktree record of node %s of run %s changed concurrently", rec.Node, run).WithHint("run the command again")
		}
		now, err := repo.ReadRef(ctx, branchRef(rec.Branch))
		if err != nil {
			return nil, err
		}
		if now != tip {
			return nil, branchMoved(rec, now, tip)
		}
		var refs []git.RefUpdate
		var resetFrom git.OID
		switch {
		case tip == "":
			refs = append(refs, git.RefUpdate{Name: branchRef(rec.Branch), New: rec.Head.String(), Old: git.ZeroID})
		case reset && tip != rec.Head.String():
			refs = append(refs, git.RefUpdate{Name: branchRef(rec.Branch), New: rec.Head.String(), Old: tip})
			if resetFrom, err = git.ParseOID(tip); err != nil {
				return nil, err
			}
		}
		pins, err := pinRefs(ctx, repo, run, rec)
		if err != nil {
			return nil, err
		}
		*cur = rec
		return &gitstate.Change{Event: addedEvent(rec, true, resetFrom), Refs: append(refs, pins...)}, nil
	})
	return err
}

func headDesc(i Info) string {
	if i.Branch != "" {
		return i.Branch
	}
	return "detached at " + dashed(i.Head)
}

func dashed(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Recreate makes the worktree of run's node again, clean at its recorded baseline,
// after it was removed (resume does this once it has snapshotted the old one). The
// node's branch is reset to the baseline with a compare-and-swap from seen, the tip
// the caller preserved; a branch that moved since is a conflict, so commits made
// after the snapshot are never dropped ("" means the branch must not exist). The
// union worktree is derived data: it is recreated at its branch's tip, which is not
// moved.
func Recreate(ctx context.Context, store *gitstate.Store, run, node, seen string) (ledger.WorktreeRec, error) {
	repo := store.Repo
	r, err := store.Load(ctx, run)
	if err != nil {
		return ledger.WorktreeRec{}, err
	}
	p := r.State.Worktree(node)
	if p == nil {
		return ledger.WorktreeRec{}, fault.NotFound("run %s has no worktree for node %s", run, node)
	}
	rec := *p
	list, err := repo.ListWorktrees(ctx)
	if err != nil {
		return rec, err
	}
	info, err := inspect(ctx, repo, rec, list)
	if err != nil {
		return rec, err
	}
	if info.Exists {
		// Removed by our caller a moment ago: another process (a worker's
		// `worktree add`) made it again meanwhile.
		return rec, errMadeConcurrently(rec)
	}
	if _, err := Placed(ctx, repo, run, rec); err != nil {
		return rec, err // nothing is made, and no branch moved, for a record that is not ours
	}
	tip, err := checkFree(ctx, repo, list, rec)
	if err != nil {
		return rec, err
	}
	if node == Union {
		if tip == "" {
			return rec, fault.NotFound("run %s has no union branch %s", run, rec.Branch).WithHint("rebuild it with `%s`", writes(store, fault.Do("union", "run", run)))
		}
		if rec.Head, err = git.ParseOID(tip); err != nil {
			return rec, err
		}
		err = record(ctx, store, run, rec, tip, false)
	} else {
		if tip != seen {
			return rec, branchMoved(rec, tip, seen)
		}
		rec.Head = rec.Baseline
		err = record(ctx, store, run, rec, tip, true)
	}
	if err != nil {
		return rec, err
	}
	if err := forgetMissing(ctx, repo, run, rec, list); err != nil {
		return rec, err
	}
	return rec, materialize(ctx, repo, run, rec, rec.Head)
}

// ResetInPlace makes the existing worktree of run's node clean again where it is, once
// the caller has snapshotted every byte of it: what Recreate does after a removal
// (the branch back to the recorded baseline with a compare-and-swap from seen, HEAD on
// the branch, index and files exactly its tree, nothing untracked or ignored), without
// checking out every file again — in a big repository that is most of a resume's
// time. keep leaves the branch at seen (a tip nothing else keeps). The caller holds the
// node's marker (ClaimMaking) from before its snapshot until this returns, so that no
// `worktree add` hands the directory out meanwhile, and a process killed half-way
// leaves a half-made checkout, which is snapshotted again before anything else.
// started says that the ledger and the branch were changed (an error after that
// leaves the directory part-reset; one before it changed nothing).
func ResetInPlace(ctx context.Context, store *gitstate.Store, run, node, seen string, keep bool) (rec ledger.WorktreeRec, started bool, err error) {
	repo := store.Repo
	r, err := store.Load(ctx, run)
	if err != nil {
		return rec, false, err
	}
	p := r.State.Worktree(node)
	if p == nil {
		return rec, false, fault.NotFound("run %s has no worktree for node %s", run, node)
	}
	rec = *p
	// Nothing is reset, and no branch moved, but a worktree git-atlas manages.
	wt, err := Own(ctx, repo, run, rec)
	if err != nil {
		return rec, false, err
	}
	if wt.Missing() {
		return rec, false, fault.NotFound("worktree %s of node %s is gone: nothing to reset in place", rec.Path, node)
	}
	reset := node != Union && !keep
	if rec.Head, err = gitid.ParseOptional(seen); err != nil {
		return rec, false, err
	}
	if reset {
		rec.Head = rec.Baseline
	}
	if err := record(ctx, store, run, rec, seen, reset); err != nil {
		return rec, false, err
	}
	if err := attach(ctx, wt, rec); err != nil {
		return rec, true, err
	}
	if err := wt.ResetClean(ctx); err != nil {
		return rec, true, fmt.Errorf("reset worktree %s: %w", rec.Path, err)
	}
	if clean, err := wt.Clean(ctx); err != nil || !clean {
		return rec, true, fmt.Errorf("reset worktree %s: it is not clean afterwards (%w)", rec.Path, err)
	}
	if err := bootstrap(ctx, repo, run, rec); err != nil { // as new: its copies again
		return rec, true, err
	}
	list, err := repo.ListWorktrees(ctx)
	if err != nil {
		return rec, true, err
	}
	if w := findWorktree(list, rec.Path); w != nil && !w.Locked {
		if err := lock(ctx, wt, run, rec.Node); err != nil {
			return rec, true, err
		}
	}
	return rec, true, nil
}

// writes is s as the writer of store runs it: with its holder, when it has one (a
// run write carries the asker's holder, docs/contract.md §11.13).
func writes(store *gitstate.Store, s fault.Step) fault.Step {
	if store == nil || store.Writer.Holder == "" {
		return s
	}
	return s.With("holder", store.Writer.Holder)
}
