package resume

import (
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/ledger"
)

// Issue 31.7: next_action says unverified where the verdict is (finish completed is
// still the step), and for an unresolved verdict it is stop (finish completed would
// be refused; accepting it is a person's step), with the command to finish it failed.
func TestNextShowsTheVerdict(t *testing.T) {
	t.Parallel()
	r := &ledger.Run{
		Header: ledger.Header{RunID: "g", Kind: ledger.KindGraph, Criteria: []string{"tests pass"}},
		State: ledger.State{RunID: "g", Status: ledger.RunRunning, Jobs: []ledger.Job{
			{ID: "a", State: ledger.JobDone, Criteria: []string{"tests pass"}}}},
	}
	r.State.Worktrees = []ledger.WorktreeRec{{Node: "a", Path: "/w/a"}}
	r.State.Union = &ledger.UnionRec{Integrated: []string{"a"}}
	n := NextFor(r, t0, Host{}, Asker{Holder: "d"})
	if n.Action != NextFinish || n.Verdict != ledger.VerdictUnverified || !strings.Contains(n.Reason, "unverified") || n.Command != "git atlas finish g --status completed --holder d" {
		t.Fatalf("unverified: %+v", n)
	}
	r.Header.Criteria = append(r.Header.Criteria, "docs updated")
	n = NextFor(r, t0, Host{}, Asker{Holder: "d"})
	if n.Action != NextStop || n.Verdict != ledger.VerdictUnresolved || !strings.Contains(n.Reason, "docs updated") || n.Command != "git atlas finish g --status failed --holder d" {
		t.Fatalf("unresolved: %+v", n)
	}
}

// Issue 31.1: a command's arguments are quoted for sh: a holder with a space or a
// quote in it comes back whole.
func TestNextCommandQuotesTheHolder(t *testing.T) {
	t.Parallel()
	r := driverRun("", "")
	n := NextFor(r, t0, Host{}, Asker{Holder: "it's me"})
	if n.Command != `git atlas transition r code dispatched --holder 'it'\''s me'` {
		t.Fatalf("command %q", n.Command)
	}
	if n = NextFor(r, t0, Host{}, Asker{Holder: "-x"}); n.Command != "git atlas transition r code dispatched --holder=-x" {
		t.Fatalf("a holder like a flag: %q", n.Command)
	}
}
