// Package share carries the ledger between machines through a git remote: push sends
// refs/atlas/* and the atlas/ branches atomically and leased per ref, pull fetches them
// into a staging namespace and fast-forwards local refs by compare-and-swap
// (docs/contract.md §10). Either carries a ref only in a shape git-atlas writes, judging
// each ref alone: a remote is written by people this clone does not know.
package share

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
)

// Prefixes are the namespaces push and pull carry.
var Prefixes = []string{"refs/atlas/", "refs/heads/atlas/"}

// RefChange is one ref that moved (or was created) or would have.
type RefChange struct {
	Ref    string `json:"ref"`
	RunID  string `json:"run_id"`
	Local  string `json:"local"`
	Remote string `json:"remote"`
	Reason string `json:"reason,omitempty"`
	// KeptAs is where pull kept this repository's chain of a diverged run whose
	// ref it then gave the remote's chain (refs/atlas/diverged/<run>/<n>).
	KeptAs string `json:"kept_as,omitempty"`
}

// Report is what a push or pull did, ref by ref. Push fills Pushed (every ref sent),
// Created (those of them new on the remote) and Behind (the remote is ahead: nothing
// to push); pull fills Created, Updated and Ahead (this repository is ahead). Skipped
// are the refs left out, each with its Reason.
type Report struct {
	Remote   string
	Pushed   []RefChange
	Created  []RefChange
	Updated  []RefChange
	UpToDate []string
	Ahead    []string
	Behind   []string
	Diverged []RefChange
	Skipped  []RefChange
}

// DivergedRuns returns the run ids of the diverged refs, sorted and unique.
func (r *Report) DivergedRuns() []string {
	var ids []string
	for _, d := range r.Diverged {
		if !slices.Contains(ids, d.RunID) {
			ids = append(ids, d.RunID)
		}
	}
	slices.Sort(ids)
	return ids
}

// ResolveRemote returns the remote to use: name when given (a configured remote, or
// a URL or path git can reach), else origin, else the only remote.
func ResolveRemote(ctx context.Context, repo *git.Repository, name string) (string, error) {
	remotes, err := repo.Remotes(ctx)
	if err != nil {
		return "", err
	}
	if name != "" {
		if strings.HasPrefix(name, "-") {
			return "", fault.Usage("invalid remote %q", name)
		}
		if slices.Contains(remotes, name) || strings.ContainsAny(name, "/:") || name == "." {
			return name, nil
		}
		return "", fault.NotFound("no remote named %q", name).WithHint("git remote add %s <url>, or name one of: %s", name, dash(strings.Join(remotes, ", ")))
	}
	switch {
	case slices.Contains(remotes, "origin"):
		return "origin", nil
	case len(remotes) == 1:
		return remotes[0], nil
	case len(remotes) == 0:
		return "", fault.NotFound("this repository has no remote").WithHint("git remote add origin <url>")
	default:
		return "", fault.Usage("several remotes and none is origin: name one (%s)", strings.Join(remotes, ", "))
	}
}

