package ops

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/text"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/recovery"
	"github.com/git-atlas/git-atlas/resume"
	"github.com/git-atlas/git-atlas/trust"
)

// DefaultVerifyTimeout is how long resume lets a verify command run when a request
// names no limit (the command line's --verify-timeout default).
const DefaultVerifyTimeout = 10 * time.Minute

// Driving is the run the caller's session still drives (docs/contract.md §6): Pointer is the one
// line a compacted session needs, NextAction what to do next. (Members in this order:
// the JSON contract had them sorted.)
type Driving struct {
	NextAction *resume.NextAction `json:"next_action"`
	Pointer    string             `json:"pointer"`
}

// ResumeDetectRequest is `resume --detect` and `resume --brief`.
type ResumeDetectRequest struct {
	// Session is the caller's agent session: the run it still drives comes first, as
	// Driving, and (for the brief) its other runs before the rest.
	Session string `json:"session,omitempty" wire:"session" help:"${resume_session}"`
	// Now is the time the runs are judged at (zero: Ops.Clock).
	Now time.Time
	// Most (ResumeBrief only; 0: no limit) keeps the session's own live runs and at
	// most Most others, for a front end that shows no more: the rest are only counted
	// (ResumeBriefResult.Omitted), and nothing of them is read.
	Most int
}

// ResumeDetectResult is the interrupted runs, newest first after the session's own.
type ResumeDetectResult struct {
	Driving        *Driving            `json:"driving,omitempty"`
	ResumableRuns  []resume.Candidate  `json:"resumable_runs"`
	UnreadableRuns []resume.Unreadable `json:"unreadable_runs"`
	// Now is the time the runs were judged at (for a front end's "5m ago").
	Now time.Time `json:"-"`
}

// ResumeBriefResult is the session-start brief: ResumableRuns is empty when there is
// nothing to say.
type ResumeBriefResult struct {
	Driving       *Driving           `json:"driving,omitempty"`
	ResumableRuns []resume.Candidate `json:"resumable_runs"`
	Now           time.Time          `json:"-"`
	// Omitted is how many interrupted runs ResumeDetectRequest.Most left out.
	Omitted int `json:"-"`
}

// ResumeDetect lists the interrupted runs, changing nothing. It reads summaries (the
// summary cache, else the tips' summary lines, else the documents), and in full only
// the run the session drives, for its pointer. A run that cannot be read is reported
// in UnreadableRuns and hides no other.
func (o *Ops) ResumeDetect(ctx context.Context, req ResumeDetectRequest) (*ResumeDetectResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	now := o.orNow(req.Now)
	store := o.Reader()
	cands, bad, err := resume.Detect(ctx, store, now, resume.DetectOptions{Depth: gitstate.ListSummaries, Session: req.Session})
	if err != nil {
		return nil, err
	}
	at := o.agentText()
	forAgents(ctx, at.intents, cands)
	for i := range bad {
		bad[i].Error = AgentError(bad[i].Err).Error() // a document's value it quotes withheld
	}
	return &ResumeDetectResult{
		Driving:        pointer(ctx, store, at, cands, now, req.Session, o.Spelling),
		ResumableRuns:  nonNil(cands),
		UnreadableRuns: nonNil(bad),
		Now:            now,
	}, nil
}

// ResumeBrief is the few lines of an agent's session start: the interrupted runs,
// the session's own first. It never fails for what the ledger holds: a ledger that
// cannot be listed is nothing to say (the error is returned for a front end that
// wants it; the result is then empty).
func (o *Ops) ResumeBrief(ctx context.Context, req ResumeDetectRequest) (*ResumeBriefResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	now := o.orNow(req.Now)
	res := &ResumeBriefResult{ResumableRuns: []resume.Candidate{}, Now: now}
	store := o.Reader()
	cands, _, err := resume.Detect(ctx, store, now, resume.DetectOptions{Depth: gitstate.ListSummaries, Session: req.Session})
	if err != nil || len(cands) == 0 {
		return res, err
	}
	if req.Session != "" { // the session's own runs first
		key, _ := store.SessionKey()
		var own, other []resume.Candidate
		for _, c := range cands {
			if c.Own || c.StartedBy(key, req.Session) {
				own = append(own, c)
			} else {
				other = append(other, c)
			}
		}
		cands = append(own, other...)
	}
	if req.Most > 0 { // the live runs the session drives, and Most others
		var kept []resume.Candidate
		others := 0
		for _, c := range cands {
			switch {
			case c.Own:
				kept = append(kept, c)
			case others < req.Most:
				kept = append(kept, c)
				others++
			}
		}
		res.Omitted = len(cands) - len(kept)
		cands = kept
	}
	at := o.agentText()
	forAgents(ctx, at.intents, cands)
	res.Driving = pointer(ctx, store, at, cands, now, req.Session, o.Spelling)
	res.ResumableRuns = cands
	return res, nil
}

