package resume

import (
	"context"
	"strconv"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/trust"
)

// NextHandoff: the run is another engine's to resume, or has no pipeline to resume
// (dispatch-only); git-atlas changed nothing (docs/contract.md §6).
const NextHandoff = "handoff"

// Handoff is the next action of a run resume hands back (ledger.Run.HandsOff): who
// owns it and how to resume it there. The owner's resume command is the action's
// Command only when it is trusted here (docs/contract.md §10); otherwise it is quoted, as text,
// in the reason, and never offered as a command.
func Handoff(r *ledger.Run, trusted trust.Set) NextAction {
	id := r.Header.RunID
	takeOver := fault.Textf(" (`%s` resumes it here instead, recorded)", fault.Do("resume", "run", id, "take_over", true, "holder", fault.Placeholder("NAME")))
	if r.Header.Mode() == ledger.ModeDispatchOnly {
		n := NextAction{Action: NextHandoff}
		n.why("run %s is dispatch-only: it has no pipeline to resume; re-assign its tasks%s", id, takeOver)
		return n
	}
	n := NextAction{Action: NextHandoff, Owner: r.Header.ManagedBy}
	reason := "run " + id + " is managed by " + r.Header.ManagedBy + ": resume it there"
	switch rw := r.Header.ResumeWith; {
	case rw == "":
	case !r.Header.ResumeWithText && trusted.Trusts(rw):
		n.Command = rw
	case r.Header.ResumeWithText:
		reason += ", as " + strconv.Quote(rw) + " (a pattern to fill in, not a command)"
	default:
		n.why("%s, as %s (not trusted here, so given as text: `%s` trusts it)%s", reason, strconv.Quote(rw), fault.Do("trust", "run", id), takeOver)
		return n
	}
	n.why("%s%s", reason, takeOver)
	return n
}

// takeOverOwner records `resume --take-over` of a run resume would hand back: the
// run_taken_over event names the owner it was taken from and the holder who took it;
// the header stays as written, and State.TakenOver makes git-atlas resume it from
// then on.
func takeOverOwner(ctx context.Context, store *gitstate.Store, id, holder string) (*ledger.Run, error) {
	return store.Update(ctx, id, func(r *ledger.Run) (*gitstate.Change, error) {
		if !r.HandsOff() {
			return nil, nil
		}
		from := r.Header.ManagedBy
		if from == "" {
			from = r.Header.Mode()
		}
		r.State.TakenOver = holder
		data := ledger.RunTakenOverData{From: from, By: holder, PipelineMode: r.Header.Mode()}
		return &gitstate.Change{Event: ledger.RunTakenOverEvent(ledger.About{Holder: holder}, data)}, nil
	})
}
