package ops

import (
	"context"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/recovery"
	"github.com/git-atlas/git-atlas/resume"
)

// SnapshotOptions tune the snapshots an operation takes.
type SnapshotOptions struct {
	// IncludeIgnored copies ignored files into the snapshot, up to IgnoredCap bytes in
	// total (they are always listed).
	IncludeIgnored bool `json:"include_ignored,omitempty" help:"${snapshot_include_ignored}"`
	// IgnoredCap in bytes (0: recovery.DefaultIgnoredCap).
	IgnoredCap int64 `json:"ignored_cap,omitempty" wire:"size" help:"${snapshot_ignored_cap}"`
}

// snapshotOptions are the recovery options of a snapshot taken for reason, its
// progress reported to o.Progress.
func (o *Ops) snapshotOptions(s SnapshotOptions, reason, patchOut string) recovery.Options {
	return recovery.Options{Reason: reason, IncludeIgnored: s.IncludeIgnored, IgnoredCap: s.IgnoredCap, PatchOut: patchOut, Progress: o.Progress}
}

// SnapshotView is a recovery snapshot in JSON (docs/contract.md §4.7 names id, run_id, node,
// stage, ref, patch, created_at).
type SnapshotView struct {
	ID        string `json:"id"`
	RunID     string `json:"run_id"`
	Node      string `json:"node"`
	Stage     string `json:"stage"`
	Ref       string `json:"ref"`
	Commit    string `json:"commit"`
	Patch     string `json:"patch"`
	Source    string `json:"source,omitempty"`
	Reason    string `json:"reason,omitempty"`
	CreatedAt string `json:"created_at"`
	// Reused: an identical snapshot was already recorded (a re-run after a kill).
	Reused bool `json:"reused,omitempty"`
	// Unrecorded: the snapshot's ref exists but no ledger records it.
	Unrecorded bool `json:"unrecorded,omitempty"`
	// TextWithheld: the record's reason was left out, for an agent, because its run
	// was neither started nor trusted here (agenttext.go).
	TextWithheld bool `json:"text_withheld,omitempty"`
}

func viewOf(run string, s ledger.SnapshotRec) SnapshotView {
	return SnapshotView{ID: s.ID, RunID: run, Node: s.Node, Stage: s.Stage, Ref: s.Ref, Commit: s.Commit.String(), Patch: s.Patch,
		Source: s.Source, Reason: s.Reason, CreatedAt: s.CreatedAt}
}

func resultView(run string, r *recovery.Result) *SnapshotView {
	if r == nil {
		return nil
	}
	v := viewOf(run, r.Rec)
	v.Reused = r.Reused
	return &v
}

// nullable is s, or JSON's null for "".
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// WorktreeRemoveRequest is `worktree remove RUN NODE`.
type WorktreeRemoveRequest struct {
	Run      string          `json:"run" help:"${worktree_remove_run}"`
	Node     string          `json:"node" help:"${worktree_remove_node}"`
	Snapshot SnapshotOptions `wire:"inline"`
	Driver   Driver          `wire:"inline"`
}

// WorktreeRemoveResult is what `worktree remove` did.
type WorktreeRemoveResult struct {
	// IgnoredDeleted are the ignored files (and wholly ignored directories) the
	// removal deleted without keeping their bytes in the snapshot: by name, count and
	// size (--include-ignored keeps them, up to --ignored-cap).
	IgnoredDeleted []recovery.IgnoredEntry `json:"ignored_deleted"`
	Node           string                  `json:"node"`
	Path           string                  `json:"path"`
	// Reasons say what could have been lost (so a snapshot was taken).
	Reasons []string `json:"reasons"`
	Removed bool     `json:"removed"`
	RunID   string   `json:"run_id"`
	// Snapshot is the snapshot taken first (null when nothing could be lost).
	Snapshot *SnapshotView `json:"snapshot"`
}