// forAgents keeps out of the candidates the free text of runs written elsewhere (docs/contract.md
// §6, §11 invariant 11): what detect and the brief give (an agent reads both, at
// session start, through MCP) carries a run's intent only when this clone started
// the run or a person trusted it here (trust.Intents), and of the other values only
// names git-atlas would write (ids, kinds, stages, statuses, holders: a value that is
// not a valid name is dropped).
func forAgents(ctx context.Context, intents *trust.Intents, cands []resume.Candidate) {
	name := func(s string) string {
		if s == "" || ledger.ValidName("value", s) != nil {
			return ""
		}
		return s
	}
	for i := range cands {
		c := &cands[i]
		if !intents.Trusts(ctx, c.RunID, c.Intent) { // the one decision (agenttext.go)
			c.ManagedBy, c.ResumeWith = "", ""
		} else { // of the header's text, what the record proves (agentText.header)
			h, _ := intents.Header(ctx, c.RunID, &ledger.Header{RunID: c.RunID, ManagedBy: c.ManagedBy, ResumeWith: c.ResumeWith})
			c.ManagedBy, c.ResumeWith = h.ManagedBy, h.ResumeWith
		}
		c.Intent = intents.Shown(ctx, c.RunID, c.Intent)
		c.Kind, c.InterruptedStage, c.StageStatus, c.Holder = name(c.Kind), name(c.InterruptedStage), name(c.StageStatus), name(c.Holder)
	}
}

// pointer is the first line a compacted session needs (docs/contract.md §6): the run it still
// drives, where it stands and what to do next; nil when it drives none. It reads the
// one run in full (the candidates are summaries). Every value is ledger text, shown
// on one line (text.Ledger); the intent only when trusted here, and the next action
// and the places to work as a resume plan gives them to an agent (agentText.plan).
func pointer(ctx context.Context, store *gitstate.Store, at agentText, cands []resume.Candidate, now time.Time, session string, sp fault.Spelling) *Driving {
	for _, c := range cands {
		if !c.Own {
			continue
		}
		r, err := store.Load(ctx, c.RunID)
		if err != nil {
			return nil
		}
		// The session drives the run (c.Own): the commands carry its driver's holder,
		// so they run as printed for it (docs/contract.md §11.13).
		key, _ := store.SessionKey()
		asker := resume.Asker{Session: session, Key: key, Spelling: sp}
		if r.State.Driver != nil {
			asker.Holder = r.State.Driver.Holder
		}
		p := &resume.Plan{Reason: r.State.Reason, TakenOver: r.State.TakenOver, NextAction: resume.NextFor(r, now, resume.Host{}, asker)}
		at.plan(ctx, r, p)
		next := p.NextAction
		line := "git-atlas: you are driving run " + text.Ledger(r.Header.RunID, text.CellMax)
		if intent := at.intents.Shown(ctx, r.Header.RunID, r.Header.Intent); intent != "" {
			line += " (" + text.Ledger(intent, text.BriefMax) + ")"
		}
		if st := r.CurrentStage(); st != nil {
			line += fmt.Sprintf(", stage %s (%s), attempt %d", text.Ledger(st.Name, text.CellMax), text.Ledger(st.Status, text.CellMax), len(st.Attempts))
		}
		if places := workPlaces(r); len(places) > 0 {
			// Where to work: never the user's checkout (docs/contract.md §15).
			var paths []string
			for _, w := range places {
				if at.vouched(ctx, r) || at.placedFor(ctx, r, r.Header.RunID, w.Node, w.Path) {
					paths = append(paths, text.Ledger(w.Path, 0))
				}
			}
			if len(paths) > 0 {
				line += "; work in " + strings.Join(paths, ", ")
			}
		}
		line += "; next: " + next.Action
		if next.Command != "" {
			line += " `" + text.Ledger(next.Command, 0) + "`"
		} else if next.Template != "" {
			line += " `" + text.Ledger(next.Template, 0) + "`"
		} else if next.Reason != "" {
			line += " (" + text.Ledger(next.Reason, 0) + ")"
		}
		return &Driving{Pointer: line, NextAction: &next}
	}
	return nil
}