func dash(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func localRefs(ctx context.Context, repo *git.Repository, root string) (map[string]string, error) {
	m := map[string]string{}
	for _, p := range Prefixes {
		refs, err := repo.ListRefs(ctx, root+p)
		if err != nil {
			return nil, err
		}
		for _, r := range refs {
			m[strings.TrimPrefix(r.Name, root)] = r.ID
		}
	}
	return m, nil
}

// Push sends every local ref of Prefixes that the remote lacks or that fast-forwards
// the remote's, in one atomic push leased on the remote tips just listed. Only refs of
// git-atlas's shapes (gitstate.ParseCarriedRef) at commits are sent, branches only of
// runs this ledger holds: a person's own atlas/ branch stays here. Refs that diverged,
// that are another run of the same id on the remote, or that the remote could not take
// for a reason of their own (a ref of its in the way, its tip no commit) are left out
// and reported; Push then returns a conflict (diverged, collided) or a failure after
// pushing the rest.
func Push(ctx context.Context, repo *git.Repository, remote string) (*Report, error) {
	rep := &Report{Remote: remote}
	local, err := localRefs(ctx, repo, "")
	if err != nil {
		return nil, err
	}
	remoteList, err := repo.LsRemote(ctx, remote, Prefixes...)
	if err != nil {
		return nil, remoteError(remote, err)
	}
	theirs := map[string]string{}
	for _, r := range remoteList {
		theirs[r.Name] = r.ID
	}
	runs := map[string]bool{}
	for ref := range local {
		if c, err := gitstate.ParseCarriedRef(ref); err == nil && c.Kind == gitstate.KindRun {
			runs[c.Run] = true
		}
	}
	var failed, collided []string
	skip := func(c RefChange, reason string, fault bool) {
		c.Reason = reason
		rep.Skipped = append(rep.Skipped, c)
		if fault {
			failed = append(failed, c.Ref)
		}
	}
	carried := map[string]gitstate.CarriedRef{}
	var ids []string
	for _, ref := range slices.Sorted(maps.Keys(local)) {
		c := RefChange{Ref: ref, Local: local[ref], Remote: theirs[ref]}
		cr, err := gitstate.ParseCarriedRef(ref)
		switch {
		case err != nil:
			skip(c, err.Error(), false)
		case cr.Kind == gitstate.KindBranch && !runs[cr.Run]:
			skip(c, gitstate.NotCarried+": a branch of no run this ledger holds", false)
		default:
			carried[ref] = cr
			if c.Local != c.Remote {
				ids = append(ids, c.Local)
				if c.Remote != "" {
					ids = append(ids, c.Remote)
				}
			}
		}
	}
	// A remote tip this repository may lack cannot be compared: fetch it first (into a
	// staging namespace, dropped after), or a ref that is merely behind would look
	// diverged. Only a tip the local ref reaches is certainly whole here (Reaches).
	var lacking []string
	for ref, rt := range theirs {
		if cr, ok := carried[ref]; ok && cr.FastForwardOnly() && !gitstate.Reaches(ctx, repo, local[ref], rt) {
			lacking = append(lacking, ref)
		}
	}
	if len(lacking) > 0 {
		staging := newStaging()
		defer func() { _ = dropStaging(context.WithoutCancel(ctx), repo, staging) }()
		slices.Sort(lacking)
		specs := make([]string, len(lacking))
		for i, ref := range lacking {
			specs[i] = "+" + ref + ":" + staging + ref
		}
		if err := repo.Fetch(ctx, remote, specs...); err != nil {
			return nil, remoteError(remote, err)
		}
	}
	commits, err := gitstate.Commits(ctx, repo, ids)
	if err != nil {
		return nil, err
	}
	space := gitstate.NewRefSpace(theirs)
	var push []git.PushRef
	// Runs first: a run the remote holds as another run's keeps all its refs here.
	order := slices.SortedFunc(maps.Keys(carried), func(a, b string) int {
		ra, rb := carried[a].Kind == gitstate.KindRun, carried[b].Kind == gitstate.KindRun
		if ra != rb {
			if ra {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, ref := range order {
		cr, ours, rt := carried[ref], local[ref], theirs[ref]
		c := RefChange{Ref: ref, RunID: cr.Run, Local: ours, Remote: rt}
		if rt == ours {
			rep.UpToDate = append(rep.UpToDate, ref)
			continue
		}
		if cr.Kind != gitstate.KindRun && slices.Contains(collided, cr.Run) {
			skip(c, "of a run the remote holds as another run with the same id", false)
			continue
		}
		if !commits[ours] {
			skip(c, "not a commit here", true)
			continue
		}
		switch {
		case rt == "":
			if other := space.InTheWay(ref); other != "" {
				skip(c, "the remote cannot create it: its "+other+" is in the way", true)
				continue
			}
		case !cr.FastForwardOnly():
			skip(c, "the remote has a different commit; pins and recovery refs are never overwritten", false)
			continue
		case !commits[rt]:
			skip(c, "the remote's object is not a commit", true)
			continue
		default:
			rel, err := gitstate.Relate(ctx, repo, cr, ours, rt)
			switch {
			case err != nil:
				skip(c, fmt.Sprintf("its history cannot be compared: %v", err), true)
				continue
			case rel == gitstate.Forward:
				rep.Behind = append(rep.Behind, ref) // the remote is ahead: pull brings it
				continue
			case rel == gitstate.Unrelated:
				skip(c, "the remote has another run with the same id: its ledger shares no history with this one", false)
				collided = append(collided, cr.Run)
				continue
			case rel == gitstate.Split:
				c.Reason = "diverged: the remote has commits this repository lacks, and this one has commits the remote lacks"
				rep.Diverged = append(rep.Diverged, c)
				continue
			}
		}
		push = append(push, git.PushRef{Name: ref, ID: ours, Expect: rt})
		rep.Pushed = append(rep.Pushed, c)
		if rt == "" {
			rep.Created = append(rep.Created, c)
		}
	}
	for _, l := range [][]RefChange{rep.Pushed, rep.Created, rep.Skipped, rep.Diverged} {
		slices.SortStableFunc(l, func(a, b RefChange) int { return strings.Compare(a.Ref, b.Ref) })
	}
	slices.Sort(rep.UpToDate)
	slices.Sort(rep.Behind)
	if err := repo.PushAtomic(ctx, remote, push); err != nil {
		rep.Pushed, rep.Created = nil, nil
		if errors.Is(err, git.ErrPushDeclined) {
			return rep, gitstate.Declined(remote, "the push", err)
		}
		if errors.Is(err, git.ErrPushRejected) {
			return rep, (&fault.Error{Kind: fault.ErrConflict, Msg: "the remote changed while pushing; nothing was pushed", Err: err}).
				WithHint("`%s`, then `%s` again", fault.Do("pull", "remote", remote), fault.Do("push", "remote", remote))
		}
		return rep, remoteError(remote, err)
	}
	switch {
	case len(collided) > 0:
		return rep, gitstate.Collision(remote, collided)
	case len(rep.Diverged) > 0:
		return rep, fault.Conflict("push refused for diverged run(s) %s: the remote's ledger and this one both moved", strings.Join(rep.DivergedRuns(), ", ")).
			WithHint("nothing of those runs was overwritten; every other ref was pushed. Resolve on one machine (e.g. keep one side's ref) and push again")
	case len(failed) > 0:
		return rep, Unusable(remote, failed)
	}
	return rep, nil
}

// Pull fetches the remote's refs of Prefixes into a staging namespace, screens them
// (gitstate.Screen: names of git-atlas's shapes, commits, nothing in the way, the same
// run) and then, ref by ref: creates those missing here, fast-forwards runs and
// atlas/ branches (compare-and-swap on the local tip; never a branch checked out in
// any worktree), leaves pins and recovery refs that exist alone. A run that diverged
// (both sides have events the other lacks) takes the remote's chain and keeps this one
// under refs/atlas/diverged/<run>/<n> (n: the first free here and there), reported
// with KeptAs: no event is lost. A diverged branch is reported and left as it is. A
// remote ref that fails the screen is skipped and reported, alone: another run with
// the same id (a collision: this repository's run is kept as it is) or a local ref
// that moved during the pull make it return a conflict, a ref that could not be taken
// for its own reason a failure (exit 1), a name git-atlas does not write nothing.
func Pull(ctx context.Context, repo *git.Repository, remote string) (rep *Report, err error) {
	rep = &Report{Remote: remote}
	staging := newStaging()
	defer func() {
		if derr := dropStaging(context.WithoutCancel(ctx), repo, staging); derr != nil && err == nil {
			err = derr
		}
	}()
	var specs []string
	for _, p := range Prefixes {
		specs = append(specs, "+"+p+"*:"+staging+p+"*")
	}
	if err := repo.Fetch(ctx, remote, specs...); err != nil {
		return nil, remoteError(remote, err)
	}
	theirs, err := localRefs(ctx, repo, staging)
	if err != nil {
		return nil, err
	}
	local, err := localRefs(ctx, repo, "")
	if err != nil {
		return nil, err
	}
	screened, err := gitstate.Screen(ctx, repo, theirs, local)
	if err != nil {
		return nil, err
	}
	checkedOut := map[string]bool{}
	wts, err := repo.ListWorktrees(ctx)
	if err != nil {
		return nil, err
	}
	for _, w := range wts {
		if w.Branch != "" {
			checkedOut[w.Branch] = true
		}
	}
	var raced, failed, collided []string
	for _, in := range screened {
		ref, rt, ours := in.Name, in.Remote, in.Local
		c := RefChange{Ref: ref, RunID: in.Run, Local: ours, Remote: rt}
		switch {
		case in.Skip != "":
			c.Reason = in.Skip
			rep.Skipped = append(rep.Skipped, c)
			if in.Collided {
				collided = append(collided, in.Run)
			} else if in.Fault {
				failed = append(failed, ref)
			}
			continue
		case in.Rel == gitstate.Same:
			rep.UpToDate = append(rep.UpToDate, ref)
			continue
		case checkedOut[ref]:
			c.Reason = "checked out in a worktree"
			rep.Skipped = append(rep.Skipped, c)
			continue
		case in.Rel == gitstate.Differs:
			c.Reason = "exists here with a different commit; pins and recovery refs are never overwritten"
			rep.Skipped = append(rep.Skipped, c)
			continue
		case in.Rel == gitstate.Behind:
			rep.Ahead = append(rep.Ahead, ref)
			continue
		case in.Rel == gitstate.Split:
			c.Reason = "diverged: both this repository and the remote have commits the other lacks"
			if in.Kind == gitstate.KindRun {
				// The remote's chain wins the run; this one is kept, whole, beside it.
				aside := gitstate.NextDivergedRef(c.RunID, local, theirs)
				err := repo.UpdateRefs(ctx, "atlas pull "+remote+": keep the diverged chain", git.RefUpdate{Name: aside, New: ours, Old: git.ZeroID}, git.RefUpdate{Name: ref, New: rt, Old: ours})
				if errors.Is(err, git.ErrRefConflict) {
					raced = append(raced, ref)
					continue
				}
				if err != nil {
					c.Reason = fmt.Sprintf("could not be set here: %v", err)
					rep.Skipped = append(rep.Skipped, c)
					failed = append(failed, ref)
					continue
				}
				local[aside] = ours
				c.KeptAs = aside
			}
			rep.Diverged = append(rep.Diverged, c)
			continue
		}
		old := ours
		if ours == "" {
			old = git.ZeroID
		}
		err := repo.UpdateRefs(ctx, "atlas pull "+remote, git.RefUpdate{Name: ref, New: rt, Old: old})
		if errors.Is(err, git.ErrRefConflict) {
			raced = append(raced, ref)
			continue
		}
		if err != nil {
			c.Reason = fmt.Sprintf("could not be set here: %v", err)
			rep.Skipped = append(rep.Skipped, c)
			failed = append(failed, ref)
			continue
		}
		if ours == "" {
			rep.Created = append(rep.Created, c)
		} else {
			rep.Updated = append(rep.Updated, c)
		}
	}
	var unresolved []string
	for _, d := range rep.Diverged {
		if d.KeptAs == "" && !slices.Contains(unresolved, d.Ref) {
			unresolved = append(unresolved, d.Ref)
		}
	}
	switch {
	case len(collided) > 0:
		return rep, gitstate.Collision(remote, collided)
	case len(unresolved) > 0:
		return rep, fault.Conflict("diverged ref(s) %s: this repository and %s both moved; left unchanged", strings.Join(unresolved, ", "), remote).
			WithHint("every other ref was pulled. Resolve on one machine (e.g. keep one side's ref) and push")
	case len(raced) > 0:
		return rep, fault.Conflict("ref(s) changed here during the pull, left as they are: %s", strings.Join(raced, ", ")).WithHint("pull again")
	case len(failed) > 0:
		return rep, Unusable(remote, failed)
	}
	return rep, nil
}

// Unusable is the failure of refs that could not be carried for their own reasons
// (each reported with it): every other ref was carried (exit 1).
func Unusable(remote string, refs []string) error {
	return &fault.Error{Msg: fmt.Sprintf("left out ref(s) of %s that could not be carried: %s", remote, strings.Join(refs, ", ")),
		Hint: "every other ref was carried; each one left out is listed with its reason. A ref of a shared remote is anyone's to write: ask who wrote it, or leave it"}
}

// newStaging names a fresh staging namespace for one fetch.
func newStaging() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return gitstate.IncomingPrefix + hex.EncodeToString(b[:]) + "/"
}

func dropStaging(ctx context.Context, repo *git.Repository, staging string) error {
	refs, err := repo.ListRefs(ctx, staging)
	if err != nil || len(refs) == 0 {
		return err
	}
	del := make([]git.RefUpdate, len(refs))
	for i, r := range refs {
		del[i] = git.RefUpdate{Name: r.Name, New: git.ZeroID}
	}
	return repo.UpdateRefs(ctx, "", del...)
}

// remoteError keeps git's words for an unreachable remote and says which remote.
func remoteError(remote string, err error) error {
	return fmt.Errorf("cannot reach remote %q (check its URL with git remote -v): %w", remote, err)
}
