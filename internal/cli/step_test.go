package cli

import (
	"path/filepath"
	"testing"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/text"
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

// A step printed for someone who gave -C or --remote carries them (-C as an absolute
// path, before the command), so that it runs as printed wherever they are; a step
// naming its own directory or remote keeps it; without either, steps are as
// StepCommand spells them.
func TestStepsCarryTheAskersGlobals(t *testing.T) {
	t.Parallel()
	remote := "origin"
	env := &Env{Dir: "sub dir", askedRemote: &remote}
	abs, err := filepath.Abs("sub dir")
	if err != nil {
		t.Fatal(err)
	}
	sp := env.spelling()
	step := fault.Do("transition", "run", "s1", "stage", "code", "status", "dispatched", "holder", "me")
	if got, want := sp.Step(step), "git atlas -C "+text.ShellQuote(abs)+" transition s1 code dispatched --holder me --remote origin"; got != want {
		t.Errorf("with -C and --remote: %q, want %q", got, want)
	}
	own := fault.Do("recover", "dir", fault.Placeholder("<your checkout>"), "run", "r1", "stage", "plan", "remote", "up")
	if got, want := sp.Step(own), "git atlas -C <your checkout> recover r1 --stage plan --remote up"; got != want {
		t.Errorf("a step's own -C and remote: %q, want %q", got, want)
	}
	local := ""
	if got, want := (&Env{askedRemote: &local}).spelling().Step(step), "git atlas transition s1 code dispatched --holder me --remote ''"; got != want {
		t.Errorf("with --remote= (local only): %q, want %q", got, want)
	}
	if got, want := (&Env{}).spelling().Step(step), StepCommand(step); got != want {
		t.Errorf("without globals: %q, want %q", got, want)
	}
}
