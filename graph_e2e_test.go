package gitatlas_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/testenv"
)

// atlasCLI runs the built git-atlas binary against one repository.
type atlasCLI struct {
	bin, repo string
	env       []string
}

// run returns stdout and the exit code; stderr goes into the error for failures.
func (a atlasCLI) run(args ...string) ([]byte, int, string) {
	cmd := exec.Command(a.bin, append([]string{"-C", a.repo, "--json"}, args...)...)
	cmd.Env = a.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return nil, -1, err.Error()
		}
		code = ee.ExitCode()
	}
	return stdout.Bytes(), code, stderr.String()
}

func (a atlasCLI) must(t *testing.T, args ...string) []byte {
	t.Helper()
	out, code, stderr := a.run(args...)
	if code != 0 {
		t.Fatalf("git atlas %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	return out
}

func newAtlasRepo(t *testing.T) atlasCLI {
	t.Helper()
	work := t.TempDir()
	home := filepath.Join(work, "home")
	if err := testenv.Home(home); err != nil {
		t.Fatal(err)
	}
	vars := gitEnv(home)
	repo := filepath.Join(work, "repo")
	if err := makeFixture(repo, vars); err != nil {
		t.Fatal(err)
	}
	return atlasCLI{bin: filepath.Join(atlasBinary(t), "git-atlas"), repo: repo, env: append(os.Environ(), vars...)}
}

type claimOut struct {
	Job *struct {
		ID string `json:"id"`
	} `json:"job"`
	Lease     *string `json:"lease"`
	ExpiresAt *string `json:"expires_at"`
	Reason    *string `json:"reason"`
}

type receipt struct{ job, lease, status string }

// record is what the workers saw, shared under a mutex.
type record struct {
	mu       sync.Mutex
	grants   []receipt // job, lease
	accepted []receipt
	rejected []receipt
}

func (r *record) add(list *[]receipt, x receipt) {
	r.mu.Lock()
	*list = append(*list, x)
	r.mu.Unlock()
}

// TestGraphDrainWorkers: 8 worker processes drain a 60-job DAG through the CLI (4 and
// 20 without the sweeps build tag), with
// random failed and timeout receipts, leases left to expire (by workers that die or
// come back late) and reaped. Then, from the ledger: every job is DONE or FAILED; gas
// spent equals the job_claimed events and the claims the workers were granted; no job
// ever had two live leases; every receipt a worker saw accepted is in the log, and no
// rejected one is. The short size still has two components (a failure stops part of
// one while the other drains), jobs that need one or two others, four workers racing
// for every claim, and worker 0's late receipt (a reap and a stale receipt in every
// run); the full pass keeps the breadth of random receipts and lease expiries.
func TestGraphDrainWorkers(t *testing.T) {
	t.Parallel() // its own repository and processes: runs beside the transcripts
	if testing.Short() {
		t.Skip("worker processes draining a DAG: skipped with -short")
	}
	jobs, workers := testenv.Rounds(20, 60), testenv.Rounds(4, 8)
	comps := jobs / 10
	a := newAtlasRepo(t)
	a.must(t, "start", "--id", "e2e", "--graph")
	rng := rand.New(rand.NewPCG(3, 3))
	// jobs/10 components of 10 jobs (job i is in component i % comps); each job needs
	// one or two earlier jobs of its component, so a failure fails part of one component.
	for i := range jobs {
		args := []string{"job", "add", "e2e", fmt.Sprintf("j%03d", i)}
		if earlier := i / comps; earlier > 0 {
			for k := 0; k < 1+rng.IntN(2); k++ {
				need := fmt.Sprintf("j%03d", i%comps+comps*rng.IntN(earlier))
				if !contains(args, need) {
					args = append(args, "--needs", need)
				}
			}
		}
		a.must(t, args...)
	}

	rec := &record{}
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			if err := worker(a, w, rec); err != nil {
				t.Errorf("worker %d: %v", w, err)
			}
		}(w)
	}
	wg.Wait()
	t.Logf("drained %d jobs with %d workers in %s: %d claims, %d receipts accepted, %d rejected",
		jobs, workers, time.Since(start).Round(time.Millisecond), len(rec.grants), len(rec.accepted), len(rec.rejected))
	if t.Failed() {
		return
	}

	var list struct {
		Jobs []struct {
			ID    string `json:"id"`
			State string `json:"state"`
		} `json:"jobs"`
		GasSpent int    `json:"gas_spent"`
		Reason   string `json:"reason"`
	}
	if err := json.Unmarshal(a.must(t, "job", "list", "e2e"), &list); err != nil {
		t.Fatal(err)
	}
	states := map[string]int{}
	for _, j := range list.Jobs {
		states[j.State]++
		if j.State != "DONE" && j.State != "FAILED" {
			t.Errorf("job %s ended %s", j.ID, j.State)
		}
	}
	t.Logf("jobs: %v", states)
	if len(list.Jobs) != jobs || list.Reason != "finished" {
		t.Errorf("%d jobs, reason %q", len(list.Jobs), list.Reason)
	}

	var log struct {
		Events []struct {
			Seq  int             `json:"seq"`
			Type string          `json:"type"`
			Time string          `json:"time"`
			Job  string          `json:"job"`
			Data json.RawMessage `json:"data"`
		} `json:"events"`
	}
	if err := json.Unmarshal(a.must(t, "log", "e2e"), &log); err != nil {
		t.Fatal(err)
	}
	// Replay the log: each job holds at most one lease at a time, a receipt ends the
	// lease it names, a reap ends only expired leases.
	type lease struct {
		token   string
		expires time.Time
	}
	live := map[string]lease{}
	issued := map[string]bool{}
	claims, reaps := 0, 0
	done := map[receipt]int{}
	for _, ev := range log.Events {
		var d struct {
			Lease     string `json:"lease"`
			ExpiresAt string `json:"expires_at"`
			Status    string `json:"status"`
			Jobs      []struct {
				ID    string `json:"id"`
				Lease string `json:"lease"`
			} `json:"jobs"`
		}
		_ = json.Unmarshal(ev.Data, &d)
		at := parseTime(t, ev.Time)
		switch ev.Type {
		case "job_claimed":
			claims++
			if cur, ok := live[ev.Job]; ok {
				t.Errorf("event %d: %s claimed as %s while %s is live", ev.Seq, ev.Job, d.Lease, cur.token)
			}
			if issued[d.Lease] {
				t.Errorf("event %d: token %s issued twice", ev.Seq, d.Lease)
			}
			issued[d.Lease] = true
			live[ev.Job] = lease{d.Lease, parseTime(t, d.ExpiresAt)}
		case "job_renewed":
			if live[ev.Job].token != d.Lease {
				t.Errorf("event %d: renewed %s with %s, live %s", ev.Seq, ev.Job, d.Lease, live[ev.Job].token)
			}
			live[ev.Job] = lease{d.Lease, parseTime(t, d.ExpiresAt)}
		case "job_done":
			if live[ev.Job].token != d.Lease {
				t.Errorf("event %d: receipt for %s with %s, live %s", ev.Seq, ev.Job, d.Lease, live[ev.Job].token)
			}
			delete(live, ev.Job)
			done[receipt{ev.Job, d.Lease, d.Status}]++
		case "job_reaped":
			for _, r := range d.Jobs {
				reaps++
				cur := live[r.ID]
				if cur.token != r.Lease || at.Before(cur.expires) {
					t.Errorf("event %d: reaped %s %s (live %s until %s) at %s", ev.Seq, r.ID, r.Lease, cur.token, cur.expires, at)
				}
				delete(live, r.ID)
			}
		}
	}
	if len(live) != 0 {
		t.Errorf("leases still live at the end: %v", live)
	}
	if claims != list.GasSpent || claims != len(rec.grants) {
		t.Errorf("gas spent %d, job_claimed events %d, claims granted to workers %d", list.GasSpent, claims, len(rec.grants))
	}
	for _, g := range rec.grants {
		if !issued[g.lease] {
			t.Errorf("granted %s %s is not in the log", g.job, g.lease)
		}
	}
	for _, r := range rec.accepted {
		if done[r] != 1 {
			t.Errorf("accepted receipt %v appears %d times in the log", r, done[r])
		}
	}
	if len(done) != len(rec.accepted) {
		t.Errorf("%d receipts in the log, %d accepted by workers", len(done), len(rec.accepted))
	}
	for _, r := range rec.rejected {
		for _, s := range []string{"ok", "timeout", "failed"} {
			if done[receipt{r.job, r.lease, s}] > 0 {
				t.Errorf("rejected receipt %v is in the log", r)
			}
		}
	}
	if reaps == 0 || len(rec.rejected) == 0 {
		t.Errorf("the run exercised %d reaps and %d stale receipts; want some of each", reaps, len(rec.rejected))
	}
}

