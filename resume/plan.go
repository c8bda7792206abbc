package resume

import (
	"context"
	"time"

	"github.com/git-atlas/git-atlas/baseline"
	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/recovery"
	"github.com/git-atlas/git-atlas/trust"
)

// Plan is what `resume --plan` prints (docs/contract.md §6.3); it changes nothing.
type Plan struct {
	RunID  string `json:"run_id"`
	Kind   string `json:"kind"`
	Status string `json:"status"`
	// Reason is why the run is where it is (a stop's reason).
	Reason string `json:"reason,omitempty"`
	Live   bool   `json:"live"`
	Holder string `json:"holder,omitempty"`
	// Driver is the run's live driver lease (holder, session, expires_at), if any.
	Driver *ledger.Lease `json:"driver,omitempty"`
	// OwnSession: the live driver's session is the caller's (a compacted session):
	// resume proceeds on it at once.
	OwnSession       bool          `json:"own_session,omitempty"`
	Epoch            int           `json:"epoch"`
	ConfigDrift      Drift         `json:"config_drift"`
	Baseline         BaselineState `json:"baseline"`
	InterruptedStage *StageInfo    `json:"interrupted_stage"`
	CompletedStages  []string      `json:"completed_stages"`
	SkippedStages    []string      `json:"skipped_stages"`
	RemainingStages  []string      `json:"remaining_stages"`
	Frontier         *Frontier     `json:"frontier,omitempty"`
	// Verdict is a graph run's verdict on its criteria (none without criteria).
	Verdict   *ledger.Verdict `json:"verdict,omitempty"`
	Worktrees []WorktreePlan  `json:"worktrees"`
	// Commands are the commands the run carries and whether each is trusted here
	// (docs/contract.md §10): an untrusted one is never run.
	Commands []trust.Command `json:"commands"`
	// Checkout is the user's checkout when the interrupted stage ran there (it has no
	// worktree): whether it is dirty now, and the replay of the stage's work from its
	// attempt's own baseline that the plan offers (the checkout is never touched).
	Checkout   *CheckoutPlan `json:"checkout,omitempty"`
	NextAction NextAction    `json:"next_action"`
	// PipelineMode, ManagedBy and ResumeWith say who resumes the run (the header's);
	// TakenOver who took it over here from its owner (`resume --take-over`).
	PipelineMode string `json:"pipeline_mode"`
	ManagedBy    string `json:"managed_by,omitempty"`
	ResumeWith   string `json:"resume_with,omitempty"`
	TakenOver    string `json:"taken_over,omitempty"`
}

// CheckoutPlan is the user's checkout a stage ran in, as a resume plan sees it.
type CheckoutPlan struct {
	Path  string `json:"path"`
	Dirty bool   `json:"dirty"`
	Head  string `json:"head"`
	// Baseline is the attempt's baseline: the checkout's HEAD when the stage was
	// dispatched, which a replay starts from (not the run's baseline).
	Baseline string `json:"baseline"`
	Replay   string `json:"replay,omitempty"`
}

// Drift compares the frozen config hash with the files as they are now.
type Drift struct {
	Stored  string `json:"stored"`
	Current string `json:"current"`
	Match   bool   `json:"match"`
}

// BaselineState says whether the run's baseline commit is still there.
type BaselineState struct {
	SHA     string `json:"sha"`
	Present bool   `json:"present"`
}

// StageInfo describes the interrupted stage.
type StageInfo struct {
	Name          string `json:"name"`
	Status        string `json:"status"`
	HasVerify     bool   `json:"has_verify"`
	VerifyCommand string `json:"verify_command,omitempty"`
	VerifySafe    bool   `json:"verify_safe"`
	// VerifyTrusted: this repository wrote the verify command or a person trusted it
	// here (`git atlas trust RUN`); an untrusted verify is not run.
	VerifyTrusted bool   `json:"verify_trusted"`
	HasGate       bool   `json:"has_gate"`
	Gate          string `json:"gate,omitempty"`
	Baseline      string `json:"baseline"`
	Attempts      int    `json:"attempts"`
	BudgetLeft    int    `json:"budget_left"`
	Worktree      string `json:"worktree,omitempty"`
	// Attempt is the stage's latest attempt as the ledger holds it (holder, session,
	// thread_id, pid, host, heartbeat_at, lease, baseline).
	Attempt *ledger.Attempt `json:"attempt,omitempty"`
	// WallBudget and IdleBudget are the stage's (docs/contract.md §5.2); WallLeft and IdleLeft what
	// is left of them for the open attempt ("0s" when spent); WallExceeded why it is
	// refused heartbeats.
	WallBudget   string `json:"wall_budget,omitempty"`
	IdleBudget   string `json:"idle_budget,omitempty"`
	WallLeft     string `json:"wall_left,omitempty"`
	IdleLeft     string `json:"idle_left,omitempty"`
	WallExceeded string `json:"wall_exceeded,omitempty"`
	// VerifyIn says where verify-first runs the verify command: "worktree" (the
	// stage's own), "checkout_copy" (a temporary worktree made from a read-only
	// snapshot of the user's checkout, removed after: the checkout is never touched),
	// or "none" (the stage's worktree is missing: nothing to verify). Empty without a
	// verify command.
	VerifyIn string `json:"verify_in,omitempty"`
}

