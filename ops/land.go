package ops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/text"
	"github.com/git-atlas/git-atlas/ledger"
)

// LandRequest is `land RUN --onto BRANCH [--merge] [--accept-unresolved]`.
type LandRequest struct {
	Run  string
	Onto string
	// Merge lands a union that is not a fast-forward of BRANCH as a merge commit
	// (made without any checkout).
	Merge bool
	// AcceptUnresolved lands although the run's verdict is not resolved: a person's
	// step (StepLandUnresolved), recorded.
	AcceptUnresolved bool
	Person           Person
}

// LandResult is `land --json`.
type LandResult struct {
	RunID  string `json:"run_id"`
	Branch string `json:"branch"`
	// Old and New are the branch's tips before and after; equal when the branch
	// already held the union (nothing written).
	Old   string `json:"old"`
	New   string `json:"new"`
	Union string `json:"union"`
	// How: fast-forward, merge, or up-to-date (nothing written).
	How                string   `json:"how"`
	ApprovedBy         string   `json:"approved_by,omitempty"`
	AcceptedUnresolved []string `json:"accepted_unresolved,omitempty"`
}

// Ways a landing moves its branch (LandResult.How).
const (
	LandFastForward = "fast-forward"
	LandMerge       = "merge"
	LandUpToDate    = "up-to-date"
)

// AgentsMayLandKey is the config key that lets agents land without a person.
const AgentsMayLandKey = "atlas.agentsMayLand"

// Land moves BRANCH to a graph run's union (docs/contract.md §15): by compare-and-swap when
// that is a fast-forward, or with Merge to a merge commit made by merge-tree, only
// when the union holds every DONE job, its verify passed and the verdict is resolved
// (or a person accepts it). The branch's move and the landed event are one ref
// transaction; no checkout is touched, and a branch checked out anywhere is refused
// with the command to run there.
//
// In steps: check the branch and the run, check the branch is not checked out, have
// it approved, make the new tip, write.
func (o *Ops) Land(ctx context.Context, req LandRequest) (*LandResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	branch := strings.TrimPrefix(req.Onto, "refs/heads/")
	ref := "refs/heads/" + branch
	oldHex, err := o.Repo.ReadRef(ctx, ref)
	if err != nil {
		return nil, err
	}
	if oldHex == "" {
		return nil, fault.NotFound("branch %s does not exist; nothing was written", branch).
			WithHint("land onto an existing branch (create it with `%s`)", text.Command("git", "branch", branch))
	}
	store := o.Reader()
	r, err := store.Load(ctx, req.Run)
	if err != nil {
		return nil, err
	}
	union, unresolved, err := landable(r)
	if err != nil {
		return nil, err
	}
	if unresolved != nil && !req.AcceptUnresolved {
		return nil, fault.Refused("run %s's verdict is %s (%s); nothing was written", req.Run, unresolved.Verdict, missingCriteria(unresolved)).
			WithHint("a person may land it anyway: `%s` on a terminal or with {approved_by} NAME", req.step().With("accept_unresolved", true))
	}
	old, err := git.ParseOID(oldHex)
	if err != nil {
		return nil, err
	}
	uid, err := git.ParseOID(union)
	if err != nil {
		return nil, err
	}
	res := &LandResult{RunID: req.Run, Branch: branch, Old: oldHex, New: oldHex, Union: union, How: LandUpToDate}
	if done, err := o.Repo.IsAncestor(ctx, uid, old); err != nil {
		return nil, err
	} else if done {
		return res, nil // the branch holds the union already: nothing to write
	}
	ff, err := o.Repo.IsAncestor(ctx, old, uid)
	if err != nil {
		return nil, err
	}
	if !ff && !req.Merge {
		return nil, fault.Refused("landing run %s on %s is not a fast-forward: %s has commits the union lacks; nothing was written", req.Run, branch, branch).
			WithHint("`%s` lands it as a merge commit", req.step().With("merge", true))
	}
	if err := notCheckedOut(ctx, o.Repo, ref, uid, ff); err != nil {
		return nil, err
	}
	ev := ledger.LandedData{Branch: branch, Old: old, Union: uid}
	if unresolved != nil {
		by, err := req.Person.approve(StepLandUnresolved)
		if err != nil {
			return nil, err
		}
		res.AcceptedUnresolved = append(append([]string{}, unresolved.Unresolved...), unresolved.Unverified...)
		res.ApprovedBy = by
		ev.AcceptedUnresolved = res.AcceptedUnresolved
	}
	if step, err := o.landStep(ctx, r, uid); err != nil {
		return nil, err
	} else if step != "" {
		by, err := req.Person.approve(step)
		if err != nil {
			return nil, err
		}
		res.ApprovedBy = by
	}
	ev.ApprovedBy = res.ApprovedBy
	tip, how := uid, LandFastForward
	var tree git.OID // the merged tree, for a merge
	if !ff {
		var conflicts []string
		tree, conflicts, err = o.Repo.MergeTree(ctx, old, uid)
		if err != nil {
			return nil, err
		}
		if conflicts != nil {
			return nil, fault.Refused("merging run %s's union into %s conflicts in %s; nothing was written", req.Run, branch, strings.Join(conflicts, ", ")).
				WithHint("rebuild the union on %s's tip, or merge it by hand", branch)
		}
		msg := fmt.Sprintf("Merge run %s's union into %s\n\nLanded by git-atlas as a merge commit.\n", req.Run, branch)
		if tip, err = o.Repo.CommitTreeAs(ctx, tree, []git.OID{old, uid}, msg, git.Signature{Name: "git-atlas", Email: "git-atlas@localhost", When: o.now().Unix()}); err != nil {
			return nil, err
		}
		how = LandMerge
	}
	res.New, res.How = tip.String(), how
	ev.New, ev.How = tip, how
	up := git.RefUpdate{Name: ref, Old: oldHex, New: res.New}
	if err := o.recordLanding(ctx, req, union, &up, ev, tree); err != nil {
		return nil, err
	}
	res.New = up.New
	return res, nil
}

