package ops

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/recovery"
	"github.com/git-atlas/git-atlas/resume"
	"github.com/git-atlas/git-atlas/trust"
	"github.com/git-atlas/git-atlas/worktrees"
)

// Agent-facing text (docs/contract.md §6, §11 invariant 11): what reaches an agent's
// context (the MCP tools, the session-start hook, resume --detect and --brief)
// carries the free text of a run (its intent, criteria, reasons, notes, event data,
// the commands it carries, members this release does not know) only when the run was
// started in this clone or a person trusted it here. One decision says so for every
// path, agentText.trusts (trust.Intents.Trusts); a run it does not trust reaches an
// agent as what git-atlas composes: ids, kinds, statuses, stages, jobs, epochs, times
// and object ids, with text_withheld set. A person on the command line still reads
// everything (escaped on a terminal).
//
// A run started here is not a run whose every word was written here: a clone that
// pulled it can add events (a note, a reason) and jobs (a verify, a scope) and push
// them back. Of a run a person did not trust here (agentText.vouched,
// trust.Intents.Vouched), an event's data and a job's text reach an agent only when
// the item's MAC verifies with this clone's key (agentText.ownEvent, ownJob; gitstate's
// textmac.go), and a command it carries only when trusted here. The free text its
// state holds (the run's and each stage's reason, an attempt's thread, agent and host,
// a snapshot record's reason and source, a worktree's setup command and output) is
// copied there from the event that set it, and the state document itself carries no
// MAC: such a value reaches an agent only when it is git-atlas's own wording or a
// string in the data of an event this clone wrote, one no undo took back for what undo
// restores (agentText.ownText, ownKept: one walk of the run's log per run and result,
// and only for a run started here that no person vouched for).
//
// Nor is its header (run.json) what this clone wrote: another clone can rewrite it,
// keeping the intent. Of a run this clone trusts, each member of the header's free
// text (criteria, owner, resume command, verify, scope, setup, stage definitions,
// members this release does not know) reaches an agent only when the run's trust
// record proves it as it now stands (agentText.header, trust.Intents.Header): this
// clone recorded it at start, or a person at `trust RUN`; vouched runs too.

// A holder is a name a writer gives (--holder is free text) and it reaches an agent
// from every run, its own included: a holder that is not a name git-atlas would
// write (ledger.ValidName: no spaces, quotes, newlines or long text) is withheld
// from an agent's results (badHolder) and, where an error to an agent quotes it,
// replaced by anotherHolder (AgentError).

// anotherHolder stands, in a sentence for an agent, for a holder it may not read.
const anotherHolder = "another holder"

// badHolder reports whether h, a holder from a ledger, may not reach an agent.
func badHolder(h string) bool { return h != "" && ledger.ValidName("value", h) != nil }

// AgentError is err as an agent reads it: each holder it quotes from a ledger
// (fault.Error.Quoted) that is not a name replaced by "another holder"; the kind
// stays, and the wording for a person is err's.
func AgentError(err error) error { return fault.Redact(err, badHolder, anotherHolder) }

// viewHolders withholds from v the holder of its driver when it is not a name.
func viewHolders(v *RunView) {
	if !badHolder(v.Holder) && (v.Driver == nil || !badHolder(v.Driver.Holder)) {
		return
	}
	v.Holder = ""
	if v.Driver != nil {
		d := *v.Driver
		d.Holder = ""
		v.Driver = &d
	}
	v.TextWithheld = true
}

// stateHolders withholds from s the holders that are not names (its driver's, its
// attempts', its jobs'; s's slices are copied first) and reports whether it withheld
// any.
func stateHolders(s *ledger.State) bool {
	withheld := false
	if d := s.Driver; d != nil && badHolder(d.Holder) {
		c := *d
		c.Holder, withheld = "", true
		s.Driver = &c
	}
	s.Stages = slices.Clone(s.Stages)
	for i := range s.Stages {
		st := &s.Stages[i]
		st.Attempts = slices.Clone(st.Attempts)
		for k := range st.Attempts {
			if at := &st.Attempts[k]; badHolder(at.Holder) {
				at.Holder, withheld = "", true
			}
		}
	}
	s.Jobs = slices.Clone(s.Jobs)
	withheld = jobHolders(pointers(s.Jobs)) || withheld
	return withheld
}

// jobHolders withholds from jobs (copies the caller owns) the holders that are not
// names, and reports whether it withheld any.
func jobHolders(jobs []*ledger.Job) bool {
	withheld := false
	for _, j := range jobs {
		if j != nil && badHolder(j.Holder) {
			j.Holder, withheld = "", true
		}
	}
	return withheld
}

// planHolders withholds from a plan of r the holders r's state records that are not
// names: the driver's, the interrupted attempt's, and wherever next_action quotes
// one (its reason says "another holder"; a command whose step carries one as its
// holder becomes a template, the <holder> placeholder in its place, spelled by sp).
func planHolders(r *ledger.Run, p *resume.Plan, sp fault.Spelling) {
	var bad []string
	add := func(h string) {
		if badHolder(h) {
			bad = append(bad, h)
		}
	}
	if d := r.State.Driver; d != nil {
		add(d.Holder)
	}
	for _, st := range r.State.Stages {
		for _, at := range st.Attempts {
			add(at.Holder)
		}
	}
	for _, j := range r.State.Jobs {
		add(j.Holder)
	}
	add(p.Holder)
	if len(bad) == 0 {
		return
	}
	if badHolder(p.Holder) {
		p.Holder = ""
	}
	if d := p.Driver; d != nil && badHolder(d.Holder) {
		c := *d
		c.Holder = ""
		p.Driver = &c
	}
	if st := p.InterruptedStage; st != nil && st.Attempt != nil && badHolder(st.Attempt.Holder) {
		at := *st.Attempt
		at.Holder = ""
		st.Attempt = &at
	}
	n := &p.NextAction
	if n.Step.Op != "" && slices.ContainsFunc(n.Step.Fields, func(f fault.Field) bool { v, _ := f.Value.(string); return slices.Contains(bad, v) }) {
		step := fault.Step{Op: n.Step.Op}
		for _, f := range n.Step.Fields {
			if v, _ := f.Value.(string); f.Name == "holder" && slices.Contains(bad, v) {
				f.Value = fault.Placeholder("<holder>")
			}
			step.Fields = append(step.Fields, f)
		}
		m := resume.NextAction{Step: step}
		m.Spell(sp)
		n.Step, n.Command, n.Template = step, "", m.Command+m.Template
	}
	for _, h := range bad {
		n.Reason = strings.ReplaceAll(n.Reason, h, anotherHolder)
		if strings.Contains(n.Command+n.Template, h) { // not the holder field
			n.Step, n.Command, n.Template = fault.Step{}, "", ""
		}
		if strings.Contains(n.AgentCommand, h) {
			n.AgentCommand = ""
		}
	}
}

