package resume

import "github.com/git-atlas/git-atlas/gitstate"

// TODO(merge issue-3): replace with gitstate's job functions.
func resetRunningJobs(s *gitstate.State) {
	for i := range s.Jobs {
		if s.Jobs[i].State == gitstate.JobRunning {
			s.Jobs[i].State, s.Jobs[i].Lease, s.Jobs[i].Holder, s.Jobs[i].ExpiresAt = gitstate.JobPending, "", "", ""
		}
	}
}

func gasRemaining(r *gitstate.Run) int {
	limit := r.Header.Gas
	if limit == 0 {
		limit = len(r.State.Jobs)*(r.Header.MaxAttempts) + len(r.State.Jobs)
	}
	return limit - r.State.GasSpent
}

func readyJobIDs(r *gitstate.Run) []string {
	ids := []string{}
	if gasRemaining(r) <= 0 {
		return ids
	}
	for _, j := range r.State.Jobs {
		if j.State != gitstate.JobPending || j.Attempts >= r.Header.MaxAttempts {
			continue
		}
		ok := true
		for _, n := range j.Needs {
			if d := r.State.Job(n); d == nil || d.State != gitstate.JobDone {
				ok = false
			}
		}
		if ok {
			ids = append(ids, j.ID)
		}
	}
	return ids
}
