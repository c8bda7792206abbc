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
	vr := RunVerify(context.Background(), trust.Once("echo started; sleep 30 & sleep 30"), t.TempDir(), 200*time.Millisecond)
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
	for _, tc := range []struct {
		cmd     string
		code    int
		outcome string
	}{
		{"true", 0, "passed"},
		{"exit 3", 3, "failed (exit 3)"},
		{"exit 124", 124, "failed (exit 124)"}, // a command's own 124 is not a timeout
	} {
		vr := RunVerify(context.Background(), trust.Once(tc.cmd), t.TempDir(), time.Minute)
		if vr.ExitCode != tc.code || vr.TimedOut || vr.Passed != (tc.code == 0) {
			t.Errorf("%s: got %+v", tc.cmd, vr)
		}
		if got := Outcome(vr, time.Minute); got != tc.outcome {
			t.Errorf("%s: Outcome = %q, want %q", tc.cmd, got, tc.outcome)
		}
	}
}