// agentText is the decision, reading each run's trust record once.
type agentText struct {
	intents *trust.Intents
	o       *Ops
	// key checks the MACs of the text this clone wrote (the zero key checks none).
	key ledger.SessionKey
	// listed are the runs' summaries, read when a result names runs by id only
	// (trustsID).
	listed *map[string]*ledger.Run
	// texts are, per run tip, the strings of its events this clone wrote (ownText).
	texts *map[string]ownTexts
	// roots are the managed worktrees' roots (placed), read once.
	roots *[]string
}

func (o *Ops) agentText() agentText {
	key, _ := o.Reader().SessionKey() // without one, no item reads as this clone's
	return agentText{intents: trust.NewIntents(o.Repo), o: o, key: key, listed: new(map[string]*ledger.Run), texts: new(map[string]ownTexts), roots: new([]string)}
}

// vouched reports whether a person trusted r here: all of its text may reach an agent.
func (a agentText) vouched(ctx context.Context, r *ledger.Run) bool {
	return a.intents.Vouched(ctx, r.Header.RunID, r.Header.Intent)
}

// ownEvent reports whether e's data may reach an agent: r is vouched for, or was
// started here and e is as this clone wrote it.
func (a agentText) ownEvent(ctx context.Context, r *ledger.Run, e *ledger.Event) bool {
	return a.vouched(ctx, r) || (a.trusts(ctx, r.Header.RunID, r.Header.Intent) && a.key.OwnEvent(r.Header.RunID, e))
}

// ownJob reports whether j's text may reach an agent: r is vouched for, or was
// started here and j is as this clone wrote it.
func (a agentText) ownJob(ctx context.Context, r *ledger.Run, j *ledger.Job) bool {
	return a.vouched(ctx, r) || (a.trusts(ctx, r.Header.RunID, r.Header.Intent) && a.key.OwnJob(r.Header.RunID, j))
}

// ownTexts are the strings in the data of a run's events this clone wrote: live, of
// those no undo took back; all, of every one; places, the worktrees it made (node
// and path, placeKey), wherever the managed root was then.
type ownTexts struct{ live, all, places map[string]bool }

// placeKey is the key of node's worktree at path in ownTexts.places.
func placeKey(node, path string) string { return node + "\x00" + gitstate.CanonPath(path) }

// ownText reports whether v, a free-text value r's state holds that undo restores
// (the run's and a stage's reason), may reach an agent from r, a run started here
// that no person vouched for: v is empty, git-atlas's own wording, or a string in the
// data of one of r's events this clone wrote (its MAC verifies here) that no undo
// took back. The run's log is walked once per result.
func (a agentText) ownText(ctx context.Context, r *ledger.Run, v string) bool {
	if v == "" || v == ledger.ReasonAllStagesCompleted {
		return true
	}
	if rest, ok := strings.CutPrefix(v, "rework from "); ok {
		stage, reason, _ := strings.Cut(rest, ": ")
		if _, _, known := r.Stage(stage); known {
			return a.ownText(ctx, r, reason)
		}
	}
	return a.eventTexts(ctx, r).live[v]
}

// ownKept is ownText for a value undo keeps as it is (an attempt's, a snapshot
// record's, a worktree's setup): the event that set it counts even once undone.
func (a agentText) ownKept(ctx context.Context, r *ledger.Run, v string) bool {
	return v == "" || a.eventTexts(ctx, r).all[v]
}

// eventTexts are the strings in the data of r's events this clone wrote (none, when
// the log cannot be read), read once per result.
func (a agentText) eventTexts(ctx context.Context, r *ledger.Run) ownTexts {
	if *a.texts == nil {
		*a.texts = map[string]ownTexts{}
	}
	if own, ok := (*a.texts)[r.Tip]; ok {
		return own
	}
	own := ownTexts{live: map[string]bool{}, all: map[string]bool{}, places: map[string]bool{}}
	(*a.texts)[r.Tip] = own
	events, err := a.o.Reader().LogOf(ctx, r)
	if err != nil {
		return own
	}
	var undone [][2]int
	for i := range events {
		if events[i].Type != ledger.EventUndone {
			continue
		}
		if d, err := ledger.DecodeData[ledger.UndoneData](&events[i]); err == nil {
			undone = append(undone, [2]int{d.To, d.From})
		}
	}
	for i := range events {
		e := &events[i]
		if !a.key.OwnEvent(r.Header.RunID, e) {
			continue
		}
		// What the event quotes from the ledger (a replaced lease, a record's path)
		// is not this clone's text, though this clone signed the event.
		data, err := ledger.WrittenData(e)
		if err != nil {
			continue
		}
		collectStrings(data, own.all)
		if e.Type == ledger.EventWorktreeAdded {
			// A worktree this clone made (not one it recreated where a record said):
			// its path is where git-atlas placed it, under the root of that time.
			if d, err := ledger.DecodeData[ledger.WorktreeAddedData](e); err == nil && !d.Recreated {
				own.places[placeKey(d.Node, d.Path)] = true
			}
		}
		if !slices.ContainsFunc(undone, func(u [2]int) bool { return e.Seq > u[0] && e.Seq <= u[1] }) {
			collectStrings(data, own.live)
		}
	}
	return own
}

