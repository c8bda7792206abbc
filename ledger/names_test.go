package ledger

import (
	"errors"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// TestReservedNames: names the worktree layout keeps for itself are refused for stages
// and jobs, in any case; names that merely look alike are not.
func TestReservedNames(t *testing.T) {
	t.Parallel()
	bad := []string{"union", "Union", "UNION", "replay-a-1", "replay-code-12", "Replay-x-y-3", "a.atlas-materializing", "b.ATLAS-Materializing"}
	good := []string{"unions", "union-2", "replay", "replay-a", "replay-1", "replays-a-1", "atlas-materializing", "a.atlas-materialize"}
	for _, n := range bad {
		if err := CheckStages([]StageDef{{Name: n}}); !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "reserved") {
			t.Errorf("stage %q: err = %v, want a usage error saying reserved", n, err)
		}
		s := &State{RunID: "r"}
		if err := AddJobs(s, []JobSpec{{ID: n}}); !errors.Is(err, fault.ErrUsage) || len(s.Jobs) != 0 {
			t.Errorf("job %q: err = %v, jobs %v", n, err, s.Jobs)
		}
		if err := CheckNodeName("stage", n); err != nil && !strings.Contains(fault.HintOf(err), "union, replay-<stage>-<n>") {
			t.Errorf("hint %q does not name the reserved names", fault.HintOf(err))
		}
	}
	for _, n := range good {
		if err := CheckStages([]StageDef{{Name: n}}); err != nil {
			t.Errorf("stage %q refused: %v", n, err)
		}
		if err := AddJobs(&State{RunID: "r"}, []JobSpec{{ID: n}}); err != nil {
			t.Errorf("job %q refused: %v", n, err)
		}
	}
}

// TestCaseTwins: names that differ only in case would share a directory and a branch
// on a case-insensitive file system: refused among stages, among jobs, and between a
// job and a stage (jobs and stages share the worktree namespace).
func TestCaseTwins(t *testing.T) {
	t.Parallel()
	if err := CheckStages([]StageDef{{Name: "Build"}, {Name: "build"}}); !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "only in case") {
		t.Errorf("stages Build, build: err = %v", err)
	}
	s := &State{RunID: "r", Stages: []StageState{{Name: "plan"}}}
	if err := AddJobs(s, []JobSpec{{ID: "a"}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"A", "plan", "PLAN"} {
		if err := AddJobs(s, []JobSpec{{ID: id}}); !errors.Is(err, fault.ErrUsage) {
			t.Errorf("job %q: err = %v, want usage", id, err)
		}
	}
	if err := AddJobs(s, []JobSpec{{ID: "x"}, {ID: "X"}}); !errors.Is(err, fault.ErrUsage) || len(s.Jobs) != 1 {
		t.Errorf("batch x, X: err = %v, jobs %d", err, len(s.Jobs))
	}
}

// The hand-written check of a name's shape is the contract's pattern (docs/contract.md §3),
// on names at every length around the limit and on random strings of the characters
// at its edges.
func TestNameShapeIsThePattern(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	cases := []string{"", "a", "-a", ".a", "_a", "a-", "a.b", "a_b", "Z9", "a\n", "\na", "a b", "é", "aé", "a/b", "a\x00", "a:b", "a~", "a@", "a[", "a`", "a{"}
	for n := 60; n <= 66; n++ {
		cases = append(cases, strings.Repeat("a", n), "x"+strings.Repeat("-", n-1))
	}
	const alphabet = "aAzZ09._-/@[`{:~ \n\x00\xff"
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, rng.IntN(8))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, c := range cases {
		if got, want := nameShape(c), re.MatchString(c); got != want {
			t.Errorf("nameShape(%q) = %v, the pattern says %v", c, got, want)
		}
	}
}
