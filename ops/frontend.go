package ops

import (
	"context"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/audit"
	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/hooks"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/recovery"
	"github.com/git-atlas/git-atlas/resume"
)

// What a front end needs besides the operations: opening the repository, and the
// names of the domain's types and constants that make up the operations' results.
// A front end imports ops and nothing below it (depguard, .golangci.yml
// command-line-imports-ops; internal/archtest TestFrontEndsReachTheRepositoryThroughOps):
// the names below are the results' own, re-exported so that a front end prints them
// without reaching past the operations.

// The errors Open returns for a directory that does not exist, and for one in no
// git repository (a front end says how to name another in its own words).
var (
	ErrNoDirectory   = git.ErrNoDirectory
	ErrNotRepository = git.ErrNotRepository
)

// Open opens the repository at dir (or the working directory, "") for one command:
// the list of worktrees and their statuses are asked once per state.
func Open(ctx context.Context, dir string) (*Ops, error) {
	r, err := git.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	r.KeepWorktrees()    // one command: the list and statuses asked once per state
	r.KeepObjectReader() // and one cat-file for every object read (Close ends it)
	return New(r), nil
}

// TellLockWaits has tell called when a write is about to wait for a ref lock in its
// way (once per write): the lock file's path ("" when git did not name it) and the age
// at which a killed process's lock is removed. For a front end that shows a person why
// a command stopped for seconds.
func (o *Ops) TellLockWaits(tell func(lock string, staleAfter time.Duration)) {
	o.Repo.OnLockWait = tell
}

// Close ends what Open keeps for the command: the long-lived object reader.
func (o *Ops) Close() { o.Repo.Close() }

// TopLevel is the working tree's root of the repository ("" in a bare repository).
func (o *Ops) TopLevel() string { return o.Repo.TopLevel }

// Fresh is new operations over the same repository, remote and clock that read the
// configuration and the worktrees afresh (an Ops keeps every store it made: a
// long-lived front end takes a fresh one per request).
func (o *Ops) Fresh() *Ops {
	o.Repo.ReloadConfig()
	o.Repo.ForgetWorktrees()
	return &Ops{Repo: o.Repo, Remote: o.Remote, Clock: o.Clock, Spelling: o.Spelling}
}

// CommonDir is the repository's common git directory (the one its worktrees share).
func (o *Ops) CommonDir() string { return o.Repo.CommonDir }

// RecoveryDir is the directory where the snapshots of run keep their patches.
func (o *Ops) RecoveryDir(run string) string { return o.Repo.Layout().RecoveryDir(run) }

// Browse opens url in the user's web browser (git web--browse).
func (o *Ops) Browse(ctx context.Context, url string) error { return o.Repo.Browse(ctx, url) }

// ConfiguredRemote is git config atlas.remote: the remote this clone coordinates
// through (docs/contract.md §10.1), "" for none.
func (o *Ops) ConfiguredRemote(ctx context.Context) string {
	return o.Repo.Config(ctx, "atlas.remote")
}

// UseRemote makes every ledger write go through the remote name means (ResolveRemote)
// and reads fetch first, unless noFetch.
func (o *Ops) UseRemote(ctx context.Context, name string, noFetch bool) error {
	remote, err := ResolveRemote(ctx, o.Repo, name)
	if err != nil {
		return err
	}
	o.Remote = &gitstate.Remote{Name: remote, NoFetch: noFetch}
	return nil
}

// RemoteName is the remote the ledger writes go through, "" for none.
func (o *Ops) RemoteName() string {
	if o.Remote == nil {
		return ""
	}
	return o.Remote.Name
}

// SnapshotIDs are the ids of the recovery snapshots (refs/atlas/recovery/<run>/<id>),
// read from one ref listing (for completion).
func (o *Ops) SnapshotIDs(ctx context.Context) ([]string, error) {
	refs, err := o.Repo.ListRefs(ctx, ledger.RecoveryPrefix)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range refs {
		rest := strings.TrimPrefix(r.Name, ledger.RecoveryPrefix)
		if i := strings.LastIndexByte(rest, '/'); i >= 0 {
			out = append(out, rest[i+1:])
		}
	}
	return out, nil
}

// The ledger's types that results carry (ledger, gitstate).
type (
	Run      = ledger.Run
	JobSpec  = ledger.JobSpec
	Verdict  = ledger.Verdict
	Lease    = ledger.Lease
	StageDef = ledger.StageDef
	Pipeline = ledger.Pipeline
	Diverged = gitstate.Diverged
	Event    = ledger.Event
	// VerifyResult is what a verify command did.
	VerifyResult = ledger.VerifyResult
)