// collectStrings adds every string in v (decoded JSON) to into.
func collectStrings(v any, into map[string]bool) {
	switch x := v.(type) {
	case string:
		into[x] = true
	case []any:
		for _, e := range x {
			collectStrings(e, into)
		}
	case map[string]any:
		for _, e := range x {
			collectStrings(e, into)
		}
	}
}

// stateText withholds the free text of s, the state of r (a run started here that no
// person vouched for), that may not reach an agent, and reports whether it withheld
// any. A reason, thread, agent, host, snapshot's reason, source and patch, setup's
// command and output, verify output, union path and taken_over reach an agent only as
// git-atlas's own wording or the text of an event this clone wrote (ownText,
// ownKept); a verify's command only so or as a command trusted here (ownCommand); a
// job's reason and why it or a stage went unverified only as git-atlas words them; a
// worktree's path only where git-atlas places it or placed it (placedFor); an adopted worktree's
// system only as a system import knows; a member this release does not know never.
// s's slices are copied before they are changed.
func (a agentText) stateText(ctx context.Context, r *ledger.Run, s *ledger.State) bool {
	withheld := false
	check := func(ok bool, v *string) {
		if !ok {
			*v, withheld = "", true
		}
	}
	keep := func(v *string) { check(a.ownText(ctx, r, *v), v) }
	kept := func(v *string) { check(a.ownKept(ctx, r, *v), v) }
	verify := func(v **ledger.VerifyResult) { withheld = a.verifyText(ctx, r, v, "") || withheld }
	run := r.Header.RunID
	keep(&s.Reason)
	keep(&s.TakenOver)
	withheld = withheld || len(s.Extra) > 0
	s.Extra = nil
	if d := s.Driver; d != nil {
		c := *d
		withheld, c.Extra = withheld || len(c.Extra) > 0, nil
		s.Driver = &c
	}
	if m := s.Resuming; m != nil && m.Phase != ledger.ResumeVerify && m.Phase != ledger.ResumeDone {
		c := *m
		check(false, &c.Phase)
		s.Resuming = &c
	}
	s.Stages = slices.Clone(s.Stages)
	for i := range s.Stages {
		st := &s.Stages[i]
		withheld, st.Extra = withheld || len(st.Extra) > 0, nil
		keep(&st.Reason)
		check(st.Unverified == "" || st.Unverified == resume.UnverifiedNoVerify || st.Unverified == resume.UnverifiedNotSafe ||
			st.Unverified == resume.UnverifiedUntrusted, &st.Unverified)
		verify(&st.Verify)
		st.Attempts = slices.Clone(st.Attempts)
		for k := range st.Attempts {
			at := &st.Attempts[k]
			withheld, at.Extra = withheld || len(at.Extra) > 0, nil
			kept(&at.ThreadID)
			kept(&at.Agent)
			kept(&at.Host)
		}
	}
	s.Jobs = slices.Clone(s.Jobs)
	for i := range s.Jobs {
		withheld = a.jobText(ctx, r, &s.Jobs[i]) || withheld
	}
	s.Snapshots = slices.Clone(s.Snapshots)
	for i := range s.Snapshots {
		sn := &s.Snapshots[i]
		withheld, sn.Extra = withheld || len(sn.Extra) > 0, nil
		kept(&sn.Reason)
		kept(&sn.Source)
		check(a.patchPlaced(run, sn.ID, sn.Patch) || a.ownKept(ctx, r, sn.Patch), &sn.Patch)
	}
	s.Worktrees = slices.Clone(s.Worktrees)
	for i := range s.Worktrees {
		w := &s.Worktrees[i]
		withheld, w.Extra = withheld || len(w.Extra) > 0, nil
		check(a.placedFor(ctx, r, run, w.Node, w.Path), &w.Path)
		check(ledger.KnownSystem(w.Adopted), &w.Adopted)
		if su := w.Setup; su != nil {
			c := *su
			kept(&c.Command)
			kept(&c.Tail)
			w.Setup = &c
		}
	}
	s.Replays = slices.Clone(s.Replays)
	for i := range s.Replays {
		rp := &s.Replays[i]
		withheld, rp.Extra = withheld || len(rp.Extra) > 0, nil
		base := filepath.Base(rp.Worktree)
		n, replay := strings.CutPrefix(base, "replay-"+rp.Stage+"-")
		_, err := strconv.Atoi(n)
		check(rp.Worktree == "" || (replay && err == nil && a.placed(ctx, run, base, rp.Worktree)), &rp.Worktree)
	}
	if u := s.Union; u != nil {
		c := *u
		withheld, c.Extra = withheld || len(c.Extra) > 0, nil
		verify(&c.Verify)
		for _, m := range []*map[string][]string{&c.Conflicted, &c.OutsideScope, &c.AllowedOutsideScope} {
			if *m == nil {
				continue
			}
			out := map[string][]string{}
			for node, paths := range *m {
				out[node] = slices.DeleteFunc(slices.Clone(paths), func(p string) bool {
					if a.ownKept(ctx, r, p) {
						return false
					}
					withheld = true
					return true
				})
			}
			*m = out
		}
		s.Union = &c
	}
	return withheld
}

// verifyText withholds of *v, a verify's result r's state holds (r a run started here
// that no person vouched for), a command that is not command (one the item's MAC
// covers) and that ownCommand does not pass, output no event of this clone's wrote
// (ownKept), and members this release does not know; *v becomes a copy. It reports
// whether it withheld any.
func (a agentText) verifyText(ctx context.Context, r *ledger.Run, v **ledger.VerifyResult, command string) bool {
	if *v == nil {
		return false
	}
	c := **v
	withheld := len(c.Extra) > 0
	c.Extra = nil
	if c.Command != command && !a.ownCommand(ctx, r, c.Command) {
		c.Command, withheld = "", true
	}
	if !a.ownKept(ctx, r, c.Tail) {
		c.Tail, withheld = "", true
	}
	*v = &c
	return withheld
}