// WorktreeRemove removes a managed worktree, first taking a verified snapshot
// whenever anything in it could be lost. When the removal fails after the snapshot
// was taken, the result (Removed false, Snapshot set) comes back with the error: the
// snapshot is kept, and a front end says so.
func (o *Ops) WorktreeRemove(ctx context.Context, req WorktreeRemoveRequest) (*WorktreeRemoveResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	store, err := o.driverStore(req.Driver)
	if err != nil {
		return nil, err
	}
	if err := precheck(ctx, store, req.Run); err != nil {
		return nil, err
	}
	res, err := recovery.PreserveAndRemove(ctx, store, req.Run, req.Node, o.snapshotOptions(req.Snapshot, "worktree remove", ""))
	if err != nil {
		if res != nil && res.Snapshot != nil {
			return &WorktreeRemoveResult{Node: req.Node, Path: res.Path, Reasons: res.Risk.Reasons, RunID: req.Run,
				Snapshot: resultView(req.Run, res.Snapshot), IgnoredDeleted: []recovery.IgnoredEntry{}}, err
		}
		return nil, err
	}
	reasons := res.Risk.Reasons
	if reasons == nil {
		reasons = []string{}
	}
	return &WorktreeRemoveResult{Node: req.Node, Path: res.Path, Reasons: reasons, Removed: true, RunID: req.Run,
		Snapshot: resultView(req.Run, res.Snapshot), IgnoredDeleted: nonNil(res.IgnoredDeleted)}, nil
}

// precheck applies, before a destructive step, the rules the step's ledger write
// will apply (docs/contract.md §5.1: the driver rule; a stopped run takes no write but resume's
// and finish's): nothing is removed for a record the ledger then refuses. The write
// checks them again, on every compare-and-swap try.
func precheck(ctx context.Context, store *gitstate.Store, run string) error {
	r, err := store.Load(ctx, run)
	if err != nil {
		return err
	}
	if err := r.Writable(); err != nil {
		return err
	}
	if r.State.Status == ledger.RunStopped {
		return fault.Refused("run %s is stopped: only resume and finish change it; nothing was done", run).
			WithHint("`%s` to go on, or `%s`", fault.Do("resume", "run", run), fault.Do("finish", "run", run, "status", fault.Placeholder("completed|failed")))
	}
	_, err = ledger.ClaimDriver(r, store.Writer.SawDriver(r, store.Now()), store.Now())
	return err
}

// RecoverRequest is `recover RUN --stage S`.
type RecoverRequest struct {
	Run   string `json:"run" help:"${recover_run}"`
	Stage string `json:"stage" help:"${recover_stage}"`
	// Node is the stage's worktree ("": the stage's name; without one, the stage ran
	// in the user's checkout, which is snapshotted without being touched).
	Node string `json:"node,omitempty" help:"${recover_node}"`
	// Worktree makes a managed worktree on the replay branch.
	Worktree bool `json:"worktree,omitempty" help:"${recover_worktree}"`
	// Apply puts the snapshot into the replay worktree (implies Worktree).
	Apply bool `json:"apply,omitempty" help:"${recover_apply}"`
	// PatchOut is where the patch goes ("": <git-common-dir>/atlas/recovery/<run>/<snapshot>.patch):
	// an absolute path outside every working tree, never a symbolic link.
	PatchOut string `json:"patch_out,omitempty" help:"${recover_patch_out}"`
	// Force lets PatchOut replace an existing file.
	Force    bool            `json:"force,omitempty" help:"${recover_force}"`
	Snapshot SnapshotOptions `wire:"inline"`
	Driver   Driver          `wire:"inline"`
}

// RecoverResult is what `recover` did. Its fields are in the order of the JSON keys
// (sorted).
type RecoverResult struct {
	Applied bool `json:"applied"`
	// Checkout is the user's checkout, when it was the snapshot's source.
	Checkout string        `json:"checkout,omitempty"`
	Replay   ReplayView    `json:"replay"`
	RunID    string        `json:"run_id"`
	Snapshot *SnapshotView `json:"snapshot"`
	// Source is recovery.SourceWorktree or recovery.SourceCheckout, null when the
	// stage's worktree was gone.
	Source *string `json:"source"`
	Stage  string  `json:"stage"`
}

// ReplayView is the replay branch `recover` made.
type ReplayView struct {
	Baseline string `json:"baseline"`
	Branch   string `json:"branch"`
	// Node is the replay worktree's node (null without one).
	Node *string `json:"node"`
	// Worktree is the replay worktree's path (null without one).
	Worktree *string `json:"worktree"`
}