// landable checks that r's union may land: a graph run whose union holds every DONE
// job and whose verify, when it has one, passed on that union. It returns the
// union's commit, and the verdict when the run has criteria and it is not resolved.
func landable(r *ledger.Run) (string, *ledger.Verdict, error) {
	id := r.Header.RunID
	if r.Header.Kind != ledger.KindGraph {
		return "", nil, fault.Usage("run %s is a single run: land takes a graph run's union", id)
	}
	u := r.State.Union
	if u == nil {
		return "", nil, fault.Refused("run %s has no union; nothing was written", id).WithHint("`%s` builds it", unionStep(r))
	}
	var missing []string
	for _, j := range r.State.Jobs {
		if j.State == ledger.JobDone && !slices.Contains(u.Integrated, j.ID) {
			missing = append(missing, j.ID)
		}
	}
	if len(missing) > 0 {
		return "", nil, fault.Refused("run %s's union lacks DONE job(s) %s; nothing was written", id, strings.Join(missing, ", ")).
			WithHint("`%s` rebuilds it", unionStep(r))
	}
	if r.Header.Verify != "" && (u.Verify == nil || !u.Verify.Passed) {
		why := "was never verified"
		if u.Verify != nil {
			why = "failed its verify"
		}
		return "", nil, fault.Refused("run %s's union %s; nothing was written", id, why).WithHint("`%s` verifies it", unionStep(r))
	}
	v := ledger.RunVerdict(&r.Header, &r.State)
	if v != nil && v.Verdict == ledger.VerdictResolved {
		v = nil
	}
	return u.Head.String(), v, nil
}

// step is the land req asks for, as the one who asked runs it again
// (docs/contract.md §11.13): its run, branch and switches, and the name of the person
// who approved it when they gave one. A hint that sets a switch req left off adds it
// (With).
func (req LandRequest) step() fault.Step {
	s := fault.Do("land", "run", req.Run, "onto", strings.TrimPrefix(req.Onto, "refs/heads/"))
	if req.Merge {
		s = s.With("merge", true)
	}
	if req.AcceptUnresolved {
		s = s.With("accept_unresolved", true)
	}
	if req.Person.ApprovedBy != "" {
		s = s.With("approved_by", req.Person.ApprovedBy)
	}
	return s
}

// unionStep is the step that builds r's union, and verifies it when the run has a
// verify (union refuses verify without one, exit 2).
func unionStep(r *ledger.Run) fault.Step {
	s := fault.Do("union", "run", r.Header.RunID)
	if r.Header.Verify != "" {
		s = s.With("verify", true)
	}
	return s
}

// missingCriteria says which criteria keep a verdict from resolved.
func missingCriteria(v *ledger.Verdict) string {
	var parts []string
	if len(v.Unresolved) > 0 {
		parts = append(parts, "no DONE job meets "+quoted(v.Unresolved))
	}
	if len(v.Unverified) > 0 {
		parts = append(parts, "only unverified jobs meet "+quoted(v.Unverified))
	}
	return strings.Join(parts, "; ")
}