// jobText withholds the text of j, a job of r (a run started here that no person
// vouched for) that its MAC does not cover: a reason and why it went unverified not
// as git-atlas words them, the agent and thread of its claim and its verify's result
// unless an event of this clone's wrote them, members this release does not know. It
// reports whether it withheld any.
func (a agentText) jobText(ctx context.Context, r *ledger.Run, j *ledger.Job) bool {
	withheld := len(j.Extra) > 0
	j.Extra = nil
	check := func(ok bool, v *string) {
		if !ok {
			*v, withheld = "", true
		}
	}
	check(composedJobReason(j.Reason), &j.Reason)
	check(j.Unverified == "" || j.Unverified == ledger.UnverifiedNoCommand || j.Unverified == ledger.UnverifiedNoWorktree, &j.Unverified)
	check(a.ownKept(ctx, r, j.Agent), &j.Agent)
	check(a.ownKept(ctx, r, j.ThreadID), &j.ThreadID)
	own := ""
	if a.ownJob(ctx, r, j) {
		own = j.Verify // the job's MAC covers its verify
	}
	return a.verifyText(ctx, r, &j.VerifyResult, own) || withheld
}

// ownCommand reports whether command, a command r's state quotes (the verify a
// result ran), may reach an agent from r, a run started here that no person vouched
// for: it is empty, trusted here as r's command, or in the data of an event this
// clone wrote.
func (a agentText) ownCommand(ctx context.Context, r *ledger.Run, command string) bool {
	return command == "" || a.intents.TrustsCommand(ctx, r.Header.RunID, command) || a.ownKept(ctx, r, command)
}

// composedJobReason reports whether v is a job's reason as git-atlas words it (empty,
// receipt, attempts, verify, or a dependency's failure naming valid jobs).
func composedJobReason(v string) bool {
	switch v {
	case "", "receipt", "attempts", "verify":
		return true
	}
	rest, ok := strings.CutPrefix(v, "dependency ")
	if !ok {
		return false
	}
	if dep, ok := strings.CutSuffix(rest, " failed"); ok {
		return ledger.ValidName("job", dep) == nil
	}
	dep, parent, ok := strings.Cut(rest, " was dropped with its failed parent ")
	return ok && ledger.ValidName("job", dep) == nil && ledger.ValidName("job", parent) == nil
}

// placed reports whether path is empty or where git-atlas places the worktree of
// run's node: <root>/<run>/<node> under one of this repository's managed roots (their
// names come from this clone's configuration, the rest from checked names). A path a
// ledger gives that is anywhere else is ledger text.
func (a agentText) placed(ctx context.Context, run, node, path string) bool {
	if path == "" {
		return true
	}
	if ledger.ValidName("node", node) != nil {
		return false
	}
	if *a.roots == nil {
		*a.roots = []string{}
		if roots, err := worktrees.Roots(ctx, a.o.Repo); err == nil {
			for _, r := range roots {
				*a.roots = append(*a.roots, r.Dir())
			}
		}
	}
	canon := gitstate.CanonPath(path)
	for _, root := range *a.roots {
		if want := filepath.Join(root, run, node); path == want || canon == gitstate.CanonPath(want) {
			return true
		}
	}
	return false
}

// placedFor is placed for a worktree of r (nil: a run no ledger holds), or where an
// event of r's this clone wrote (its MAC verifies here) says this clone made node's
// worktree: under a managed root configured then and since changed
// (atlas.worktreeRoot).
func (a agentText) placedFor(ctx context.Context, r *ledger.Run, run, node, path string) bool {
	if a.placed(ctx, run, node, path) {
		return true
	}
	return r != nil && ledger.ValidName("node", node) == nil && a.eventTexts(ctx, r).places[placeKey(node, path)]
}

// patchPlaced reports whether path is empty or where a snapshot's patch goes when
// none is named (<git-common-dir>/atlas/recovery/<run>/<snapshot>.patch).
func (a agentText) patchPlaced(run, snapshot, path string) bool {
	return path == "" || path == a.o.Repo.Layout().Patch(run, snapshot)
}

// trusts reports whether run's free text may reach an agent here.
func (a agentText) trusts(ctx context.Context, run, intent string) bool {
	return a.intents.Trusts(ctx, run, intent)
}

// trustsID is trusts for a run named by id alone: its intent is read from the
// summaries (once). A run no ledger holds (a snapshot whose run is gone) is trusted
// by nobody.
func (a agentText) trustsID(ctx context.Context, run string) bool {
	r := a.summary(ctx, run)
	return r != nil && a.trusts(ctx, run, r.Header.Intent)
}

// summary is run's summary (read with every other's, once), nil when no ledger
// holds it.
func (a agentText) summary(ctx context.Context, run string) *ledger.Run {
	if *a.listed == nil {
		m := map[string]*ledger.Run{}
		entries, err := a.o.Reader().List(ctx, gitstate.ListOptions{Depth: gitstate.ListSummaries})
		if err == nil {
			for _, e := range entries {
				if e.Err == nil {
					m[e.ID] = e.Run
				}
			}
		}
		*a.listed = m
	}
	return (*a.listed)[run]
}

// view withholds the free text of v, a view of a run whose header is h: all of it
// when this clone does not trust the run, else its owner and resume command when
// the record does not prove them (header).
func (a agentText) view(ctx context.Context, v *RunView, h *ledger.Header) {
	if v.RunID == "" {
		return
	}
	if !a.trusts(ctx, v.RunID, h.Intent) {
		v.Intent, v.Reason, v.ManagedBy, v.ResumeWith, v.TakenOver = "", "", "", "", ""
		v.TextWithheld = true
		return
	}
	if shown, withheld := a.header(ctx, h); withheld {
		v.ManagedBy, v.ResumeWith = shown.ManagedBy, shown.ResumeWith
		v.TextWithheld = v.TextWithheld || v.ManagedBy != h.ManagedBy || v.ResumeWith != h.ResumeWith
	}
}