// ResumeRequest is `resume [RUN]` and `resume --plan [RUN]` (docs/contract.md §6).
type ResumeRequest struct {
	// RunID is the run to resume; "" selects one (the session's own, else the only
	// interrupted run, else Choose, else the newest).
	RunID string `json:"run,omitempty" help:"${resume_run}"`
	// Session is the caller's agent session (its live run is its own: resumed at once).
	Session string `json:"session,omitempty" wire:"session" help:"${resume_session}"`
	// TakeOver resumes a run another live driver holds; Holder drives the run from the
	// resume on, for TTL (zero: ledger.DefaultDriverTTL).
	TakeOver bool          `json:"take_over,omitempty" help:"${resume_take_over}"`
	Holder   string        `json:"holder,omitempty" help:"${resume_holder}"`
	TTL      time.Duration `json:"ttl,omitempty" help:"${resume_ttl}"`
	// NoVerify skips the interrupted stage's verify; VerifyTimeout limits it (zero:
	// DefaultVerifyTimeout).
	NoVerify      bool          `json:"no_verify,omitempty" help:"${resume_no_verify}"`
	VerifyTimeout time.Duration `json:"verify_timeout,omitempty" help:"${resume_verify_timeout}"`
	// OnVerifyFail is what to do when verify fails: fail, redispatch, replay, stop, or
	// "": ask through Prompt, else fail.
	OnVerifyFail string `json:"on_verify_fail,omitempty" enum:"fail,redispatch,replay,stop" help:"${resume_on_verify_fail}"`
	// Prompt is the person at a terminal, when there is one (nil: headless, nothing is
	// ever asked).
	Prompt *Prompt
	// Warn is told what a person should know that does not stop the resume (a run that
	// could not be read); nil says nothing.
	Warn func(format string, args ...any)
	// Now is the time the runs are judged at (zero: Ops.Clock).
	Now time.Time
	// ForAgent: the result goes to an agent (agenttext.go).
	ForAgent bool
	// Snapshot is --include-ignored with its cap, for the snapshots resets take; the
	// plan names the ignored files a reset would delete.
	Snapshot SnapshotOptions `wire:"inline"`
}

// Prompt is how an operation asks the person at a terminal, mid-operation, what only
// they can decide (which run; what to do after a failed verify). A front end without
// a person passes none.
type Prompt struct {
	// Choose picks one of several interrupted runs.
	Choose resume.Chooser
	// Ask puts a question with its choices and returns the choice.
	Ask func(question string, choices []string) (string, error)
}

var verifyFailChoices = map[string]bool{"": true, "fail": true, "redispatch": true, "replay": true, "stop": true}

// Check fills resume's defaults (the lease's TTL, the verify time limit, the snapshot
// options) and refuses what the ledger or resume could not act on.
func (req *ResumeRequest) Check() error {
	if req.RunID != "" {
		if err := ledger.ValidName("run", req.RunID); err != nil {
			return err
		}
	}
	if req.TTL < 0 || req.VerifyTimeout < 0 {
		return fault.Usage("the lease and verify time limits must be positive")
	}
	if req.TTL == 0 {
		req.TTL = ledger.DefaultDriverTTL
	}
	if err := checkTimeout("verify_timeout", &req.VerifyTimeout); err != nil {
		return err
	}
	if !verifyFailChoices[req.OnVerifyFail] {
		return fault.Named(fault.ErrUsage, "unknown verify-failure choice %q", req.OnVerifyFail).WithHint("one of: fail, redispatch, replay, stop")
	}
	return req.Snapshot.Check()
}

// selectRun returns the store resume writes through and the run the request names or
// selects.
func (o *Ops) selectRun(ctx context.Context, req *ResumeRequest, now time.Time) (*gitstate.Store, *ledger.Run, error) {
	// resume decides for itself whether a live run is the caller's (Options.Owns).
	store := o.Store(ledger.Writer{Session: req.Session, TakeOver: req.TakeOver, Role: ledger.RoleResume})
	var cands []resume.Candidate
	if req.RunID == "" { // a named run needs no scan of all the others
		var bad []resume.Unreadable
		var err error
		if cands, bad, err = resume.Detect(ctx, store, now, resume.DetectOptions{Depth: gitstate.ListFull, Session: req.Session}); err != nil {
			return nil, nil, err
		}
		if req.Warn != nil {
			for _, b := range bad {
				req.Warn("%s", b.Error)
			}
		}
	}
	var choose resume.Chooser
	if req.Prompt != nil {
		choose = req.Prompt.Choose
	}
	r, err := resume.Select(ctx, store, cands, req.RunID, req.Session, now, choose)
	return store, r, err
}