// notCheckedOut refuses a branch checked out in any worktree (the user's checkout
// among them): moving it would change what that checkout's index and files are
// measured against. The refusal gives the command a person runs there.
func notCheckedOut(ctx context.Context, repo *git.Repository, ref string, union git.OID, ff bool) error {
	trees, err := repo.ListWorktrees(ctx)
	if err != nil {
		return err
	}
	for _, t := range trees {
		if t.Branch != ref {
			continue
		}
		cmd := text.Command(git.MergeCommand(t.Path, union, ff)...)
		return fault.Refused("branch %s is checked out in %s: land never touches a checkout; nothing was written", strings.TrimPrefix(ref, "refs/heads/"), t.Path).
			WithHint("a person runs there: %s", cmd)
	}
	return nil
}

// landStep is the person's step landing r's union u takes, or "" when an agent may
// land it alone: the repository's config lets agents land (agentsMayLand) and u is
// this clone's own (ownUnion).
func (o *Ops) landStep(ctx context.Context, r *ledger.Run, u git.OID) (string, error) {
	if !agentsMayLand(ctx, o.Repo) {
		return StepLand, nil
	}
	own, err := o.ownUnion(ctx, r, u)
	if err != nil || !own {
		return StepLandElsewhere, err
	}
	return "", nil
}

// ownUnion reports whether r's union u is one an agent may land without a person
// (docs/contract.md §15). What says u holds every DONE job and passed the run's verify
// is the ledger, which every clone sharing the run writes: a hostile one could name
// any commit, or add a job of its own for this clone's union to take in. So r's
// header must be as this clone wrote it or a person read it here
// (trust.Intents.HeaderProven: a verify taken away leaves nothing to pass), and
// either a person vouched for r here (`git atlas trust RUN`), or this clone built u
// and, for a run with a verify, ran it on u and saw it pass, and every job u
// integrates is one this clone added and whose receipt came through it: events and
// jobs whose MAC verifies with this clone's key (ledger/textmac.go).
func (o *Ops) ownUnion(ctx context.Context, r *ledger.Run, u git.OID) (bool, error) {
	a := o.agentText()
	if !a.intents.HeaderProven(ctx, r.Header.RunID, &r.Header) {
		return false, nil
	}
	if a.vouched(ctx, r) {
		return true, nil
	}
	events, err := o.Reader().LogOf(ctx, r)
	if err != nil {
		return false, err
	}
	built, passed := false, r.Header.Verify == ""
	received := map[string]bool{} // the jobs whose receipt this clone recorded
	for i := range events {
		e := &events[i]
		if !a.key.OwnEvent(r.Header.RunID, e) {
			continue
		}
		switch e.Type {
		case ledger.EventUnionBuilt:
			d, err := ledger.DecodeData[ledger.UnionBuiltData](e)
			built = built || (err == nil && d.Head == u)
		case ledger.EventUnionVerified:
			d, err := ledger.DecodeData[ledger.UnionVerifiedData](e)
			passed = passed || (err == nil && d.Head == u && d.Passed)
		case ledger.EventJobDone:
			received[e.Job] = true
		}
	}
	for _, id := range r.State.Union.Integrated {
		j := r.State.Job(id)
		if j == nil || !a.key.OwnJob(r.Header.RunID, j) || !received[id] {
			return false, nil
		}
	}
	return built && passed, nil
}

// agentsMayLand reports whether the repository's config lets agents land.
func agentsMayLand(ctx context.Context, repo *git.Repository) bool {
	switch strings.ToLower(repo.Config(ctx, AgentsMayLandKey)) {
	case "true", "yes", "on", "1":
		return true
	}
	return false
}

// recordLanding moves the branch and records the landed event. In a local ledger
// both are one ref transaction (the branch's old tip its compare-and-swap). Through a
// remote, where the ledger's write is a push and the branch is never pushed, the
// event comes first, naming the move (branch, old and new tip), and the branch moves
// after it: a land killed in between left that event with the branch still at its old
// tip, and the next land of the same union onto it finds the event and, when its tip
// is the one this land would make (recordedLanding), makes its move (up.New becomes
// the recorded tip) without recording it twice. A remote that refuses the event
// leaves the branch where it was. tree is the merged tree when ev is a merge (zero
// for a fast-forward).
func (o *Ops) recordLanding(ctx context.Context, req LandRequest, union string, up *git.RefUpdate, ev ledger.LandedData, tree git.OID) error {
	store := o.Store(ledger.Writer{Role: ledger.RoleObserver})
	run := req.Run
	change := func(r *ledger.Run) error {
		if r.State.Union == nil || r.State.Union.Head.String() != union {
			return fault.Conflict("the union of run %s moved while landing; nothing was written", run).WithHint("run `%s` again", req.step())
		}
		return nil
	}
	if store.Remote != nil {
		return o.recordLandingRemote(ctx, store, req, up, ev, tree, change)
	}
	_, err := store.Update(ctx, run, func(r *ledger.Run) (*gitstate.Change, error) {
		if err := change(r); err != nil {
			return nil, err
		}
		cur, err := o.Repo.ReadRef(ctx, up.Name)
		if err != nil {
			return nil, err
		}
		if cur != up.Old {
			return nil, landConflict(*up, req.step())
		}
		return &gitstate.Change{Event: ledger.LandedEvent(ledger.About{}, ev), Refs: []git.RefUpdate{*up}}, nil
	})
	return err
}