// The ledger's values a front end compares results with (ledger).
const (
	ModeStandalone           = ledger.ModeStandalone
	ModeManaged              = ledger.ModeManaged
	KindGraph                = ledger.KindGraph
	SetupOK                  = ledger.SetupOK
	RunCompleted             = ledger.RunCompleted
	ReasonAllStagesCompleted = ledger.ReasonAllStagesCompleted
)

// StageStatuses are the statuses a stage can be in (for completion).
func StageStatuses() []string { return ledger.StageStatuses }

// ParseStamp parses a time as the ledger writes one (RFC 3339, nanoseconds).
func ParseStamp(s string) (time.Time, error) { return ledger.ParseStamp(s) }

// OpenAttempt is a stage's attempt still open, nil for none.
func OpenAttempt(st *ledger.StageState) *ledger.Attempt { return ledger.OpenAttempt(st) }

// ParsePipelineFile parses a pipeline file (ledger.ParsePipelineFile).
func ParsePipelineFile(name string, data []byte) (Pipeline, error) {
	return ledger.ParsePipelineFile(name, data)
}

// StagesFromList is the stages of a comma-separated list of names.
func StagesFromList(list string) []StageDef { return ledger.StagesFromList(list) }

// ReservedEventTypes are the event types only git-atlas writes, as one phrase
// ("a, b and c").
func ReservedEventTypes() string { return ledger.JoinEvents(ledger.ReservedEvents()) }

// Resume's types that results carry.
type (
	Candidate  = resume.Candidate
	Chooser    = resume.Chooser
	NextAction = resume.NextAction
	Plan       = resume.Plan
	Result     = resume.Result
)

// Resume's values a front end compares results with.
const (
	NextHandoff          = resume.NextHandoff
	VerifyInWorktree     = resume.VerifyInWorktree
	VerifyInCheckoutCopy = resume.VerifyInCheckoutCopy
	VerifyInNone         = resume.VerifyInNone
)

// VerifyOutcome says how a verify ended, in words (resume.Outcome), timeout the
// limit it ran under.
func VerifyOutcome(vr *VerifyResult, timeout time.Duration) string {
	return resume.Outcome(vr, timeout)
}

// IgnoredEntry is an ignored file a snapshot lists (recovery).
type IgnoredEntry = recovery.IgnoredEntry

// SourceCheckout is a snapshot's source when it was taken of the user's checkout.
const SourceCheckout = recovery.SourceCheckout

// What gc does with a run, a worktree or a leftover (audit).
const (
	GCRemoveWorktree = audit.RemoveWorktree
	GCKeepWorktree   = audit.KeepWorktree
	GCRemoveLeftover = audit.RemoveLeftover
	GCKeepRun        = audit.KeepRun
	GCKeepStray      = audit.KeepStray
)

// The post-checkout hook (hooks): its state, and the name git runs it by.
type HookStatus = hooks.Status

const (
	HookName         = hooks.Name
	HookInstalled    = hooks.Installed
	HookForeign      = hooks.Foreign
	HookNotInstalled = hooks.NotInstalled
)

// HooksRequest is `hooks install` or `hooks uninstall`.
type HooksRequest struct {
	// Global allows changing a hooks directory core.hooksPath sets in the global or
	// system git config.
	Global bool
}

// HooksInspect reports the state of the post-checkout hook.
func (o *Ops) HooksInspect(ctx context.Context) (HookStatus, error) {
	return hooks.Inspect(ctx, o.Repo)
}

// HooksInstall puts git-atlas's post-checkout hook in place (hooks.Install).
func (o *Ops) HooksInstall(ctx context.Context, req HooksRequest) (HookStatus, error) {
	if err := req.Check(); err != nil {
		return HookStatus{}, err
	}
	return hooks.Install(ctx, o.Repo, hooks.Options{Global: req.Global, Clock: o.Clock})
}

// HooksUninstall removes git-atlas's post-checkout hook and restores the one it
// replaced (hooks.Uninstall).
func (o *Ops) HooksUninstall(ctx context.Context, req HooksRequest) (HookStatus, error) {
	if err := req.Check(); err != nil {
		return HookStatus{}, err
	}
	return hooks.Uninstall(ctx, o.Repo, hooks.Options{Global: req.Global, Clock: o.Clock})
}

// InterruptedLine is the post-checkout hook's line about interrupted runs ("" for
// none), each run id through name.
func InterruptedLine(cands []Candidate, name func(string) string) string {
	return hooks.InterruptedLine(cands, name)
}