// Where verify runs (StageInfo.VerifyIn).
const (
	VerifyInWorktree     = "worktree"
	VerifyInCheckoutCopy = "checkout_copy"
	VerifyInNone         = "none"
)

// Frontier is a graph run's job frontier after the reset.
type Frontier struct {
	ResetJobs    []string `json:"reset_jobs"`
	ReadyJobs    []string `json:"ready_jobs"`
	GasRemaining int      `json:"gas_remaining"`
	// VerifyOwed are jobs whose ok receipt arrived but whose verify never finished:
	// resume runs their verify in their worktree (unless --no-verify).
	VerifyOwed []string `json:"verify_owed"`
}

// Worktree actions in a plan.
const (
	ActionKeep     = "keep"     // trusted: left as it is
	ActionSnapshot = "snapshot" // untrusted with work in it: snapshot, remove, recreate clean
	ActionRecreate = "recreate" // missing or HEAD moved with nothing to lose: recreate clean
)

// WorktreePlan is one managed worktree and what the reset does to it.
type WorktreePlan struct {
	Node   string `json:"node"`
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	Dirty  bool   `json:"dirty"`
	Head   string `json:"head"`
	Action string `json:"action"`
	Reason string `json:"reason,omitempty"`
	// Foreign: the record names a worktree git-atlas does not manage (outside its
	// managed root, adopted at import, on a branch not the run's, or whose .git file
	// and git's registration disagree): the reset leaves it exactly as it is
	// (worktrees.Own).
	Foreign bool `json:"foreign,omitempty"`
	// IgnoredToDelete are the ignored files and wholly ignored directories the reset
	// would delete without their bytes in its snapshot (all of them without
	// --include-ignored), by name, count and size (recovery.IgnoredToDelete).
	IgnoredToDelete []recovery.IgnoredEntry `json:"ignored_to_delete,omitempty"`
	// Busy: another process is making this checkout now.
	Busy bool `json:"-"`
	// Setup is the run's setup as it last ran in this worktree (docs/contract.md §15).
	Setup *ledger.SetupRec `json:"setup,omitempty"`
}

// makePlan reads everything resume needs and decides, without writing anything.
// verify says whether verify-first will run (not --no-verify): the interrupted stage's
// worktree is then left as it is for verify to judge, instead of being reset. host is
// where an attempt's agent may still run.
// ignored, when not nil, has the plan name the ignored files each reset would delete
// (PlanFor); Apply passes nil.
func makePlan(ctx context.Context, repo *git.Repository, r *ledger.Run, now time.Time, verify bool, host Host, asker Asker, ignored *recovery.Options) (*Plan, error) {
	p := &Plan{
		RunID: r.Header.RunID, Kind: r.Header.Kind, Status: r.State.Status, Reason: r.State.Reason, Live: r.Driven(now), Epoch: r.State.Epoch,
		Baseline:        BaselineState{SHA: r.Header.Baseline.String(), Present: baseline.Present(ctx, repo, r.Header.Baseline.String())},
		CompletedStages: []string{}, SkippedStages: []string{}, RemainingStages: []string{}, Worktrees: []WorktreePlan{},
		PipelineMode: r.Header.Mode(), ManagedBy: r.Header.ManagedBy, ResumeWith: r.Header.ResumeWith, TakenOver: r.State.TakenOver,
	}
	if p.Live {
		p.Holder = r.State.Driver.Holder
		d := *r.State.Driver
		d.Extra = nil
		p.Driver = &d
	}
	current, _ := baseline.ConfigHash(repo.TopLevel, r.Header.ConfigFiles)
	p.ConfigDrift = Drift{Stored: r.Header.ConfigHash, Current: current, Match: current == r.Header.ConfigHash}

	trusted, err := trust.Load(ctx, repo, r.Header.RunID)
	if err != nil {
		return nil, err
	}
	p.Commands = trust.Commands(r)
	for i := range p.Commands {
		p.Commands[i].Trusted = trusted.Trusts(p.Commands[i].Command)
	}
	if p.Commands == nil {
		p.Commands = []trust.Command{}
	}

	cur := r.CurrentStage()
	for _, st := range r.State.Stages {
		switch {
		case st.Status == ledger.StageCompleted:
			p.CompletedStages = append(p.CompletedStages, st.Name)
		case st.Status == ledger.StageSkipped:
			p.SkippedStages = append(p.SkippedStages, st.Name)
		case cur != nil && st.Name != cur.Name:
			p.RemainingStages = append(p.RemainingStages, st.Name)
		}
	}
	if cur != nil {
		def, st, _ := r.Stage(cur.Name)
		info := &StageInfo{Name: st.Name, Status: st.Status, HasVerify: def.Verify != "", VerifyCommand: def.Verify,
			VerifySafe: def.VerifySafe, VerifyTrusted: def.Verify != "" && trusted.Trusts(def.Verify), HasGate: def.Gate != "", Gate: def.Gate, Baseline: stageBaseline(r, st),
			Attempts: len(st.Attempts), BudgetLeft: ledger.BudgetLeft(def, st)}
		if wt := r.State.Worktree(st.Name); wt != nil {
			info.Worktree = wt.Path
		}
		if info.HasVerify {
			info.VerifyIn = verifyIn(r, st.Name)
		}
		if n := len(st.Attempts); n > 0 {
			a := st.Attempts[n-1]
			a.Extra = nil
			info.Attempt = &a
		}
		info.WallBudget, info.IdleBudget = def.WallBudget, def.IdleBudget
		if a := ledger.OpenAttempt(st); a != nil {
			info.WallLeft, info.IdleLeft = ledger.TimeLeft(def, a, now)
			info.WallExceeded = ledger.WallExceeded(def, st, now)
		}
		p.InterruptedStage = info
		if r.State.Worktree(st.Name) == nil && len(st.Attempts) > 0 && !ledger.StageTerminal(st.Status) {
			p.Checkout = checkoutPlan(ctx, repo, r, st, asker.name(r, now), asker.Spelling)
		}
	}
	if r.Header.Kind == ledger.KindGraph {
		p.Frontier = frontier(r)
		p.Verdict = ledger.RunVerdict(&r.Header, &r.State)
	}
	keep := ""
	if st := p.InterruptedStage; verify && st != nil && inFlight(st.Status) && st.HasVerify && st.VerifySafe {
		keep = st.Name
	}
	wts, err := planWorktrees(ctx, repo, r, keep, ignored)
	if err != nil {
		return nil, err
	}
	p.Worktrees = wts
	if p.Live {
		p.NextAction = NextFor(r, now, host, asker)
	} else {
		p.NextAction = NextFor(planView(r), now, host, asker)
	}
	if r.HandsOff() {
		p.NextAction = Handoff(r, trusted)
		p.NextAction.Spell(asker.Spelling)
	}
	return p, nil
}