// recordLandingRemote is recordLanding through a remote: the landed event (unless an
// earlier land recorded this very move and died before making it), then the move.
func (o *Ops) recordLandingRemote(ctx context.Context, store *gitstate.Store, req LandRequest, up *git.RefUpdate, ev ledger.LandedData, tree git.OID, change func(*ledger.Run) error) error {
	run := req.Run
	recorded, err := o.recordedLanding(ctx, store, run, ev, tree)
	if err != nil {
		return err
	}
	if !recorded.IsZero() {
		up.New = recorded.String() // this move was recorded, and never made
	} else if _, err := store.Update(ctx, run, func(r *ledger.Run) (*gitstate.Change, error) {
		if err := change(r); err != nil {
			return nil, err
		}
		return &gitstate.Change{Event: ledger.LandedEvent(ledger.About{}, ev)}, nil
	}); err != nil {
		return err
	}
	if err := o.Repo.UpdateRefs(ctx, "atlas: land "+run, *up); errors.Is(err, git.ErrRefConflict) {
		return fault.Conflict("%s moved while landing (it was %s): the landed event was recorded, the branch was not moved",
			strings.TrimPrefix(up.Name, "refs/heads/"), up.Old).WithHint("run `%s` again", req.step())
	} else if err != nil {
		return err
	}
	return nil
}

// recordedLanding is the new tip of a landed event in run's log that recorded the
// very move ev makes (same branch, old tip and union) and that this land would make
// itself: what a land killed between its event and its move leaves; zero when there
// is none. The remote's ledger is written by every clone of it, so such an event is
// a claim, not a fact: one whose tip is not what this land makes (sameLanding) is
// passed over, and this land makes and records its own move (docs/contract.md §15).
// Refusing instead would let a planted event stop that branch landing for good.
func (o *Ops) recordedLanding(ctx context.Context, store *gitstate.Store, run string, ev ledger.LandedData, tree git.OID) (git.OID, error) {
	log, err := store.Log(ctx, run)
	if err != nil {
		return git.OID{}, err
	}
	var recorded git.OID
	for _, e := range log {
		if e.Type != ledger.EventLanded {
			continue
		}
		d, err := ledger.DecodeData[ledger.LandedData](&e)
		if err != nil || d.Branch != ev.Branch || d.Old != ev.Old || d.Union != ev.Union {
			continue
		}
		if o.sameLanding(ctx, d.New, ev, tree) {
			recorded = d.New
		}
	}
	return recorded, nil
}

// sameLanding reports whether tip is the commit this land moves ev's branch to. For
// a fast-forward that is the union itself. For a merge it is a commit whose parents
// are exactly the branch's old tip and the union, in that order, and whose tree is
// tree, git's merge of the two (the one Land just made): such a commit brings the
// branch the same files and history as this land's merge, which differs from an
// earlier land's only in its dates. A commit this repository lacks or cannot read is
// not one, and the land makes its own move instead.
func (o *Ops) sameLanding(ctx context.Context, tip git.OID, ev ledger.LandedData, tree git.OID) bool {
	if ev.How != LandMerge {
		return tip == ev.Union
	}
	c, err := o.Repo.Commit(ctx, tip)
	if err != nil {
		return false
	}
	return c.Tree == tree && slices.Equal(c.Parents, []git.OID{ev.Old, ev.Union})
}

// landConflict is a branch that moved while landing; again is the land to run again.
func landConflict(up git.RefUpdate, again fault.Step) error {
	return fault.Conflict("%s moved while landing (it was %s); nothing was written", strings.TrimPrefix(up.Name, "refs/heads/"), up.Old).
		WithHint("run `%s` again", again)
}
