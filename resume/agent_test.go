package resume

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/ledger"
)

// The agent's own command to continue a conversation: Claude Code's and Codex's,
// from the worktree, every argument quoted for sh; none for an agent without one or
// for a value no write accepts.
func TestAgentContinue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ agent, thread, dir, want string }{
		{"claude", "0f9c2a1e-5b7d", "/r/.git/atlas/worktrees/fix/code", "cd /r/.git/atlas/worktrees/fix/code && claude --resume 0f9c2a1e-5b7d"},
		{"codex", "th-1", "/work trees/it's", `cd '/work trees/it'\''s' && codex resume th-1`},
		{"claude", "s1", "", "claude --resume s1"},
		{"kimi", "s1", "/r", ""},
		{"", "s1", "/r", ""},
		{"claude", "s1; rm -rf ~", "/r", ""},
		{"claude", "-p", "/r", ""},
	} {
		if got := AgentContinue(tc.agent, tc.thread, tc.dir); got != tc.want {
			t.Errorf("AgentContinue(%q, %q, %q) = %q, want %q", tc.agent, tc.thread, tc.dir, got, tc.want)
		}
	}
	// What sh reads back from a quoted directory is the directory.
	cmd := AgentContinue("codex", "th-1", "/tmp/a b/it's $HOME")
	out, err := exec.Command("sh", "-c", "printf %s "+strings.TrimSuffix(strings.TrimPrefix(cmd, "cd "), " && codex resume th-1")).Output()
	if err != nil || string(out) != "/tmp/a b/it's $HOME" {
		t.Fatalf("sh read %q (%v) from %s", out, err, cmd)
	}
}

// continue of an attempt whose dispatch named its agent gives that agent's command
// to continue the conversation from the stage's worktree.
func TestNextContinueGivesTheAgentsCommand(t *testing.T) {
	t.Parallel()
	r := driverRun("", "")
	a := dispatch(t, r, t0)
	a.ThreadID, a.Agent, a.PID = "th-42", "claude", deadPID(t)
	r.State.Worktrees = []ledger.WorktreeRec{{Node: "code", Path: "/repo/.git/atlas/worktrees/r/code"}}
	n := Next(r, t0, Host{})
	want := "cd /repo/.git/atlas/worktrees/r/code && claude --resume th-42"
	if n.Action != NextContinue || n.Agent != "claude" || n.AgentCommand != want || !strings.Contains(n.Reason, want) {
		t.Fatalf("continue: %+v, want agent_command %q", n, want)
	}
	a.Agent = ""
	if n := Next(r, t0, Host{}); n.Action != NextContinue || n.AgentCommand != "" || n.Agent != "" {
		t.Fatalf("continue without an agent: %+v", n)
	}
}

// A running job whose claim named its agent and thread, with its worktree on disk, is
// continued with that agent's own command from the worktree, and its receipt carries
// the job's lease and holder; with no worktree on disk, or no agent, it is waited for.
func TestNextContinueGivesAJobsAgentCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := &ledger.Run{Header: ledger.Header{RunID: "g", Kind: ledger.KindGraph},
		State: ledger.State{RunID: "g", Status: ledger.RunRunning, Jobs: []ledger.Job{
			{ID: "api", State: ledger.JobRunning, Needs: []string{}, Attempts: 0, Lease: "api#0@0.abcd", Holder: "w1",
				ExpiresAt: ledger.Stamp(t0.Add(time.Hour)), Agent: "claude", ThreadID: "th-7"}}},
	}
	r.State.Worktrees = []ledger.WorktreeRec{{Node: "api", Path: dir}}
	n := Next(r, t0, Host{})
	want := AgentContinue("claude", "th-7", dir)
	if n.Action != NextContinue || n.Agent != "claude" || n.ThreadID != "th-7" || n.AgentCommand != want ||
		!slices.Equal(n.Jobs, []string{"api"}) || n.Command != "git atlas job done g api --lease api#0@0.abcd --status ok --holder w1" {
		t.Fatalf("continue of a job: %+v, want agent_command %q", n, want)
	}
	r.State.Jobs[0].Agent = ""
	if n := Next(r, t0, Host{}); n.Action != NextWait {
		t.Fatalf("a job without an agent: %+v, want wait", n)
	}
	r.State.Jobs[0].Agent = "claude"
	r.State.Worktrees[0].Path = dir + "/gone"
	if n := Next(r, t0, Host{}); n.Action != NextWait {
		t.Fatalf("a job whose worktree is gone: %+v, want wait", n)
	}
}