// header is h, the header of a run this clone trusts, with the members of its free
// text the run's trust record does not prove withheld (trust.Intents.Header: this
// clone wrote them at start, or a person read them at `trust RUN`), and whether any
// was (docs/contract.md §6). The intent is trusts' to decide.
func (a agentText) header(ctx context.Context, h *ledger.Header) (ledger.Header, bool) {
	return a.intents.Header(ctx, h.RunID, h)
}

// verdict is v, the verdict of a run whose header is h, without the criteria it
// quotes when the run's record does not prove them (header).
func (a agentText) verdict(ctx context.Context, h *ledger.Header, v *ledger.Verdict) *ledger.Verdict {
	if shown, withheld := a.header(ctx, h); withheld && len(shown.Criteria) < len(h.Criteria) {
		return withheldVerdict(v)
	}
	return v
}

// row withholds the free text of a list row whose run this clone does not trust:
// its view and its verdict's criteria.
func (a agentText) row(ctx context.Context, it *ListItem) {
	if it.Unreadable && it.err != nil {
		it.Error = AgentError(it.err).Error() // a document's value it quotes withheld
	}
	if it.Unreadable || it.Run == nil {
		return
	}
	viewHolders(&it.RunView)
	a.view(ctx, &it.RunView, &it.Run.Header)
	if !a.trusts(ctx, it.RunID, it.Run.Header.Intent) {
		it.Verdict = withheldVerdict(it.Verdict)
		return
	}
	if it.header != nil { // a graph run's verdict: the criteria its whole header holds
		if v := a.verdict(ctx, it.header, it.Verdict); v != it.Verdict {
			it.Verdict, it.TextWithheld = v, true
		}
	}
	if a.vouched(ctx, it.Run) {
		return
	}
	for _, v := range []*string{&it.Reason, &it.TakenOver} {
		if !a.ownText(ctx, it.Run, *v) {
			*v, it.TextWithheld = "", true
		}
	}
}

// finish withholds the free text of a finished run this clone does not trust.
func (a agentText) finish(ctx context.Context, r *ledger.Run, res *FinishResult) {
	a.view(ctx, &res.RunView, &r.Header)
	if !a.trusts(ctx, r.Header.RunID, r.Header.Intent) {
		res.Verdict = withheldVerdict(res.Verdict)
		return
	}
	res.Verdict = a.verdict(ctx, &r.Header, res.Verdict)
}

// transition withholds the verify a passed report ran (its command and output) when
// this clone does not trust the run.
func (a agentText) transition(ctx context.Context, r *ledger.Run, res *TransitionResult) {
	if r == nil || a.trusts(ctx, r.Header.RunID, r.Header.Intent) {
		return
	}
	res.Stage.Verify = composedVerify(res.Stage.Verify)
}

// union withholds the union's verify (command and output) and the verdict's
// criteria when this clone does not trust the run.
func (a agentText) union(ctx context.Context, r *ledger.Run, res *UnionResult) {
	if r == nil {
		return
	}
	if a.trusts(ctx, r.Header.RunID, r.Header.Intent) {
		res.Verdict = a.verdict(ctx, &r.Header, res.Verdict)
		return
	}
	res.Verify = composedVerify(res.Verify)
	res.Verdict = withheldVerdict(res.Verdict)
}

// snapshot withholds what a snapshot's ledger record says in words (its reason, a
// source git-atlas does not write, a patch file not where git-atlas puts it) when
// this clone does not trust its run, or when its run was started here, no person
// vouched for it, and no event of this clone's wrote them (ownKept).
func (a agentText) snapshot(ctx context.Context, v *SnapshotView) {
	var r *ledger.Run
	if a.trustsID(ctx, v.RunID) {
		if r = a.summary(ctx, v.RunID); a.vouched(ctx, r) {
			return
		}
	} else {
		v.TextWithheld = true
	}
	own := func(s string) bool { return s == "" || (r != nil && a.ownKept(ctx, r, s)) }
	withhold := func(ok bool, s *string) {
		if !ok {
			*s, v.TextWithheld = "", true
		}
	}
	withhold(own(v.Reason), &v.Reason)
	withhold(v.Source == recovery.SourceWorktree || v.Source == recovery.SourceCheckout || own(v.Source), &v.Source)
	withhold(a.patchPlaced(v.RunID, v.ID, v.Patch) || own(v.Patch), &v.Patch)
}

// worktrees withholds the setup command and its output recorded on the worktrees
// of runs this clone does not trust (runs: each item's run), and of runs started
// here that no person vouched for when no event of this clone's wrote them (ownText);
// and, of both, a path not where git-atlas places the node's worktree (placed), also
// where the item's error quotes it.
func (a agentText) worktrees(ctx context.Context, items []WorktreeItem, runs map[string]*ledger.Run) {
	for i := range items {
		it := &items[i]
		r, ok := runs[it.RunID]
		if ok && a.vouched(ctx, r) {
			continue
		}
		if !a.placedFor(ctx, r, it.RunID, it.Node, it.Path) {
			it.Error = strings.ReplaceAll(it.Error, it.Path, withheldText)
			it.Path, it.TextWithheld = "", true
		}
		if ok && a.trusts(ctx, it.RunID, r.Header.Intent) {
			if s, withheld := a.setup(ctx, r, it.Setup); withheld {
				it.Setup, it.TextWithheld = s, true
			}
			continue
		}
		if s := it.Setup; s != nil {
			it.Setup = &ledger.SetupRec{Outcome: s.Outcome, ExitCode: s.ExitCode, At: s.At}
		}
		it.TextWithheld = true
	}
}

// setup is s, a setup recorded on a worktree of r, as an agent reads it: whole when a
// person vouched for r, or this clone trusts r and an event of its own wrote the
// command and the output; else its outcome, exit code and time only, and withheld.
func (a agentText) setup(ctx context.Context, r *ledger.Run, s *ledger.SetupRec) (*ledger.SetupRec, bool) {
	if s == nil || a.vouched(ctx, r) ||
		a.trusts(ctx, r.Header.RunID, r.Header.Intent) && a.ownKept(ctx, r, s.Command) && a.ownKept(ctx, r, s.Tail) {
		return s, false
	}
	return &ledger.SetupRec{Outcome: s.Outcome, ExitCode: s.ExitCode, At: s.At}, true
}

