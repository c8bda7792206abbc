package cli

import (
	"testing"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// TestStepCommand: a step the operations name is the command line that runs it:
// positional arguments where kong's model has them, in its order, then the flags the
// model names, every argument quoted for sh but a placeholder; a value that starts
// with - as one --flag=VALUE argument; a field given false left out.
func TestStepCommand(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		step fault.Step
		want string
	}{
		{fault.Do("list", "all", true), "git atlas list --all"},
		{fault.Do("finish", "run", "r1", "status", fault.Placeholder("completed|failed")), "git atlas finish r1 --status completed|failed"},
		{fault.Do("transition", "allow_outside_scope", true, "run", "r1", "stage", "code", "status", "passed"), "git atlas transition r1 code passed --allow-outside-scope"},
		{fault.Do("land", "run", "g", "onto", "my branch", "merge", true, "accept_unresolved", false), "git atlas land g --onto 'my branch' --merge"},
		{fault.Do("heartbeat", "run", "r1", "holder", "-x"), "git atlas heartbeat r1 --holder=-x"},
		{fault.Do("undo", "run", "r1", "to", 3, "holder", fault.Placeholder("NAME")), "git atlas undo r1 --to 3 --holder NAME"},
		{fault.Do("job done", "run", "g", "job", "j1", "lease", "l", "status", "ok"), "git atlas job done g j1 --lease l --status ok"},
		{fault.Do("worktree setup", "run", "r1", "node", "a"), "git atlas worktree setup r1 a"},
		{fault.Do("trust", "run", "r1", "list", true), "git atlas trust r1 --list"},
		{fault.Do("union", "run", "g", "verify", true, "remote", "origin"), "git atlas union g --verify --remote origin"},
		{fault.Do("recover", "dir", fault.Placeholder("<your checkout>"), "run", "r1", "stage", "plan"), "git atlas -C <your checkout> recover r1 --stage plan"},
		{fault.Do("worktree list", "run", "r1"), "git atlas worktree list r1"},
		{fault.Do("resume", "detect", true), "git atlas resume --detect"},
	} {
		if got := StepCommand(c.step); got != c.want {
			t.Errorf("%v: %q, want %q", c.step, got, c.want)
		}
	}
}