// Recover is "preserve and replay" (docs/contract.md §7): it snapshots the stage's worktree (or
// the user's checkout, without touching it), makes a replay branch at the stage's
// baseline, optionally a worktree on it with the snapshot applied, and records it.
func (o *Ops) Recover(ctx context.Context, req RecoverRequest) (*RecoverResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	store, err := o.driverStore(req.Driver)
	if err != nil {
		return nil, err
	}
	// The user's checkout, wherever recover runs from: a managed worktree is not it.
	checkout, err := recovery.UserCheckout(ctx, store, o.Repo.TopLevel)
	if err != nil {
		return nil, err
	}
	opt := o.snapshotOptions(req.Snapshot, "recover", req.PatchOut)
	res, err := recovery.Recover(ctx, store, req.Run, recovery.RecoverRequest{Stage: req.Stage, Node: req.Node,
		CheckoutPath: checkout, Worktree: req.Worktree, Apply: req.Apply, Force: req.Force, Options: opt})
	if err != nil {
		return nil, err
	}
	v := &RecoverResult{Applied: res.Applied, RunID: req.Run, Snapshot: resultView(req.Run, res.Snapshot), Source: nullable(res.Source), Stage: req.Stage,
		Replay: ReplayView{Baseline: res.Replay.Baseline.String(), Branch: res.Replay.Branch, Node: nullable(res.Node), Worktree: nullable(res.Replay.Worktree)}}
	if res.Source == recovery.SourceCheckout {
		v.Checkout = checkout
	}
	if res.Replay.Worktree != "" && res.Node != "" {
		// A new replay worktree: the run's setup runs in it (docs/contract.md §15).
		s, err := resume.Setup(ctx, store, req.Run, res.Node, "")
		if err != nil {
			return v, err
		}
		return v, setupError(store, req.Run, res.Node, "", s)
	}
	return v, nil
}

// RecoveryListRequest is `recovery list [RUN]`.
type RecoveryListRequest struct {
	// Run lists only this run's snapshots ("": every run's).
	Run string `json:"run,omitempty" help:"${recovery_list_run}"`
	// ForAgent: the result goes to an agent (agenttext.go).
	ForAgent bool
}

// RecoveryListResult is `recovery list --json`: the snapshots, oldest first, then
// those no ledger records.
type RecoveryListResult struct {
	Snapshots []SnapshotView `json:"snapshots"`
}

// RecoveryList lists the recovery snapshots, those whose run's ledger is gone too.
func (o *Ops) RecoveryList(ctx context.Context, req RecoveryListRequest) (*RecoveryListResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	list, err := recovery.List(ctx, o.Reader(), req.Run)
	if err != nil {
		return nil, err
	}
	res := &RecoveryListResult{Snapshots: make([]SnapshotView, 0, len(list))}
	at := o.agentText()
	for _, e := range list {
		v := viewOf(e.RunID, e.SnapshotRec)
		v.Unrecorded = e.Unrecorded
		if req.ForAgent {
			at.snapshot(ctx, &v)
		}
		res.Snapshots = append(res.Snapshots, v)
	}
	return res, nil
}

// RecoveryShowRequest is `recovery show SNAPSHOT`.
type RecoveryShowRequest struct {
	// Snapshot is <id> or <run>/<id>.
	Snapshot string `json:"snapshot" help:"${recovery_show_snapshot}"`
	// ForAgent: the result goes to an agent (agenttext.go).
	ForAgent bool
}

