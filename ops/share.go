package ops

import (
	"context"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/resume"
	"github.com/git-atlas/git-atlas/share"
)

// RefChange is one ref that push or pull moved (or created), or would have.
type RefChange = share.RefChange

// ResolveRemote returns the remote a name means (docs/contract.md §10): a configured remote, or a
// URL or path git can reach; "" means origin, else the only remote. A front end
// resolves --remote and atlas.remote with it before it makes its Ops.
func ResolveRemote(ctx context.Context, repo *git.Repository, name string) (string, error) {
	return share.ResolveRemote(ctx, repo, name)
}

// SyncRequest is `push [REMOTE]` or `pull [REMOTE]`.
type SyncRequest struct {
	// Remote is the remote to sync with ("": the remote this clone coordinates
	// through, Ops.Remote, else origin, else the only remote).
	Remote string
}

// syncRemote is the remote req names, resolved.
func (o *Ops) syncRemote(ctx context.Context, req SyncRequest) (string, error) {
	name := req.Remote
	if name == "" && o.Remote != nil {
		// The remote this clone coordinates through is the one to sync with.
		name = o.Remote.Name
	}
	return share.ResolveRemote(ctx, o.Repo, name)
}

// PushResult is `push --json`: every list present, [] when empty; "pushed" is every
// ref sent and "created" those of them new on the remote. Its fields are in the
// order of the JSON keys (sorted).
type PushResult struct {
	Behind       []string    `json:"behind"`
	Created      []RefChange `json:"created"`
	Diverged     []RefChange `json:"diverged"`
	DivergedRuns []string    `json:"diverged_runs"`
	Pushed       []RefChange `json:"pushed"`
	Remote       string      `json:"remote"`
	Skipped      []RefChange `json:"skipped"`
	UpToDate     []string    `json:"up_to_date"`
}

// PullResult is `pull --json`: every list present, [] when empty; "created" and
// "updated" are disjoint. Its fields are in the order of the JSON keys (sorted).
type PullResult struct {
	Ahead        []string    `json:"ahead"`
	Created      []RefChange `json:"created"`
	Diverged     []RefChange `json:"diverged"`
	DivergedRuns []string    `json:"diverged_runs"`
	Remote       string      `json:"remote"`
	Skipped      []RefChange `json:"skipped"`
	UpToDate     []string    `json:"up_to_date"`
	Updated      []RefChange `json:"updated"`
}

// Push sends the ledger (refs/atlas/*, atlas/ branches) to a remote: atomic, leased,
// fast-forward only. A diverged run is left out and reported: the result (what did
// move) comes back together with a conflict.
func (o *Ops) Push(ctx context.Context, req SyncRequest) (*PushResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	remote, err := o.syncRemote(ctx, req)
	if err != nil {
		return nil, err
	}
	rep, err := share.Push(ctx, o.Repo, remote)
	if rep == nil {
		return nil, err
	}
	return &PushResult{Behind: nonNil(rep.Behind), Created: nonNil(rep.Created), Diverged: nonNil(rep.Diverged), DivergedRuns: nonNil(rep.DivergedRuns()),
		Pushed: nonNil(rep.Pushed), Remote: rep.Remote, Skipped: nonNil(rep.Skipped), UpToDate: nonNil(rep.UpToDate)}, err
}

// Pull brings the ledger from a remote: runs fast-forwarded, missing refs created, a
// diverged run given the remote's chain with this repository's kept aside. When some
// refs could not move, the result (what did) comes back together with the error.
func (o *Ops) Pull(ctx context.Context, req SyncRequest) (*PullResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	remote, err := o.syncRemote(ctx, req)
	if err != nil {
		return nil, err
	}
	rep, err := share.Pull(ctx, o.Repo, remote)
	if rep == nil {
		return nil, err
	}
	// The runs that arrived dated ahead of this clone's clock count from now when
	// resume picks the newest (resume.NoteArrivals); a failure here changes no pull.
	_ = resume.NoteArrivals(ctx, o.Reader(), o.now())
	return &PullResult{Ahead: nonNil(rep.Ahead), Created: nonNil(rep.Created), Diverged: nonNil(rep.Diverged), DivergedRuns: nonNil(rep.DivergedRuns()),
		Remote: rep.Remote, Skipped: nonNil(rep.Skipped), UpToDate: nonNil(rep.UpToDate), Updated: nonNil(rep.Updated)}, err
}