// audit withholds the reasons that quote a ledger record (why a worktree it names
// is foreign) when this clone does not trust the record's run.
func (a agentText) audit(ctx context.Context, res *AuditResult) {
	for i := range res.Worktrees {
		w := &res.Worktrees[i]
		if w.Reason == "" || a.trustsID(ctx, w.RunID) {
			continue
		}
		w.Reason, w.TextWithheld = withheldText, true
	}
}

// show withholds the free text of a shown run this clone does not trust: its view,
// its stages' verify commands, its verdict's criteria, and its header and state
// documents, rebuilt from the members git-atlas composes.
func (a agentText) show(ctx context.Context, res *ShowResult) error {
	r := res.Run
	viewHolders(&res.RunView)
	if s := r.State; stateHolders(&s) { // on every run: the rest reads r without them
		c := *r
		c.State = s
		r, res.Run, res.TextWithheld = &c, &c, true
		var err error
		if res.State, err = gitstate.MarshalState(&s); err != nil {
			return err
		}
	}
	if a.trusts(ctx, r.Header.RunID, r.Header.Intent) {
		if err := a.showHeader(ctx, r, res); err != nil {
			return err
		}
	}
	if a.vouched(ctx, r) {
		return nil
	}
	if a.trusts(ctx, r.Header.RunID, r.Header.Intent) {
		// Started here: the jobs another clone wrote lose their text, and so does
		// the state's text no event of this clone's set.
		s := r.State
		s.Jobs = slices.Clone(s.Jobs)
		jobs, state := a.jobs(ctx, r, pointers(s.Jobs)), a.stateText(ctx, r, &s)
		if !jobs && !state {
			return nil
		}
		if state {
			res.Reason, res.TakenOver = s.Reason, s.TakenOver
			for i := range res.Stages {
				v := &res.Stages[i]
				if !a.ownKept(ctx, r, v.ThreadID) {
					v.ThreadID = ""
				}
				if k := slices.IndexFunc(s.Stages, func(st ledger.StageState) bool { return st.Name == v.Name }); k >= 0 {
					v.Unverified = s.Stages[k].Unverified
				}
			}
		}
		res.TextWithheld = true
		var err error
		res.State, err = gitstate.MarshalState(&s)
		return err
	}
	a.view(ctx, &res.RunView, &r.Header)
	for i := range res.Stages {
		res.Stages[i].Verify = ""
	}
	res.Verdict = withheldVerdict(res.Verdict)
	h, s := composedHeader(&r.Header), composedState(&r.State)
	var err error
	if res.Header, err = gitstate.MarshalHeader(&h); err != nil {
		return err
	}
	res.State, err = gitstate.MarshalState(&s)
	return err
}

// showHeader withholds, of a shown run this clone trusts, the members of its header's
// free text the run's record does not prove (header): from the header document, the
// view, the stages' verify commands and the verdict's criteria.
func (a agentText) showHeader(ctx context.Context, r *ledger.Run, res *ShowResult) error {
	shown, withheld := a.header(ctx, &r.Header)
	if !withheld {
		return nil
	}
	a.view(ctx, &res.RunView, &r.Header)
	res.Verdict = a.verdict(ctx, &r.Header, res.Verdict)
	for i := range res.Stages {
		v := &res.Stages[i]
		if k := slices.IndexFunc(shown.Stages, func(d ledger.StageDef) bool { return d.Name == v.Name }); k < 0 || shown.Stages[k].Verify == "" {
			v.Verify = ""
		}
	}
	res.TextWithheld = true
	var err error
	res.Header, err = gitstate.MarshalHeader(&shown)
	return err
}

// log withholds the data of a logged run's events that may not reach an agent
// (ownEvent): what remains is each event's seq, type, time, epoch, stage, job and
// holder.
func (a agentText) log(ctx context.Context, r *ledger.Run, res *LogResult) error {
	for i := range res.Kept {
		e := &res.Kept[i]
		own := a.ownEvent(ctx, r, e) // before its holder goes: the MAC may cover it
		if !badHolder(e.Holder) && own {
			continue
		}
		if badHolder(e.Holder) {
			e.Holder = ""
		}
		if !own {
			e.Data, e.Extra = nil, nil
		}
		d, err := gitstate.MarshalEvent(e)
		if err != nil {
			return err
		}
		res.Events[i] = d
	}
	return nil
}

// jobs withholds the free text of a graph run's jobs that may not reach an agent
// (ownJob; of a job this clone wrote, on a run no person vouched for, what its MAC
// does not cover: jobText; copies the caller owns), and reports whether it withheld
// any.
func (a agentText) jobs(ctx context.Context, r *ledger.Run, jobs []*ledger.Job) bool {
	withheld := false
	for _, j := range jobs {
		if j == nil {
			continue
		}
		own := a.ownJob(ctx, r, j) // before its holder goes: the MAC may cover it
		if badHolder(j.Holder) {
			j.Holder, withheld = "", true
		}
		switch {
		case !own:
			*j = composedJob(*j)
			withheld = true
		case !a.vouched(ctx, r):
			withheld = a.jobText(ctx, r, j) || withheld
		}
	}
	return withheld
}

// jobDone withholds the free text of a receipt's job, its children, and the job's
// verify (its command and output) when they may not reach an agent.
func (a agentText) jobDone(ctx context.Context, r *ledger.Run, res *JobDoneResult) {
	if res.Job == nil {
		return
	}
	j := *res.Job
	res.Job = &j
	if res.Verify != nil && !a.ownJob(ctx, r, res.Job) {
		res.Verify = composedVerify(res.Verify)
	}
	a.jobs(ctx, r, []*ledger.Job{res.Job})
	a.jobs(ctx, r, pointers(res.Children))
}

