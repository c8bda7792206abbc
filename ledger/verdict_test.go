package ledger

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// TestRunVerdict: every combination of three criteria, each met by a DONE verified job
// (resolved), only by DONE unverified ones (unverified), or by no DONE job (unmet,
// though a PENDING, RUNNING or FAILED job may carry it): the verdict and the criteria
// behind it.
func TestRunVerdict(t *testing.T) {
	t.Parallel()
	crit := []string{"c1", "c2", "c3"}
	const (
		met = iota
		unverified
		unmet
	)
	name := []string{"met", "unverified", "unmet"}
	for combo := range 27 {
		h := &Header{RunID: "r", Kind: KindGraph, Criteria: crit}
		s := &State{RunID: "r"}
		want := map[int][]string{}
		k := combo
		label := ""
		for _, c := range crit {
			how := k % 3
			k /= 3
			label += c + "=" + name[how] + " "
			want[how] = append(want[how], c)
			switch how {
			case met:
				// A verified job and an unverified one: the verified one decides.
				s.Jobs = append(s.Jobs,
					Job{ID: c + "v", State: JobDone, Criteria: []string{c}, VerifyResult: &VerifyResult{Passed: true}},
					Job{ID: c + "u", State: JobDone, Criteria: []string{c}, Unverified: UnverifiedNoCommand})
			case unverified:
				s.Jobs = append(s.Jobs,
					Job{ID: c + "u", State: JobDone, Criteria: []string{c}, Unverified: UnverifiedNoWorktree},
					Job{ID: c + "f", State: JobDone, Criteria: []string{c}, VerifyResult: &VerifyResult{Passed: false}},
					Job{ID: c + "r", State: JobRunning, Criteria: []string{c}, VerifyOwed: true})
			case unmet:
				s.Jobs = append(s.Jobs,
					Job{ID: c + "p", State: JobPending, Criteria: []string{c}, VerifyResult: &VerifyResult{Passed: true}},
					Job{ID: c + "x", State: JobFailed, Criteria: []string{c}})
			}
		}
		v := RunVerdict(h, s)
		wantVerdict := VerdictResolved
		switch {
		case len(want[unmet]) > 0:
			wantVerdict = VerdictUnresolved
		case len(want[unverified]) > 0:
			wantVerdict = VerdictUnverified
		}
		if v.Verdict != wantVerdict || !sameList(v.Resolved, want[met]) || !sameList(v.Unverified, want[unverified]) || !sameList(v.Unresolved, want[unmet]) {
			t.Errorf("%s: got %+v, want %s", label, v, wantVerdict)
		}
	}
	if v := RunVerdict(&Header{RunID: "r"}, &State{}); v != nil {
		t.Errorf("a run without criteria has a verdict: %+v", v)
	}
}

func sameList(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || slices.Equal(a, b))
}

func TestCheckCriteria(t *testing.T) {
	t.Parallel()
	h := &Header{RunID: "r", Criteria: []string{"tests pass", "docs"}}
	if err := CheckCriteria(h, []JobSpec{{ID: "a", Criteria: []string{"docs", "tests pass"}}}); err != nil {
		t.Fatal(err)
	}
	err := CheckCriteria(h, []JobSpec{{ID: "a", Criteria: []string{"doc"}}})
	if !errors.Is(err, fault.ErrNotFound) || !containsAll(err.Error(), `"tests pass"`, `"docs"`, `"doc"`) {
		t.Fatalf("unknown criterion: %v", err)
	}
	if err := CheckCriteria(&Header{RunID: "r"}, []JobSpec{{ID: "a", Criteria: []string{"x"}}}); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("criterion on a run without criteria: %v", err)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
