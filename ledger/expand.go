package ledger

import "github.com/git-atlas/git-atlas/internal/fault"

// Expansion (docs/contract.md §5.3, the seeds' DECOMPOSE): a job's ok receipt may add children,
// in the same ledger write, under the run's caps on jobs and depth, so that a runaway
// agent cannot grow a run without bound. Gas stays as fixed at the first claim.

// Default caps of a graph run (start --max-jobs, --max-depth).
const (
	DefaultMaxJobs  = 200
	DefaultMaxDepth = 8
)

// MaxJobs is the most jobs the run may hold.
func MaxJobs(h *Header) int {
	if h.MaxJobs > 0 {
		return h.MaxJobs
	}
	return DefaultMaxJobs
}

// MaxDepth is the longest chain of parent → child expansions the run allows.
func MaxDepth(h *Header) int {
	if h.MaxDepth > 0 {
		return h.MaxDepth
	}
	return DefaultMaxDepth
}

// CheckJobCap refuses adding n jobs to a run that would then hold more than its cap.
func CheckJobCap(h *Header, s *State, n int) error {
	if len(s.Jobs)+n > MaxJobs(h) {
		return fault.Named(fault.ErrRefused, "run %s would hold %d jobs, over its cap of %d (start {max_jobs}); nothing added", s.RunID, len(s.Jobs)+n, MaxJobs(h))
	}
	return nil
}

// Expand adds children to the run as the expansion of parent, one level deeper than
// it: refused (nothing added) over the job or depth cap, for a criterion that is not
// the run's, and for anything `job add` refuses (cycles, unknown needs, duplicates).
// The caller applies the parent's receipt in the same write.
func Expand(h *Header, s *State, parent string, children []JobSpec) error {
	p := s.Job(parent)
	if p == nil {
		return fault.NotFound("run %s has no job %q", s.RunID, parent)
	}
	if len(children) == 0 {
		return nil
	}
	depth := p.Depth + 1
	if depth > MaxDepth(h) {
		return fault.Named(fault.ErrRefused, "children of job %s would be at expansion depth %d, over the run's cap of %d (start {max_depth}); nothing written", parent, depth, MaxDepth(h))
	}
	if err := CheckJobCap(h, s, len(children)); err != nil {
		return err
	}
	if err := CheckCriteria(h, children); err != nil {
		return err
	}
	n := len(s.Jobs)
	if err := AddJobs(s, children); err != nil {
		return err
	}
	for i := n; i < len(s.Jobs); i++ {
		s.Jobs[i].Parent, s.Jobs[i].Depth = parent, depth
	}
	return nil
}