// pointers are pointers to the elements of jobs.
func pointers(jobs []ledger.Job) []*ledger.Job {
	out := make([]*ledger.Job, len(jobs))
	for i := range jobs {
		out[i] = &jobs[i]
	}
	return out
}

// withheldText stands in a composed sentence for a value a run carries that an
// agent may not read.
const withheldText = "(text withheld: the run was not started or trusted here)"

// plan withholds the free text of a resume plan (or a resume's result) of r when this
// clone does not trust r: the stop reason, the owner and its resume command, the
// untrusted commands, the criteria, and those values wherever next_action's reason
// quotes them.
func (a agentText) plan(ctx context.Context, r *ledger.Run, p *resume.Plan) {
	if p == nil || r == nil {
		return
	}
	planHolders(r, p, a.o.Spelling)
	if a.trusts(ctx, r.Header.RunID, r.Header.Intent) {
		a.planHeader(ctx, r, p)
	}
	if a.vouched(ctx, r) {
		return
	}
	if a.trusts(ctx, r.Header.RunID, r.Header.Intent) {
		// Started here: a command not trusted here was written elsewhere (a job
		// another clone added); its text does not reach an agent.
		for i := range p.Commands {
			if !p.Commands[i].Trusted {
				p.Commands[i].Command = ""
			}
		}
		a.planText(ctx, r, p)
		a.planPlaces(ctx, r, p, true)
		return
	}
	var values []string
	for _, v := range []string{r.State.Reason, p.Reason, r.Header.ManagedBy, r.Header.ResumeWith} {
		if v != "" {
			values = append(values, strconv.Quote(v), v)
		}
	}
	if p.TakenOver != "" {
		values = append(values, strconv.Quote(p.TakenOver), p.TakenOver)
	}
	p.Reason, p.ManagedBy, p.ResumeWith, p.TakenOver = "", "", "", ""
	for i := range p.Commands {
		if !p.Commands[i].Trusted {
			p.Commands[i].Command = ""
		}
	}
	if st := p.InterruptedStage; st != nil {
		if !st.VerifyTrusted {
			st.VerifyCommand = ""
		}
		if at := st.Attempt; at != nil {
			st.Attempt = &ledger.Attempt{N: at.N, StartedAt: at.StartedAt, Baseline: at.Baseline, Lease: at.Lease,
				Holder: at.Holder, Session: at.Session, PID: at.PID, HeartbeatAt: at.HeartbeatAt, InCheckout: at.InCheckout}
		}
	}
	p.Verdict = withheldVerdict(p.Verdict)
	n := &p.NextAction
	n.Owner = ""
	for _, v := range values {
		n.Reason = strings.ReplaceAll(n.Reason, v, withheldText)
	}
	a.planPlaces(ctx, r, p, false)
}

// planHeader withholds, of a plan of r (a run this clone trusts), the members of r's
// header's free text the run's record does not prove (header): its owner and the
// owner's resume command, wherever next_action quotes them, the criteria of its
// verdict, and the commands not trusted here (a stage's verify another clone wrote
// into the header).
func (a agentText) planHeader(ctx context.Context, r *ledger.Run, p *resume.Plan) {
	shown, withheld := a.header(ctx, &r.Header)
	if !withheld {
		return
	}
	n := &p.NextAction
	var values []string
	if h := r.Header.ManagedBy; h != shown.ManagedBy {
		values = append(values, strconv.Quote(h), h)
		p.ManagedBy, n.Owner = "", ""
	}
	if h := r.Header.ResumeWith; h != shown.ResumeWith {
		values = append(values, strconv.Quote(h), h)
		p.ResumeWith = ""
	}
	for _, v := range values {
		n.Reason = strings.ReplaceAll(n.Reason, v, withheldText)
		if strings.Contains(n.AgentCommand, v) {
			n.AgentCommand = ""
		}
	}
	for i := range p.Commands {
		if !p.Commands[i].Trusted {
			p.Commands[i].Command = ""
		}
	}
	if st := p.InterruptedStage; st != nil && !st.VerifyTrusted {
		st.VerifyCommand = ""
	}
	p.Verdict = a.verdict(ctx, &r.Header, p.Verdict)
}

// planPlaces withholds what a plan of r (not vouched for; started here when started)
// says of its worktrees in the ledger's words: a path not where git-atlas places the
// node's worktree (placed) and a system import does not know (knownSystem), wherever
// the plan quotes them (why a record is foreign or adopted quotes the record); a
// setup's command and output (of a run started here, unless an event of this clone's
// wrote them).
func (a agentText) planPlaces(ctx context.Context, r *ledger.Run, p *resume.Plan, started bool) {
	run := r.Header.RunID
	n := &p.NextAction
	withhold := func(path string) {
		n.Reason = strings.ReplaceAll(n.Reason, path, withheldText)
		n.AgentCommand = strings.ReplaceAll(n.AgentCommand, path, withheldText)
	}
	for i := range p.Worktrees {
		w := &p.Worktrees[i]
		if rec := r.State.Worktree(w.Node); rec != nil && !ledger.KnownSystem(rec.Adopted) {
			w.Reason = strings.ReplaceAll(w.Reason, rec.Adopted, withheldText)
		}
		if !a.placedFor(ctx, r, run, w.Node, w.Path) {
			withhold(w.Path)
			w.Reason = strings.ReplaceAll(w.Reason, w.Path, withheldText)
			w.Path = ""
		}
		if su := w.Setup; su != nil && (!started || !a.ownKept(ctx, r, su.Command) || !a.ownKept(ctx, r, su.Tail)) {
			w.Setup = &ledger.SetupRec{Outcome: su.Outcome, ExitCode: su.ExitCode, At: su.At}
		}
	}
	if st := p.InterruptedStage; st != nil && !a.placedFor(ctx, r, run, st.Name, st.Worktree) {
		withhold(st.Worktree)
		st.Worktree = ""
	}
	if len(n.Worktrees) > 0 {
		out := map[string]string{}
		for node, path := range n.Worktrees {
			if !a.placedFor(ctx, r, run, node, path) {
				withhold(path)
				path = ""
			}
			out[node] = path
		}
		n.Worktrees = out
	}
}

