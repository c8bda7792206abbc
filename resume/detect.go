// Package resume brings an interrupted run back to a trustworthy state: it detects
// and selects the run, plans, resets the orphaned work, verifies first and reports
// what the orchestrator must do next (docs/contract.md §6).
package resume

import (
	"context"
	"sort"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
)

// Candidate is an interrupted run, as --detect reports it.
type Candidate struct {
	RunID            string `json:"run_id"`
	Kind             string `json:"kind"`
	Status           string `json:"status"`
	InterruptedStage string `json:"interrupted_stage,omitempty"`
	StageStatus      string `json:"stage_status,omitempty"`
	LastUpdate       string `json:"last_update"`
	AgeSeconds       int64  `json:"age_seconds"`
	// Session is the keyed hash of the session that started the run (ledger.Sealed;
	// a plain id an earlier release stored is not shown: docs/contract.md §5.1).
	Session string `json:"session,omitempty"`
	Intent  string `json:"intent,omitempty"`
	Epoch   int    `json:"epoch"`
	// Own: the run's live driver is the caller's session (a compacted session still
	// driving it); listed first, and resume proceeds on it at once.
	Own    bool   `json:"own,omitempty"`
	Live   bool   `json:"live,omitempty"`
	Holder string `json:"holder,omitempty"`
	// PipelineMode, ManagedBy and ResumeWith say who resumes the run; Handoff: resume
	// hands it back to its owner (ledger.Run.HandsOff), and headless selection
	// passes it over.
	PipelineMode string `json:"pipeline_mode"`
	ManagedBy    string `json:"managed_by,omitempty"`
	ResumeWith   string `json:"resume_with,omitempty"`
	Handoff      bool   `json:"handoff,omitempty"`

	run     *ledger.Run // nil unless detected at gitstate.ListFull
	session string      // the header's session as stored (hash, or a plain id)
	at      time.Time   // the time it is judged newest by (its update, capped: seen.go)
}

// StartedBy reports whether session (presented, compared through key) started the
// run.
func (c *Candidate) StartedBy(key ledger.SessionKey, session string) bool {
	return key.Matches(c.session, session)
}

// Run is the candidate's run as read during detection; nil unless it was read at
// gitstate.ListFull (Select then loads it).
func (c *Candidate) Run() *ledger.Run { return c.run }

// Unreadable is a run that could not be read; detection reports it and goes on.
type Unreadable struct {
	RunID string `json:"run_id"`
	Error string `json:"error"`
	// Err is the error Error spells (for a front end that words it for an agent).
	Err error `json:"-"`
}

// DetectOptions say how Detect reads the runs and whose session asks.
type DetectOptions struct {
	// Depth is how much of every run is read (gitstate.ListDepth). At ListFull each
	// candidate keeps its run (Candidate.Run), which Select then needs not read again.
	// At ListSummaries the candidates are the same, in the same order, with the same
	// fields, but carry no run (`resume --detect`, `--brief`). At ListStates they carry
	// no Kind, Intent or Session either, for half the reads (the post-checkout hook).
	Depth gitstate.ListDepth
	// NoFetch reads the local ledger as it is (gitstate.ListOptions.NoFetch).
	NoFetch bool
	// Session is the caller's session, if known: the runs it still drives are
	// candidates too, and come first (Own).
	Session string
}

// Detect lists the interrupted runs, newest first by (last update, run id), after the
// session's own (opt.Session). A corrupt run is reported as unreadable and never
// hides the others.
func Detect(ctx context.Context, store *gitstate.Store, now time.Time, opt DetectOptions) ([]Candidate, []Unreadable, error) {
	entries, err := store.List(ctx, gitstate.ListOptions{Depth: opt.Depth, NoFetch: opt.NoFetch})
	if err != nil {
		return nil, nil, err
	}
	key, _ := store.SessionKey() // without one, only plain ids (an earlier release's) match
	cands, bad := detect(entries, now, opt.Depth == gitstate.ListFull, key, opt.Session)
	// Newest by this clone's clock: a time from elsewhere ahead of it counts from when
	// this clone first saw it (seen.go).
	if capped := arrivals(ctx, store.Repo, entries, now); len(capped) > 0 {
		for i := range cands {
			if at, ok := capped[cands[i].RunID]; ok {
				cands[i].at = at
			}
		}
		sortNewest(cands)
	}
	return cands, bad, nil
}

// DetectIn is Detect over entries already listed, with no session and no run kept
// (the post-checkout hint reads the listing for more than the candidates).
func DetectIn(entries []gitstate.Entry, now time.Time) ([]Candidate, []Unreadable) {
	return detect(entries, now, false, ledger.SessionKey{}, "")
}

