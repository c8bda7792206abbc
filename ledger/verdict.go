package ledger

import (
	"slices"
	"strings"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// A graph run's verdict (docs/contract.md §5.3, the seeds' AGGREGATE step): how its success
// criteria (start --criterion) stand, judged from the jobs that carry them.
const (
	VerdictResolved   = "resolved"   // every criterion met by a DONE, verified job
	VerdictUnverified = "unverified" // every criterion met by a DONE job, some by unverified ones only
	VerdictUnresolved = "unresolved" // some criterion has no DONE job
)

// Verdict is the run's verdict and the criteria behind it: each criterion is in
// exactly one of Resolved, Unverified and Unresolved.
type Verdict struct {
	Verdict    string   `json:"verdict"`
	Resolved   []string `json:"resolved"`
	Unverified []string `json:"unverified"`
	Unresolved []string `json:"unresolved"`
}

// RunVerdict judges the run's criteria; nil when the run has none (nothing to judge).
func RunVerdict(h *Header, s *State) *Verdict {
	if len(h.Criteria) == 0 {
		return nil
	}
	v := &Verdict{Resolved: []string{}, Unverified: []string{}, Unresolved: []string{}}
	for _, c := range h.Criteria {
		done, verified := false, false
		for i := range s.Jobs {
			j := &s.Jobs[i]
			if j.State != JobDone || !slices.Contains(j.Criteria, c) {
				continue
			}
			done = true
			verified = verified || JobVerified(j)
		}
		switch {
		case verified:
			v.Resolved = append(v.Resolved, c)
		case done:
			v.Unverified = append(v.Unverified, c)
		default:
			v.Unresolved = append(v.Unresolved, c)
		}
	}
	switch {
	case len(v.Unresolved) > 0:
		v.Verdict = VerdictUnresolved
	case len(v.Unverified) > 0:
		v.Verdict = VerdictUnverified
	default:
		v.Verdict = VerdictResolved
	}
	return v
}

// CheckCriteria refuses a job criterion that is not one of the run's own (exit 4),
// naming the run's criteria.
func CheckCriteria(h *Header, specs []JobSpec) error {
	for _, sp := range specs {
		for _, c := range sp.Criteria {
			if !slices.Contains(h.Criteria, c) {
				if len(h.Criteria) == 0 {
					return fault.NotFound("job %s names criterion %q, but run %s has no criteria", sp.ID, c, h.RunID).WithHint("criteria are given at `%s`", fault.Do("start", "criterion", fault.Placeholder("TEXT")))
				}
				return fault.Named(fault.ErrNotFound, "job %s names criterion %q, which is not one of run %s's: %s", sp.ID, c, h.RunID, quoteList(h.Criteria)).WithHint("{criterion} must repeat one of the run's criteria exactly")
			}
		}
	}
	return nil
}

func quoteList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = `"` + s + `"`
	}
	return strings.Join(q, ", ")
}
