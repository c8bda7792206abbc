package ops

import (
	"context"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/trust"
)

// TrustCommand is one command a run carries, where it is used, and whether it is
// trusted here.
type TrustCommand = trust.Command

// TrustRequest is `trust RUN`.
type TrustRequest struct {
	Run string
	// Confirm asks a person whether the run's commands (those listed, untrusted of
	// them not yet trusted) may run here; the front end prompts. Nil: nobody can be
	// asked, and Yes must say that the caller read them.
	Confirm func(cmds []TrustCommand, untrusted int) (bool, error)
	// Yes: trust without asking (--yes, after reading them).
	Yes bool
}

// TrustResult is `trust RUN --json`: the run's commands, all trusted now. Its fields
// are in the order of the JSON keys (sorted).
type TrustResult struct {
	Commands []TrustCommand `json:"commands"`
	RunID    string         `json:"run_id"`
}

// Trust records, in this repository only, that the commands run req.Run carries may
// run here (SPEC §10). Untrusted commands are recorded only after a person confirmed
// them, or with Yes: a command nobody read never becomes trusted.
func (o *Ops) Trust(ctx context.Context, req TrustRequest) (*TrustResult, error) {
	if err := trustRun(req.Run); err != nil {
		return nil, err
	}
	r, err := o.Reader().Load(ctx, req.Run)
	if err != nil {
		return nil, err
	}
	cmds, err := trust.Check(ctx, o.Repo, r)
	if err != nil {
		return nil, err
	}
	var todo []string
	for _, cm := range cmds {
		if !cm.Trusted {
			todo = append(todo, cm.Command)
		}
	}
	if len(todo) > 0 {
		switch {
		case req.Confirm != nil:
			ok, err := req.Confirm(cmds, len(todo))
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, fault.Refused("nothing trusted: run %s's commands stay untrusted here", req.Run)
			}
		case !req.Yes:
			return nil, fault.Usage("trusting run %s's commands needs a person: run it on a terminal, or pass --yes after reading them (`git atlas trust --list %s`)", req.Run, req.Run)
		}
		if err := trust.Record(ctx, o.Repo, req.Run, todo...); err != nil {
			return nil, err
		}
	}
	for i := range cmds {
		cmds[i].Trusted = true
	}
	return &TrustResult{Commands: cmds, RunID: req.Run}, nil
}

// trustRun checks the run a trust operation names.
func trustRun(run string) error {
	if run == "" {
		return fault.Usage("name the run whose commands to trust (or --list)")
	}
	return gitstate.ValidName("run", run)
}

// TrustRevokeRequest is `trust --revoke RUN`.
type TrustRevokeRequest struct {
	Run string
}

// TrustRevokeResult is `trust --revoke RUN --json` (fields in JSON key order).
type TrustRevokeResult struct {
	Revoked bool   `json:"revoked"`
	RunID   string `json:"run_id"`
}

// TrustRevoke forgets every trusted command of a run: none of them runs here until
// trusted again.
func (o *Ops) TrustRevoke(ctx context.Context, req TrustRevokeRequest) (*TrustRevokeResult, error) {
	if err := trustRun(req.Run); err != nil {
		return nil, err
	}
	if err := trust.Revoke(ctx, o.Repo, req.Run); err != nil {
		return nil, err
	}
	return &TrustRevokeResult{Revoked: true, RunID: req.Run}, nil
}

// TrustListRequest is `trust --list [RUN]`.
type TrustListRequest struct {
	// Run lists only this run's commands ("": every run's).
	Run string
}

// TrustListResult is `trust --list --json`: the runs that carry commands.
type TrustListResult struct {
	Runs []TrustRunCommands `json:"runs"`
	// Unreadable are the runs that could not be read, left out (a front end warns of
	// each).
	Unreadable []error `json:"-"`
}

// TrustRunCommands are one run's commands.
type TrustRunCommands struct {
	RunID    string         `json:"run_id"`
	Commands []TrustCommand `json:"commands"`
}

// TrustList lists the commands runs carry, with whether each is trusted here.
func (o *Ops) TrustList(ctx context.Context, req TrustListRequest) (*TrustListResult, error) {
	if req.Run != "" {
		if err := gitstate.ValidName("run", req.Run); err != nil {
			return nil, err
		}
	}
	store := o.Reader()
	res := &TrustListResult{Runs: []TrustRunCommands{}}
	runs, unreadable, err := loadRuns(ctx, store, req.Run)
	if err != nil {
		return nil, err
	}
	res.Unreadable = unreadable
	for _, r := range runs {
		cmds, err := trust.Check(ctx, o.Repo, r)
		if err != nil {
			return nil, err
		}
		if len(cmds) > 0 {
			res.Runs = append(res.Runs, TrustRunCommands{r.Header.RunID, cmds})
		}
	}
	return res, nil
}