// ResumePlan is what Resume would do to the run, changing nothing.
func (o *Ops) ResumePlan(ctx context.Context, req ResumeRequest) (*resume.Plan, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	now := o.orNow(req.Now)
	store, r, err := o.selectRun(ctx, &req, now)
	if err != nil {
		return nil, err
	}
	key, _ := store.SessionKey() // without one, only an earlier release's plain ids match
	p, err := resume.PlanFor(ctx, o.Repo, r, now, resume.Options{NoVerify: req.NoVerify, Session: req.Session, Key: key, Holder: req.Holder, Spelling: o.Spelling,
		Ignored: o.snapshotOptions(req.Snapshot, "", "")})
	if err == nil && req.ForAgent {
		o.agentText().plan(ctx, r, p)
	}
	return p, err
}

// Resume resumes the run (docs/contract.md §6): fences the stale driver, snapshots every dirty
// worktree it resets, verifies first and reports what to do next. A result may come
// with an error (the verify failed, the run was stopped): it says what was done.
func (o *Ops) Resume(ctx context.Context, req ResumeRequest) (*resume.Result, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	store, r, err := o.selectRun(ctx, &req, o.orNow(req.Now))
	if err != nil {
		return nil, err
	}
	timeout, ttl := req.VerifyTimeout, req.TTL // Check filled their defaults
	opt := resume.Options{
		NoVerify: req.NoVerify, VerifyTimeout: timeout, OnVerifyFail: req.OnVerifyFail,
		Headless: req.Prompt == nil, Warn: req.Warn, Ops: o.resumeOps(ctx, store, req.Snapshot),
		Session: req.Session, TakeOver: req.TakeOver, Holder: req.Holder, TTL: ttl, Ignored: o.snapshotOptions(req.Snapshot, "", ""),
		Spelling: o.Spelling,
	}
	if req.Session != "" {
		if opt.Key, err = store.SessionKey(); err != nil {
			return nil, err // a session is never written in the clear
		}
	}
	if req.Prompt != nil {
		opt.Ask = req.Prompt.Ask
	}
	if opt.Warn == nil {
		opt.Warn = func(string, ...any) {}
	}
	res, err := resume.Apply(ctx, o.Repo, store, r.Header.RunID, opt)
	if err == nil && res != nil {
		o.setupRecreated(ctx, store, r.Header.RunID, res, opt)
	}
	if res != nil && req.ForAgent {
		o.agentText().plan(ctx, r, res.Plan)
	}
	if err != nil || res == nil {
		return res, err
	}
	return res, nil
}

// setupRecreated runs the run's setup in the worktrees resume made anew, as in any
// new worktree (docs/contract.md §15). One that fails leaves its worktree not_ready:
// said in a warning, and resume's own next_action becomes the retry (`setup`, with
// `git atlas worktree setup RUN NODE`), derived again from the run as the setup left
// it.
func (o *Ops) setupRecreated(ctx context.Context, store *gitstate.Store, run string, res *resume.Result, opt resume.Options) {
	failed := false
	for _, node := range res.RecreatedWorktrees {
		s, err := resume.Setup(ctx, store, run, node, "")
		if err == nil {
			err = setupError(store, run, node, "", s)
		}
		if err != nil {
			failed = true
			opt.Warn("%v", err)
		}
	}
	if !failed || res.Plan == nil {
		return
	}
	r, err := store.Load(ctx, run)
	if err != nil {
		opt.Warn("%v", err)
		return
	}
	if n := resume.NextFor(r, store.Now(), opt.Host, resume.Asker{Holder: opt.Holder, Session: opt.Session, Key: opt.Key, Spelling: opt.Spelling}); n.Action == resume.NextSetup {
		res.NextAction = n
	}
}

// resumeOps wires resume to the worktree and recovery operations.
func (o *Ops) resumeOps(ctx context.Context, store *gitstate.Store, snap SnapshotOptions) resume.Ops {
	// The user's checkout, even when resume runs inside a managed worktree.
	checkout, err := recovery.UserCheckout(ctx, store, o.Repo.TopLevel)
	if err != nil {
		checkout = ""
	}
	return resume.DefaultOps(store, checkout, o.snapshotOptions(snap, "", ""))
}
