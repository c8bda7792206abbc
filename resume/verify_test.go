package resume

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/trust"
)

// A verify that outlives its timeout is killed with its whole process group and
// reported as timed out, never as just another exit code.
func TestRunVerifyTimeout(t *testing.T) {
	t.Parallel()
	vr := RunVerify(context.Background(), trust.Once("echo started; sleep 30 & sleep 30"), t.TempDir(), 200*time.Millisecond, time.Now())
	if !vr.TimedOut || vr.Passed || vr.ExitCode != 124 {
		t.Fatalf("got %+v, want timed out, exit 124", vr)
	}
	if !strings.Contains(vr.Tail, "started") {
		t.Errorf("tail %q lost the output", vr.Tail)
	}
	if got, want := Outcome(vr, 200*time.Millisecond), "timed out after 200ms"; got != want {
		t.Errorf("Outcome = %q, want %q", got, want)
	}
}

func TestRunVerifyExitCodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cmd     string
		code    int
		outcome string
	}{
		{"true", 0, "passed"},
		{"exit 3", 3, "failed (exit 3)"},
		{"exit 124", 124, "failed (exit 124)"}, // a command's own 124 is not a timeout
	} {
		vr := RunVerify(context.Background(), trust.Once(tc.cmd), t.TempDir(), time.Minute, time.Now())
		if vr.ExitCode != tc.code || vr.TimedOut || vr.Passed != (tc.code == 0) {
			t.Errorf("%s: got %+v", tc.cmd, vr)
		}
		if got := Outcome(vr, time.Minute); got != tc.outcome {
			t.Errorf("%s: Outcome = %q, want %q", tc.cmd, got, tc.outcome)
		}
	}
}

// A verify runs with git.UserEnv: none of the variables a calling hook leaks (they
// would point the verify's own git calls at another repository, index or object store,
// or limit its pathspecs), every one of the user's own settings (locale, pager, editor).
func TestRunVerifyEnvironment(t *testing.T) {
	// Serial: what it tests is the process environment a verify inherits, set here.
	for _, v := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_QUARANTINE_PATH", "GIT_LITERAL_PATHSPECS", "GIT_REFLOG_ACTION"} {
		t.Setenv(v, "/leaked")
	}
	t.Setenv("LANG", "xx_YY.UTF-8")
	t.Setenv("GIT_EDITOR", "my-editor")
	script := `env | grep -E '^(GIT_DIR|GIT_WORK_TREE|GIT_INDEX_FILE|GIT_ALTERNATE_OBJECT_DIRECTORIES|GIT_NAMESPACE|GIT_QUARANTINE_PATH|GIT_LITERAL_PATHSPECS|GIT_REFLOG_ACTION)=' && exit 1
test "$LANG" = xx_YY.UTF-8 && test "$GIT_EDITOR" = my-editor`
	vr := RunVerify(context.Background(), trust.Once(script), t.TempDir(), time.Minute, time.Now())
	if !vr.Passed {
		t.Fatalf("the verify saw a leaked variable or lost a user's setting: %+v", vr)
	}
}
