package resume

import (
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/gitstate"
)

// Issue 31.7: next_action says unverified where the verdict is (finish completed is
// still the step), and for an unresolved verdict it is stop (finish completed would
// be refused; accepting it is a person's step), with the command to finish it failed.
func TestNextShowsTheVerdict(t *testing.T) {
	t.Parallel()
	r := &gitstate.Run{
		Header: gitstate.Header{RunID: "g", Kind: gitstate.KindGraph, Criteria: []string{"tests pass"}},
		State: gitstate.State{RunID: "g", Status: gitstate.RunRunning, Jobs: []gitstate.Job{
			{ID: "a", State: gitstate.JobDone, Criteria: []string{"tests pass"}}}},
	}
	r.State.Worktrees = []gitstate.WorktreeRec{{Node: "a", Path: "/w/a"}}
	r.State.Union = &gitstate.UnionRec{Integrated: []string{"a"}}
	n := NextFor(r, t0, Host{}, Asker{Holder: "d"})
	if n.Action != NextFinish || n.Verdict != gitstate.VerdictUnverified || !strings.Contains(n.Reason, "unverified") || n.Command != "git atlas finish g --status completed --holder d" {
		t.Fatalf("unverified: %+v", n)
	}
	r.Header.Criteria = append(r.Header.Criteria, "docs updated")
	n = NextFor(r, t0, Host{}, Asker{Holder: "d"})
	if n.Action != NextStop || n.Verdict != gitstate.VerdictUnresolved || !strings.Contains(n.Reason, "docs updated") || n.Command != "git atlas finish g --status failed --holder d" {
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