// RecoveryShowResult is what a snapshot holds.
type RecoveryShowResult struct {
	SnapshotView
	Head      string `json:"head"`
	Branch    string `json:"branch,omitempty"`
	Baseline  string `json:"baseline"`
	Tree      string `json:"tree"`
	IndexTree string `json:"index_tree"`
	// Staged are the changes from HEAD to the index.
	Staged []ChangeView `json:"staged"`
	// Unstaged are the changes from the index to the files (untracked files are
	// additions).
	Unstaged []ChangeView `json:"unstaged"`
	// Changes are the changes from the baseline to the files: what the patch holds.
	Changes         []ChangeView            `json:"changes"`
	Unmerged        []recovery.Name         `json:"unmerged"`
	Ignored         []recovery.IgnoredEntry `json:"ignored"`
	AssumeUnchanged []recovery.Name         `json:"assume_unchanged,omitempty"`
	Pending         map[string]string       `json:"pending,omitempty"`
	Embedded        []recovery.Name         `json:"embedded,omitempty"`
	// Manifest is the snapshot's manifest as read back (its source and node say what
	// was snapshotted, whatever the ledger's record says).
	Manifest recovery.Manifest `json:"-"`
}

// ChangeView is one changed path of a snapshot.
type ChangeView struct {
	Status string `json:"status"`
	recovery.Name
}

func changes(list []git.NameStatus) []ChangeView {
	out := make([]ChangeView, 0, len(list))
	for _, c := range list {
		out = append(out, ChangeView{Status: c.Status, Name: recovery.NameOf(c.Path)})
	}
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// RecoveryShow reads a snapshot and what it holds.
func (o *Ops) RecoveryShow(ctx context.Context, req RecoveryShowRequest) (*RecoveryShowResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	d, err := recovery.Show(ctx, o.Reader(), req.Snapshot)
	if err != nil {
		return nil, err
	}
	m := d.Snap.Manifest
	var pending map[string]string
	for name, id := range m.Pending {
		if pending == nil {
			pending = map[string]string{}
		}
		pending[name] = id.String()
	}
	v := &RecoveryShowResult{
		SnapshotView: viewOf(d.RunID, d.SnapshotRec), Head: m.Head.String(), Branch: m.Branch, Baseline: m.Baseline.String(),
		Tree: m.Tree.String(), IndexTree: m.IndexTree.String(), Staged: changes(d.Staged), Unstaged: changes(d.Unstaged), Changes: changes(d.Baseline),
		Unmerged: nonNil(m.Unmerged), Ignored: nonNil(m.Ignored), AssumeUnchanged: m.AssumeUnchanged, Pending: pending, Embedded: m.Embedded,
		Manifest: m,
	}
	v.Unrecorded = d.Unrecorded
	if req.ForAgent {
		o.agentText().snapshot(ctx, &v.SnapshotView)
	}
	return v, nil
}

// RecoveryRestoreRequest is `recovery restore SNAPSHOT --to PATH`.
type RecoveryRestoreRequest struct {
	// Snapshot is <id> or <run>/<id>.
	Snapshot string `json:"snapshot" help:"${recovery_restore_snapshot}"`
	// To is a new (or empty) directory to restore into.
	To string `json:"to" help:"${recovery_restore_to}"`
	// Worktree makes To a git worktree (detached at the snapshot's HEAD) with the
	// staged/unstaged split restored too.
	Worktree bool `json:"worktree,omitempty" help:"${recovery_restore_worktree}"`
}

// RecoveryRestoreResult is what `recovery restore` restored, checked against the
// snapshot. Its fields are in the order of the JSON keys (sorted).
type RecoveryRestoreResult struct {
	// Head is the snapshot's HEAD (null when the worktree had no commit).
	Head     *string `json:"head"`
	Path     string  `json:"path"`
	RunID    string  `json:"run_id"`
	Snapshot string  `json:"snapshot"`
	Worktree bool    `json:"worktree"`
}

// RecoveryRestore writes a snapshot into a new directory, or a new worktree, and
// checks it file by file against the snapshot.
func (o *Ops) RecoveryRestore(ctx context.Context, req RecoveryRestoreRequest) (*RecoveryRestoreResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	e, err := recovery.Find(ctx, o.Reader(), req.Snapshot)
	if err != nil {
		return nil, err
	}
	s, err := recovery.Restore(ctx, o.Repo, e.Commit, req.To, req.Worktree)
	if err != nil {
		return nil, err
	}
	return &RecoveryRestoreResult{Head: nullable(s.Manifest.Head.String()), Path: req.To, RunID: e.RunID, Snapshot: e.ID, Worktree: req.Worktree}, nil
}