func contains(list []string, s string) bool {
	return slices.Contains(list, s)
}

func parseTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	return v
}

// worker claims until the run halts. Most jobs get a receipt (ok, some timeout, some
// failed); a few are claimed with a 1ms lease and either abandoned (a worker that
// died) or answered late, after the lease may have been reaped. Worker 0's first
// claim is always answered late, so that every run has a reap and a stale receipt
// however few claims it makes.
func worker(a atlasCLI, w int, rec *record) error {
	rng := rand.New(rand.NewPCG(uint64(w), 77))
	holder := fmt.Sprintf("w%d", w)
	for grants := 0; ; {
		short := rng.IntN(100) < 6
		late := rng.IntN(2) == 1
		if w == 0 && grants == 0 {
			short, late = true, true
		}
		ttl := "2m"
		if short {
			ttl = "1ms"
		}
		out, code, stderr := a.run("job", "claim", "e2e", "--holder", holder, "--ttl", ttl)
		var c claimOut
		if code == 0 || code == 5 {
			if err := json.Unmarshal(out, &c); err != nil {
				return fmt.Errorf("claim output %q: %w", out, err)
			}
		}
		switch {
		case code == 5 && c.Reason != nil && (*c.Reason == "finished" || *c.Reason == "halted"):
			return nil
		case code != 0:
			return fmt.Errorf("claim: exit %d: %s", code, stderr)
		case c.Job == nil:
			// Waiting: return expired leases to the pool, then poll again after a
			// moment (a polling interval, not synchronisation).
			if _, code, stderr := a.run("reap", "e2e", "--holder", holder); code != 0 {
				return fmt.Errorf("reap: exit %d: %s", code, stderr)
			}
			time.Sleep(time.Duration(5+rng.IntN(20)) * time.Millisecond)
			continue
		}
		job, lease := c.Job.ID, *c.Lease
		rec.add(&rec.grants, receipt{job, lease, ""})
		grants++
		if short && !late {
			continue // died holding the lease: a reap must return the job
		}
		if short {
			// Late: by the time the receipt comes, the lease has expired and a reap
			// (this one or another worker's) has returned the job.
			if _, code, stderr := a.run("reap", "e2e"); code != 0 {
				return fmt.Errorf("reap: exit %d: %s", code, stderr)
			}
		}
		if !short && rng.IntN(10) == 0 {
			if _, code, stderr := a.run("job", "renew", "e2e", job, "--lease", lease, "--ttl", "3m"); code != 0 {
				return fmt.Errorf("renew %s: exit %d: %s", lease, code, stderr)
			}
		}
		status := "ok"
		switch r := rng.IntN(100); {
		case r < 8:
			status = "timeout"
		case r < 11:
			status = "failed"
		}
		args := []string{"job", "done", "e2e", job, "--lease", lease, "--status", status, "--holder", holder}
		if status == "ok" {
			args = append(args, "--data", fmt.Sprintf(`{"worker":%d}`, w))
		}
		_, code, stderr = a.run(args...)
		switch {
		case code == 0:
			rec.add(&rec.accepted, receipt{job, lease, status})
		case code == 3 && short:
			rec.add(&rec.rejected, receipt{job, lease, status}) // reaped before the late receipt
		default:
			return fmt.Errorf("done %s %s: exit %d: %s", lease, status, code, stderr)
		}
	}
}
