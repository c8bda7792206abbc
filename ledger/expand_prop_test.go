package ledger

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/testknob"
)

// TestExpansionProperties drives random DAGs whose receipts expand the graph (random
// children, some refused: over a cap, a cycle, an unknown need), whose jobs carry
// verifies that pass or fail, and to which jobs are added while they run. Every
// worker always acts, so every step does something. It checks after every step: no
// job runs (or is DONE) before its needs are DONE; gas never goes up once the first
// claim fixed it, and never passes its limit; the run holds no more jobs than
// --max-jobs and no job is deeper than --max-depth; a refused expansion changes
// nothing; and the run halts (no job ready, none running) within a number of steps
// bounded by its gas and job cap: every claim spends gas, every receipt or verify
// ends a claim, every add uses up the job cap.
func TestExpansionProperties(t *testing.T) {
	t.Parallel()
	seeds := 300
	if testing.Short() {
		seeds = 60
	}
	if testknob.Long() {
		seeds = 3000
	}
	for seed := 0; seed < seeds; seed++ {
		if msg, trace := expansionRun(uint64(seed)); msg != "" {
			t.Fatalf("seed %d: %s\ntrace:\n%s", seed, msg, joinLines(trace))
		}
	}
}

func expansionRun(seed uint64) (string, []string) {
	rng := rand.New(rand.NewPCG(seed, 0x51ed27))
	h := &Header{RunID: "r", Kind: KindGraph, MaxAttempts: 1 + rng.IntN(3), MaxJobs: 3 + rng.IntN(30), MaxDepth: 1 + rng.IntN(4)}
	if rng.IntN(3) == 0 {
		h.Gas = 1 + rng.IntN(20)
	}
	s := &State{RunID: "r", Status: RunRunning}
	var trace []string
	next := 0
	newID := func() string { next++; return fmt.Sprintf("j%d", next) }
	// spec makes a job: random needs among the live jobs and earlier batch members,
	// a verify (and a worktree to run it in) half of the time.
	spec := func(batch []JobSpec) JobSpec {
		sp := JobSpec{ID: newID()}
		for _, j := range s.Jobs {
			if j.State != JobFailed && rng.IntN(5) == 0 {
				sp.Needs = append(sp.Needs, j.ID)
			}
		}
		for _, b := range batch {
			if rng.IntN(3) == 0 {
				sp.Needs = append(sp.Needs, b.ID)
			}
		}
		if rng.IntN(2) == 0 {
			sp.Verify = "check"
			s.Worktrees = append(s.Worktrees, WorktreeRec{Node: sp.ID, Path: "/wt/" + sp.ID})
		}
		return sp
	}
	for n := 1 + rng.IntN(5); n > 0 && len(s.Jobs) < MaxJobs(h); n-- {
		if err := AddJobs(s, []JobSpec{spec(nil)}); err != nil {
			return "initial add: " + err.Error(), trace
		}
	}
	claims, gasCap := 0, 0
	now := t0
	bound := 3*(GasLimit(h, s)+MaxJobs(h)) + MaxJobs(h) + 10
	for step := 0; ; step++ {
		if step > bound {
			return fmt.Sprintf("no halt within %d steps: %s", bound, js(JobFrontier(h, s))), trace
		}
		f := JobFrontier(h, s)
		owed := OwedVerifies(s)
		var working []string
		for _, id := range f.Running {
			if !s.Job(id).VerifyOwed {
				working = append(working, id)
			}
		}
		if len(f.Ready) == 0 && len(f.Running) == 0 {
			if !Halted(h, s) {
				return "frontier empty but not halted", trace
			}
			if claims > GasLimit(h, s) {
				return fmt.Sprintf("%d claims, gas %d", claims, GasLimit(h, s)), trace
			}
			return "", trace
		}
		switch r := rng.IntN(10); {
		case len(owed) > 0 && r < 3:
			id := owed[rng.IntN(len(owed))]
			vr := &VerifyResult{Command: "check", Passed: rng.IntN(3) > 0}
			o, err := SettleVerify(h, s, id, s.Job(id).Lease, vr)
			trace = append(trace, fmt.Sprintf("verify %s passed=%v -> %s %v", id, vr.Passed, o.To, err))
			if err != nil {
				return "settle: " + err.Error(), trace
			}
		case len(f.Ready) > 0 && (r < 6 || len(working) == 0):
			g, err := Claim(h, s, "", "w", now, time.Minute, RandomNonce())
			if err != nil || g.Job == nil {
				return fmt.Sprintf("claim with %v ready: %v %+v", f.Ready, err, g), trace
			}
			claims++
			trace = append(trace, "claim "+g.Lease)
			for _, n := range g.Job.Needs {
				if s.Job(n).State != JobDone {
					return fmt.Sprintf("claimed %s before its need %s is DONE", g.Job.ID, n), trace
				}
			}
		case len(working) > 0 && r < 8:
			id := working[rng.IntN(len(working))]
			status := []string{ReceiptOK, ReceiptOK, ReceiptOK, ReceiptTimeout, ReceiptFailed}[rng.IntN(5)]
			var kids []JobSpec
			if status == ReceiptOK {
				for k := rng.IntN(4); k > 0; k-- {
					kids = append(kids, spec(kids))
				}
				switch rng.IntN(8) {
				case 0:
					if len(kids) > 1 {
						kids[0].Needs = append(kids[0].Needs, kids[len(kids)-1].ID) // a cycle
					}
				case 1:
					if len(kids) > 0 {
						kids[0].Needs = append(kids[0].Needs, "ghost")
					}
				}
			}
			before := js(s)
			// The receipt and its expansion are one write: on a refused expansion the
			// caller keeps the state it had.
			trial := copyJobState(s)
			o, err := Done(h, trial, id, trial.Job(id).Lease, status, nil)
			if err == nil {
				err = Expand(h, trial, id, kids)
			}
			trace = append(trace, fmt.Sprintf("done %s %s +%d children -> %s %v", id, status, len(kids), o.To, err))
			if err != nil {
				if js(s) != before {
					return "a refused receipt changed the state", trace
				}
				// The worker reports again without children.
				if _, err := Done(h, s, id, s.Job(id).Lease, status, nil); err != nil {
					return "plain receipt: " + err.Error(), trace
				}
			} else {
				*s = *trial
			}
		case len(working) > 0:
			now = now.Add(2 * time.Minute)
			out := Reap(h, s, now)
			trace = append(trace, fmt.Sprintf("reap %d", len(out)))
		default:
			if len(s.Jobs) < MaxJobs(h) {
				sp := spec(nil)
				err := AddJobs(s, []JobSpec{sp})
				trace = append(trace, fmt.Sprintf("add %s -> %v", sp.ID, err))
			} else if err := CheckJobCap(h, s, 1); err == nil {
				return "job cap not enforced", trace
			}
		}
		// Invariants.
		if len(s.Jobs) > MaxJobs(h) {
			return fmt.Sprintf("%d jobs, cap %d", len(s.Jobs), MaxJobs(h)), trace
		}
		if s.GasSpent != claims || s.GasSpent > GasLimit(h, s) {
			return fmt.Sprintf("gas spent %d, claims %d, limit %d", s.GasSpent, claims, GasLimit(h, s)), trace
		}
		if claims > 0 {
			if gasCap == 0 {
				gasCap = GasLimit(h, s)
			}
			if GasLimit(h, s) != gasCap {
				return fmt.Sprintf("gas limit moved from %d to %d", gasCap, GasLimit(h, s)), trace
			}
		}
		for _, j := range s.Jobs {
			if j.Depth > MaxDepth(h) {
				return fmt.Sprintf("job %s at depth %d, cap %d", j.ID, j.Depth, MaxDepth(h)), trace
			}
			if j.State == JobRunning || j.State == JobDone {
				for _, n := range j.Needs {
					if s.Job(n).State != JobDone {
						return fmt.Sprintf("job %s is %s though its need %s is %s", j.ID, j.State, n, s.Job(n).State), trace
					}
				}
			}
		}
	}
}

// copyJobState copies the parts of a state the job machine changes.
func copyJobState(s *State) *State {
	c := *s
	c.Jobs = make([]Job, len(s.Jobs))
	for i, j := range s.Jobs {
		j.Needs = append([]string(nil), j.Needs...)
		c.Jobs[i] = j
	}
	c.Worktrees = append([]WorktreeRec(nil), s.Worktrees...)
	return &c
}