func detect(entries []gitstate.Entry, now time.Time, keepRun bool, key ledger.SessionKey, session string) ([]Candidate, []Unreadable) {
	var cands []Candidate
	var bad []Unreadable
	for _, e := range entries {
		if e.Err != nil {
			bad = append(bad, Unreadable{RunID: e.ID, Error: e.Err.Error(), Err: e.Err})
			continue
		}
		own := e.Run.OwnedBy(key, session, now)
		if !own && !e.Run.Interrupted(now) {
			continue
		}
		c := candidate(e.Run, now)
		c.Own = own
		if !keepRun {
			c.run = nil
		}
		if cands == nil {
			cands = make([]Candidate, 0, len(entries)) // one allocation: pages it does not fill are never touched
		}
		cands = append(cands, c)
	}
	sortNewest(cands)
	return cands, bad
}

func candidate(r *ledger.Run, now time.Time) Candidate {
	c := Candidate{RunID: r.Header.RunID, Kind: r.Header.Kind, Status: r.State.Status, LastUpdate: r.State.UpdatedAt,
		session: r.Header.Session, Intent: r.Header.Intent, Epoch: r.State.Epoch, run: r,
		PipelineMode: r.Header.Mode(), ManagedBy: r.Header.ManagedBy, ResumeWith: r.Header.ResumeWith, Handoff: r.HandsOff()}
	if ledger.Sealed(r.Header.Session) {
		c.Session = r.Header.Session
	}
	if st := r.CurrentStage(); st != nil {
		c.InterruptedStage, c.StageStatus = st.Name, st.Status
	}
	if r.Driven(now) {
		c.Live, c.Holder = true, r.State.Driver.Holder
	}
	if t, err := ledger.ParseStamp(r.State.UpdatedAt); err == nil {
		c.AgeSeconds = int64(now.Sub(t).Seconds())
		c.at = t
	}
	return c
}

// sortNewest sorts the candidates' places and moves each candidate once: a candidate
// is large, and a sort that swapped them was most of detection's own time at a
// thousand runs.
func sortNewest(c []Candidate) {
	order := make([]int, len(c))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool {
		i, j := order[x], order[y]
		if c[i].Own != c[j].Own {
			return c[i].Own
		}
		if a, b := c[i].at, c[j].at; !a.IsZero() && !b.IsZero() {
			if !a.Equal(b) {
				return a.After(b)
			}
		} else if c[i].LastUpdate != c[j].LastUpdate {
			return c[i].LastUpdate > c[j].LastUpdate
		}
		return c[i].RunID > c[j].RunID
	})
	sorted := make([]Candidate, len(c))
	for k, i := range order {
		sorted[k] = c[i]
	}
	copy(c, sorted)
}

// Chooser asks a person to pick among several candidates (a terminal prompt); nil
// means headless, where the newest is taken.
type Chooser func(cands []Candidate) (int, error)

// Select picks the run to resume (docs/contract.md §6.2): the named run; else the newest of the
// session's own runs; else the only candidate; else ask, or headless the newest.
func Select(ctx context.Context, store *gitstate.Store, cands []Candidate, named, session string, now time.Time, choose Chooser) (*ledger.Run, error) {
	if named != "" {
		r, err := store.Load(ctx, named)
		if err != nil {
			return nil, err
		}
		return r, nil
	}
	if len(cands) == 0 {
		return nil, fault.NotFound("no interrupted run to resume").WithHint("`%s` shows the runs", fault.Do("list"))
	}
	cands = ownFirst(cands)
	if session != "" {
		key, _ := store.SessionKey()
		for i := range cands { // the session's own live run first (cands list it first)
			if cands[i].Own {
				return cands[i].load(ctx, store)
			}
		}
		for i := range cands { // cands are newest first
			if cands[i].StartedBy(key, session) {
				return cands[i].load(ctx, store)
			}
		}
	}
	if len(cands) == 1 || choose == nil {
		return cands[0].load(ctx, store)
	}
	i, err := choose(cands)
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= len(cands) {
		return nil, fault.Usage("no run chosen")
	}
	return cands[i].load(ctx, store)
}

// ownFirst leaves out the runs resume would hand back to their owner (another
// engine's, dispatch-only): "the newest interrupted run" is one git-atlas resumes
// itself. When every candidate is such a run, all are kept, so that a resume that
// names none still says who owns it instead of finding nothing.
func ownFirst(cands []Candidate) []Candidate {
	var own []Candidate
	for _, c := range cands {
		if !c.Handoff {
			own = append(own, c)
		}
	}
	if len(own) == 0 {
		return cands
	}
	return own
}

// load returns the candidate's run, reading it when detection did not keep it.
func (c *Candidate) load(ctx context.Context, store *gitstate.Store) (*ledger.Run, error) {
	if c.run != nil {
		return c.run, nil
	}
	return store.Load(ctx, c.RunID)
}