// checkoutPlan reads the user's checkout a stage ran in, read-only (status with
// --no-optional-locks: not even the index is refreshed). nil when there is none here.
func checkoutPlan(ctx context.Context, repo *git.Repository, r *ledger.Run, st *ledger.StageState, who string, sp fault.Spelling) *CheckoutPlan {
	path, err := recovery.UserCheckout(ctx, gitstate.New(repo), repo.TopLevel)
	if err != nil || path == "" {
		return nil
	}
	wt := repo.Worktree(path)
	dirty, err := wt.Dirty(ctx)
	if err != nil {
		return nil
	}
	head, _, _ := wt.Head(ctx)
	c := &CheckoutPlan{Path: path, Dirty: dirty, Head: head, Baseline: stageBaseline(r, st)}
	if dirty || head != c.Baseline {
		step := fault.Do("recover", "run", r.Header.RunID, "stage", st.Name, "worktree", true, "apply", true)
		if who != "" { // recover is a run write: it carries the asker's holder (docs/contract.md §11.13)
			step = step.With("holder", who)
		}
		if sp.Step == nil {
			sp = plainSpelling
		}
		c.Replay = sp.Step(step)
	}
	return c
}

// PlanFor is what Apply with opt would do to the run, changing nothing (of opt, it
// reads NoVerify, Holder, Session and Host): a live run the caller drives (its
// session, a compacted one, or its holder) is its own, planned as resume would go on
// with it at once. The next action's commands are the caller's (docs/contract.md §11.13).
func PlanFor(ctx context.Context, repo *git.Repository, r *ledger.Run, now time.Time, opt Options) (*Plan, error) {
	p, err := makePlan(ctx, repo, r, now, !opt.NoVerify, opt.Host, opt.asker(), &opt.Ignored)
	if err != nil || !p.Live || !opt.Owns(r, now) || r.HandsOff() {
		return p, err
	}
	p.Live, p.OwnSession = false, true
	asker := opt.asker()
	if asker.Holder == "" {
		asker.Holder = r.State.Driver.Holder // resume keeps the driving session's lease
	}
	p.NextAction = NextFor(planView(r), now, opt.Host, asker)
	return p, nil
}

// verifyIn is where verify-first would run the stage's verify: its worktree, or a
// copy of the user's checkout when it has none.
func verifyIn(r *ledger.Run, stage string) string {
	wt := r.State.Worktree(stage)
	switch {
	case wt == nil:
		return VerifyInCheckoutCopy
	case exists(wt.Path):
		return VerifyInWorktree
	}
	return VerifyInNone
}

// stageBaseline is where a stage's work started: its last attempt's baseline, else
// the run's.
func stageBaseline(r *ledger.Run, st *ledger.StageState) string {
	if n := len(st.Attempts); n > 0 && !st.Attempts[n-1].Baseline.IsZero() {
		return st.Attempts[n-1].Baseline.String()
	}
	return r.Header.Baseline.String()
}
