// Package share carries the ledger between machines through a git remote: push sends
// refs/atlas/* and the atlas/ branches atomically and leased per ref, pull fetches them
// into a staging namespace and fast-forwards local refs by compare-and-swap (docs/contract.md §10).
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
// to push); pull fills Created, Updated and Ahead (this repository is ahead).
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

// RunOf returns the run a carried ref belongs to.
func RunOf(ref string) string {
	for _, p := range []string{"refs/atlas/runs/", "refs/atlas/pins/", "refs/atlas/recovery/", gitstate.DivergedPrefix, "refs/heads/atlas/"} {
		if rest, ok := strings.CutPrefix(ref, p); ok {
			id, _, _ := strings.Cut(rest, "/")
			return id
		}
	}
	return ""
}

// fastForwardOnly says whether a ref may only move forward (runs and branches);
// pins and recovery refs are written once and are never moved by push or pull.
func fastForwardOnly(ref string) bool {
	return strings.HasPrefix(ref, "refs/atlas/runs/") || strings.HasPrefix(ref, "refs/heads/atlas/")
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
// the remote's, in one atomic push leased on the remote tips just listed. Refs that
// diverged are left out and reported; Push then returns a conflict after pushing the
// rest.
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
	// A remote tip this repository may lack cannot be compared: fetch it first (into a
	// staging namespace, dropped after), or a ref that is merely behind would look
	// diverged. Only a tip the local ref reaches is certainly whole here (Reaches).
	var lacking []string
	for ref, rt := range theirs {
		if ours, ok := local[ref]; ok && fastForwardOnly(ref) && !gitstate.Reaches(ctx, repo, ours, rt) {
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
	var push []git.PushRef
	for _, ref := range slices.Sorted(maps.Keys(local)) {
		ours, rt := local[ref], theirs[ref]
		c := RefChange{Ref: ref, RunID: RunOf(ref), Local: ours, Remote: rt}
		switch {
		case rt == ours:
			rep.UpToDate = append(rep.UpToDate, ref)
			continue
		case rt == "":
		case !fastForwardOnly(ref):
			c.Reason = "the remote has a different commit; pins and recovery refs are never overwritten"
			rep.Skipped = append(rep.Skipped, c)
			continue
		default:
			ff, err := gitstate.IsAncestorID(ctx, repo, rt, ours)
			if err != nil {
				return nil, err
			}
			if !ff {
				behind, err := gitstate.IsAncestorID(ctx, repo, ours, rt)
				if err != nil {
					return nil, err
				}
				if behind {
					rep.Behind = append(rep.Behind, ref) // the remote is ahead: pull brings it
					continue
				}
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
	if err := repo.PushAtomic(ctx, remote, push); err != nil {
		rep.Pushed, rep.Created = nil, nil
		if errors.Is(err, git.ErrPushDeclined) {
			return rep, gitstate.Declined(remote, "the push", err)
		}
		if errors.Is(err, git.ErrPushRejected) {
			return rep, &fault.Error{Kind: fault.ErrConflict, Msg: "the remote changed while pushing; nothing was pushed", Err: err, Hint: "git atlas pull, then push again"}
		}
		return rep, remoteError(remote, err)
	}
	if len(rep.Diverged) > 0 {
		return rep, fault.Conflict("push refused for diverged run(s) %s: the remote's ledger and this one both moved", strings.Join(rep.DivergedRuns(), ", ")).
			WithHint("nothing of those runs was overwritten; every other ref was pushed. Resolve on one machine (e.g. keep one side's ref) and push again")
	}
	return rep, nil
}

// Pull fetches the remote's refs of Prefixes into a staging namespace and then, ref by
// ref: creates those missing here, fast-forwards runs and atlas/ branches (compare-and-
// swap on the local tip; never a branch checked out in any worktree), leaves pins and
// recovery refs that exist alone. A run that diverged (both sides have events the
// other lacks) takes the remote's chain and keeps this one under
// refs/atlas/diverged/<run>/<n> (n: the first free here and there), reported with
// KeptAs: no event is lost. A diverged branch is reported and left as it is. It
// returns a conflict when a branch diverged or a local ref moved during the pull.
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
	var raced []string
	for _, ref := range slices.Sorted(maps.Keys(theirs)) {
		rt, ours := theirs[ref], local[ref]
		c := RefChange{Ref: ref, RunID: RunOf(ref), Local: ours, Remote: rt}
		if rt == ours {
			rep.UpToDate = append(rep.UpToDate, ref)
			continue
		}
		if checkedOut[ref] {
			c.Reason = "checked out in a worktree"
			rep.Skipped = append(rep.Skipped, c)
			continue
		}
		old := ours
		if ours == "" {
			old = git.ZeroID
		} else if !fastForwardOnly(ref) {
			c.Reason = "exists here with a different commit; pins and recovery refs are never overwritten"
			rep.Skipped = append(rep.Skipped, c)
			continue
		} else {
			ff, err := gitstate.IsAncestorID(ctx, repo, ours, rt)
			if err != nil {
				return nil, err
			}
			if !ff {
				ahead, err := gitstate.IsAncestorID(ctx, repo, rt, ours)
				if err != nil {
					return nil, err
				}
				if ahead {
					rep.Ahead = append(rep.Ahead, ref)
					continue
				}
				c.Reason = "diverged: both this repository and the remote have commits the other lacks"
				if strings.HasPrefix(ref, gitstate.RunsPrefix) {
					// The remote's chain wins the run; this one is kept, whole, beside it.
					aside := gitstate.NextDivergedRef(c.RunID, local, theirs)
					err := repo.UpdateRefs(ctx, "atlas pull "+remote+": keep the diverged chain", git.RefUpdate{Name: aside, New: ours, Old: git.ZeroID}, git.RefUpdate{Name: ref, New: rt, Old: ours})
					if errors.Is(err, git.ErrRefConflict) {
						raced = append(raced, ref)
						continue
					}
					if err != nil {
						return nil, err
					}
					local[aside] = ours
					c.KeptAs = aside
				}
				rep.Diverged = append(rep.Diverged, c)
				continue
			}
		}
		err := repo.UpdateRefs(ctx, "atlas pull "+remote, git.RefUpdate{Name: ref, New: rt, Old: old})
		if errors.Is(err, git.ErrRefConflict) {
			raced = append(raced, ref)
			continue
		}
		if err != nil {
			return nil, err
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
	case len(unresolved) > 0:
		return rep, fault.Conflict("diverged ref(s) %s: this repository and %s both moved; left unchanged", strings.Join(unresolved, ", "), remote).
			WithHint("every other ref was pulled. Resolve on one machine (e.g. keep one side's ref) and push")
	case len(raced) > 0:
		return rep, fault.Conflict("ref(s) changed here during the pull, left as they are: %s", strings.Join(raced, ", ")).WithHint("pull again")
	}
	return rep, nil
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