// planText withholds the state's free text a plan of r (a run started here that no
// person vouched for) quotes when no event of this clone's set it (ownText): the stop
// reason, the interrupted attempt's thread, agent and host, and those values wherever
// next_action quotes them.
func (a agentText) planText(ctx context.Context, r *ledger.Run, p *resume.Plan) {
	var values []string
	check := func(own func(context.Context, *ledger.Run, string) bool) func(*string) {
		return func(v *string) {
			if !own(ctx, r, *v) {
				values = append(values, strconv.Quote(*v), *v)
				*v = ""
			}
		}
	}
	keep, kept := check(a.ownText), check(a.ownKept)
	reason := r.State.Reason
	keep(&reason)
	keep(&p.Reason)
	n := &p.NextAction
	if st := p.InterruptedStage; st != nil && st.Attempt != nil {
		at := *st.Attempt
		kept(&at.ThreadID)
		kept(&at.Agent)
		kept(&at.Host)
		st.Attempt = &at
	}
	kept(&n.ThreadID)
	kept(&n.Agent)
	keep(&p.TakenOver)
	for _, v := range values {
		n.Reason = strings.ReplaceAll(n.Reason, v, withheldText)
		if strings.Contains(n.AgentCommand, v) {
			n.AgentCommand = ""
		}
	}
}

// withheldVerdict is v without the criteria it quotes (nil stays nil).
func withheldVerdict(v *ledger.Verdict) *ledger.Verdict {
	if v == nil {
		return nil
	}
	return &ledger.Verdict{Verdict: v.Verdict, Resolved: []string{}, Unverified: []string{}, Unresolved: []string{}}
}

// composedHeader is h with only the members git-atlas composes (a member added later
// is withheld until it is listed here).
func composedHeader(h *ledger.Header) ledger.Header {
	out := ledger.Header{Schema: h.Schema, RunID: h.RunID, Kind: h.Kind, CreatedAt: h.CreatedAt, VerifySafe: h.VerifySafe,
		Baseline: h.Baseline, Session: h.Session, ConfigHash: h.ConfigHash, Gas: h.Gas, MaxAttempts: h.MaxAttempts,
		MaxJobs: h.MaxJobs, MaxDepth: h.MaxDepth, PipelineMode: h.PipelineMode, Stages: []ledger.StageDef{}}
	for _, d := range h.Stages {
		out.Stages = append(out.Stages, ledger.StageDef{Name: d.Name, VerifySafe: d.VerifySafe, Gate: d.Gate, MaxRetries: d.MaxRetries,
			ReworkTo: d.ReworkTo, WallBudget: d.WallBudget, IdleBudget: d.IdleBudget})
	}
	return out
}

// composedState is s with only the members git-atlas composes.
func composedState(s *ledger.State) ledger.State {
	out := ledger.State{Schema: s.Schema, RunID: s.RunID, Status: s.Status, Seq: s.Seq, Epoch: s.Epoch, UpdatedAt: s.UpdatedAt,
		GasSpent: s.GasSpent, GasFixed: s.GasFixed, Stages: []ledger.StageState{}}
	if s.Driver != nil {
		out.Driver = &ledger.Lease{Holder: s.Driver.Holder, Session: s.Driver.Session, ExpiresAt: s.Driver.ExpiresAt}
	}
	for _, st := range s.Stages {
		c := ledger.StageState{Name: st.Name, Status: st.Status, Reworks: st.Reworks, Verified: st.Verified,
			Unverified: st.Unverified, UpdatedAt: st.UpdatedAt, Verify: composedVerify(st.Verify)}
		for _, at := range st.Attempts {
			c.Attempts = append(c.Attempts, ledger.Attempt{N: at.N, StartedAt: at.StartedAt, Baseline: at.Baseline, Lease: at.Lease,
				Holder: at.Holder, Session: at.Session, PID: at.PID, HeartbeatAt: at.HeartbeatAt, InCheckout: at.InCheckout})
		}
		out.Stages = append(out.Stages, c)
	}
	for _, j := range s.Jobs {
		out.Jobs = append(out.Jobs, composedJob(j))
	}
	for _, w := range s.Worktrees {
		out.Worktrees = append(out.Worktrees, ledger.WorktreeRec{Node: w.Node, Stage: w.Stage, Branch: w.Branch,
			Baseline: w.Baseline, Head: w.Head, Untrusted: w.Untrusted})
	}
	for _, sn := range s.Snapshots {
		out.Snapshots = append(out.Snapshots, ledger.SnapshotRec{ID: sn.ID, Node: sn.Node, Stage: sn.Stage, Ref: sn.Ref,
			Commit: sn.Commit, CreatedAt: sn.CreatedAt})
	}
	if u := s.Union; u != nil {
		out.Union = &ledger.UnionRec{Head: u.Head, Integrated: u.Integrated, Conflicted: u.Conflicted, Missing: u.Missing,
			At: u.At, Verify: composedVerify(u.Verify)}
	}
	for _, rp := range s.Replays {
		out.Replays = append(out.Replays, ledger.ReplayRec{Stage: rp.Stage, Branch: rp.Branch, Baseline: rp.Baseline, Snapshot: rp.Snapshot})
	}
	return out
}

// composedJob is j with only the members git-atlas composes.
func composedJob(j ledger.Job) ledger.Job {
	return ledger.Job{ID: j.ID, State: j.State, Needs: j.Needs, Parent: j.Parent, Depth: j.Depth, Attempts: j.Attempts,
		Lease: j.Lease, Holder: j.Holder, ExpiresAt: j.ExpiresAt, VerifyOwed: j.VerifyOwed, VerifyResult: composedVerify(j.VerifyResult)}
}

// composedVerify is a verify's outcome without its command and output.
func composedVerify(v *ledger.VerifyResult) *ledger.VerifyResult {
	if v == nil {
		return nil
	}
	return &ledger.VerifyResult{ExitCode: v.ExitCode, Passed: v.Passed, TimedOut: v.TimedOut, At: v.At}
}
