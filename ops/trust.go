package ops

import (
	"context"
	"strings"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/trust"
)

// TrustCommand is one command a run carries, where it is used, and whether it is
// trusted here.
type TrustCommand = trust.Command

// TrustHeaderText is one member of a run header's free text and its value.
type TrustHeaderText = trust.HeaderText

// TrustRequest is `trust RUN`.
type TrustRequest struct {
	Run string
	// Confirm asks a person whether the run's commands (those listed, untrusted of
	// them not yet trusted) may run here, and its intent and the header text agents
	// do not get yet (withheld) reach agents here; the front end prompts. Nil: nobody
	// can be asked, and Yes must say that the caller read them.
	Confirm func(intent string, withheld []TrustHeaderText, cmds []TrustCommand, untrusted int) (bool, error)
	// Yes: trust without asking (--yes, after reading them), only when the digest of
	// the run's commands and text (`trust --list RUN`) is Digest: a command or header
	// text added or changed since they were read is never trusted by it.
	Yes    bool
	Digest string
}

// TrustResult is `trust RUN --json`: the run's commands, all trusted now. Its fields
// are in the order of the JSON keys (sorted).
type TrustResult struct {
	Commands []TrustCommand `json:"commands"`
	// Digest is the digest of the commands and text now trusted (trust.Digest).
	Digest string `json:"digest"`
	// Intent is the run's intent, trusted here now with its commands: it may reach an
	// agent's context here (docs/contract.md §6).
	Intent string `json:"intent,omitempty"`
	RunID  string `json:"run_id"`
}

// Trust records, in this repository only, that the commands run req.Run carries may
// run here (docs/contract.md §10), and that its intent, and every note, reason and job
// any clone wrote into it, may reach an agent's context here (docs/contract.md §6).
// Untrusted commands are recorded only after a person confirmed them, or with Yes and
// the digest of what they read: a command nobody read never becomes trusted.
func (o *Ops) Trust(ctx context.Context, req TrustRequest) (*TrustResult, error) {
	if err := req.Check(); err != nil {
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
	set, err := trust.Load(ctx, o.Repo, req.Run)
	if err != nil {
		return nil, err
	}
	intent := r.Header.Intent
	digest := trust.Digest(&r.Header, cmds)
	want := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(req.Digest)), "sha256:")
	if req.Digest != "" && want != digest {
		return nil, fault.Conflict("run %s's commands or text are not those of digest %s: nothing was trusted", req.Run, req.Digest).
			WithHint("they changed since they were read: read them again with `%s`", trustList(req.Run))
	}
	var todo []string
	for _, cm := range cmds {
		if !cm.Trusted {
			todo = append(todo, cm.Command)
		}
	}
	// A run not yet trusted by a person here lets all of its text reach agents once
	// trusted (docs/contract.md §6): a person says so, even when its commands are trusted already.
	// So is a header whose text the record does not prove whole (ProvesHeader: its
	// intent or a member another clone's, or one started by a release that proved only
	// the intent, or a member taken away since).
	withheld := set.HeaderWithheld(&r.Header)
	newIntent := !set.TrustsPerson(intent) || !set.ProvesHeader(&r.Header)
	if len(todo) > 0 || newIntent {
		switch {
		case req.Confirm != nil:
			ok, err := req.Confirm(intent, withheld, cmds, len(todo))
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, fault.Refused("nothing trusted: run %s's commands stay untrusted here", req.Run)
			}
		case !req.Yes:
			return nil, fault.Named(fault.ErrUsage, "trusting run %s's commands needs a person: run it on a terminal, or pass {yes} {digest} D after reading them (`%s` prints D)", req.Run, trustList(req.Run))
		case req.Digest == "":
			return nil, fault.Named(fault.ErrUsage, "{yes} needs {digest}: trusting without a terminal trusts exactly the commands you read, by the digest `%s` prints", trustList(req.Run))
		}
	}
	if _, err := trust.AddPerson(ctx, o.Repo, &r.Header, todo...); err != nil {
		return nil, err
	}
	for i := range cmds {
		cmds[i].Trusted = true
	}
	return &TrustResult{Commands: cmds, Digest: digest, Intent: intent, RunID: req.Run}, nil
}

// trustRun checks the run a trust operation names.
func trustRun(run string) error {
	if run == "" {
		return fault.Named(fault.ErrUsage, "name the run whose commands to trust (or {list})")
	}
	return ledger.ValidName("run", run)
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
	if err := req.Check(); err != nil {
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

// TrustListResult is `trust --list --json`: the runs that carry commands (and the run
// named, even without).
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
	// Digest is the digest of exactly these commands, the intent and the header's
	// text (trust.Digest): what `trust RUN --yes --digest D` trusts.
	Digest string `json:"digest"`
	// Intent is the run's intent (free text from the ledger: what trusting it lets
	// reach agents here).
	Intent string `json:"intent,omitempty"`
	// HeaderWithheld are the members of the run's header text (other than the
	// intent), with their values, that do not reach agents here until `trust RUN`:
	// this clone did not write them so (another clone did, or they changed since, or
	// the run was started by a release that proved only the intent; docs/contract.md
	// §6).
	HeaderWithheld []TrustHeaderText `json:"header_withheld,omitempty"`
}

// TrustList lists the commands runs carry, with whether each is trusted here.
func (o *Ops) TrustList(ctx context.Context, req TrustListRequest) (*TrustListResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
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
		// A run named is listed even without commands: its digest is what `trust RUN
		// --yes --digest D` needs to vouch for the run's text (agenttext.go).
		if len(cmds) > 0 || req.Run != "" {
			set, err := trust.Load(ctx, o.Repo, r.Header.RunID)
			if err != nil {
				return nil, err
			}
			res.Runs = append(res.Runs, TrustRunCommands{r.Header.RunID, nonNil(cmds), trust.Digest(&r.Header, cmds), r.Header.Intent,
				set.HeaderWithheld(&r.Header)})
		}
	}
	return res, nil
}

// trustList is the step that lists run's commands and their digest.
func trustList(run string) fault.Step { return fault.Do("trust", "run", run, "list", true) }
