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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/testenv"
)

// remoteFleet is a bare repository standing for the shared remote and clones of it,
// each an atlasCLI with origin pointing at the bare one.
type remoteFleet struct {
	bare   string
	env    []string
	clones []atlasCLI
}

func newRemoteFleet(t *testing.T, clones int) remoteFleet {
	t.Helper()
	seed, env := stressRepo(t)
	work := filepath.Dir(seed)
	bare := filepath.Join(work, "remote.git")
	mustGit(t, work, env, "", "init", "-q", "--bare", "-b", "main", bare)
	mustGit(t, seed, env, "", "remote", "add", "origin", bare)
	mustGit(t, seed, env, "", "push", "-q", "origin", "main")
	// stressRepo put the binary it built first on the PATH it sets last.
	var atlas string
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			dir, _, _ := strings.Cut(p, string(os.PathListSeparator))
			atlas = filepath.Join(dir, "git-atlas")
		}
	}
	f := remoteFleet{bare: bare, env: env}
	for k := range clones {
		dir := filepath.Join(work, fmt.Sprintf("clone%d", k))
		mustGit(t, work, env, "", "clone", "-q", bare, dir)
		f.clones = append(f.clones, atlasCLI{bin: atlas, repo: dir, env: env})
	}
	return f
}

// fsck fails the test when git fsck finds anything wrong in dir (dangling objects,
// which an aborted write may leave, are not wrong).
func fsck(t *testing.T, dir string, env []string) {
	t.Helper()
	out, err := gitCmd(dir, env, "", "fsck", "--no-progress", "--no-dangling")
	if err != nil || strings.TrimSpace(string(out)) != "" {
		t.Errorf("git fsck in %s: %v\n%s", dir, err, out)
	}
}

type fleetGrant struct{ job, lease, holder string }

// fleetWorker claims jobs of run until the run is finished; for each grant it makes
// the node's worktree, commits one file there and reports done. Every command goes
// through the remote (args: --remote origin, or nothing with atlas.remote set). A
// command that lost every round to other writers (exit 3) is run again.
func fleetWorker(a atlasCLI, args []string, run, holder string, seed uint64, grants chan<- fleetGrant) error {
	rng := rand.New(rand.NewPCG(seed, 16))
	retry := func(what string, cmd ...string) ([]byte, error) {
		for try := 0; ; try++ {
			out, code, stderr := a.run(append(slices.Clone(args), cmd...)...)
			if code == 0 {
				return out, nil
			}
			if code != 3 || try == 20 {
				return nil, fmt.Errorf("%s %s: exit %d: %s", holder, what, code, stderr)
			}
		}
	}
	for {
		out, code, stderr := a.run(append(slices.Clone(args), "job", "claim", run, "--holder", holder, "--ttl", "1h")...)
		var c claimOut
		if code == 0 || code == 5 {
			if err := json.Unmarshal(out, &c); err != nil {
				return fmt.Errorf("claim output %q: %w", out, err)
			}
		}
		switch {
		case code == 3:
			continue
		case code == 5 && c.Reason != nil && *c.Reason == "finished":
			return nil
		case code != 0:
			return fmt.Errorf("%s claim: exit %d: %s", holder, code, stderr)
		case c.Job == nil:
			time.Sleep(time.Duration(5+rng.IntN(20)) * time.Millisecond) // a polling interval
			continue
		}
		job, lease := c.Job.ID, *c.Lease
		grants <- fleetGrant{job, lease, holder}
		out, err := retry("worktree add "+job, "worktree", "add", run, job, "--lease", lease)
		if err != nil {
			return err
		}
		var wt struct{ Path string }
		if err := json.Unmarshal(out, &wt); err != nil || wt.Path == "" {
			return fmt.Errorf("worktree add output %q: %w", out, err)
		}
		if err := os.WriteFile(filepath.Join(wt.Path, job+".txt"), []byte("work of "+job+"\n"), 0o644); err != nil {
			return err
		}
		if _, err := gitCmd(wt.Path, a.env, "", "add", job+".txt"); err != nil {
			return err
		}
		if _, err := gitCmd(wt.Path, a.env, "", "commit", "-q", "-m", "work of "+job); err != nil {
			return err
		}
		if _, err := retry("done "+job, "job", "done", run, job, "--lease", lease, "--status", "ok", "--holder", holder); err != nil {
			return err
		}
	}
}

// fleetJobs adds n jobs to run through a: job k needs job (k-1)/2 (a binary tree),
// and every fourth also job k-2, so that work waits on work from other machines (the
// first job that needs two others is j04, inside the sweeps' short DAGs).
func fleetJobs(t *testing.T, a atlasCLI, args []string, run string, n int) []string {
	t.Helper()
	var jobs []string
	for k := range n {
		job := fmt.Sprintf("j%02d", k)
		cmd := append(slices.Clone(args), "job", "add", run, job)
		var needs []string
		if k > 0 {
			needs = append(needs, jobs[(k-1)/2])
		}
		if k%4 == 0 && k >= 2 && !slices.Contains(needs, jobs[k-2]) {
			needs = append(needs, jobs[k-2])
		}
		if len(needs) > 0 {
			cmd = append(cmd, "--needs", strings.Join(needs, ","))
		}
		a.must(t, cmd...)
		jobs = append(jobs, job)
	}
	return jobs
}

type logEvent struct {
	Seq    int    `json:"seq"`
	Type   string `json:"type"`
	Job    string `json:"job"`
	Holder string `json:"holder"`
}

// remoteLog reads run's events from the remote: a --remote read fetches first.
func remoteLog(t *testing.T, a atlasCLI, run string) []logEvent {
	t.Helper()
	var log struct{ Events []logEvent }
	if err := json.Unmarshal(a.must(t, "--remote", "origin", "log", run), &log); err != nil {
		t.Fatal(err)
	}
	return log.Events
}

// TestRemoteFleet: a bare repository and 3 clones, 3 worker processes in each (9 in
// all), drain one 30-job DAG with dependencies, every command through the remote (one
// clone passes --remote, the others have atlas.remote set). From the remote's log:
// every job was claimed once and DONE once, and no job was granted to two workers. A
// union built on a clone from the remote holds every node's work; git fsck is clean
// in all four repositories. Without the sweeps build tag, one worker in each clone
// drains a 5-job DAG: three processes on three clones still race for the first job
// and for the two jobs it frees at once, through both ways of naming the remote, and
// the DAG still has a job that needs two others (j04); the full pass keeps the
// breadth.
func TestRemoteFleet(t *testing.T) {
	t.Parallel() // its own repository and processes; no package globals, no Setenv
	jobsN, perClone := testenv.Rounds(5, 30), testenv.Rounds(1, 3)
	f := newRemoteFleet(t, 3)
	args := [][]string{{"--remote", "origin"}, nil, nil}
	for k := 1; k < 3; k++ {
		mustGit(t, f.clones[k].repo, f.env, "", "config", "atlas.remote", "origin")
	}
	const run = "fleet"
	f.clones[0].must(t, "--remote", "origin", "start", "--id", run, "--graph")
	jobs := fleetJobs(t, f.clones[0], args[0], run, jobsN)

	grants := make(chan fleetGrant, 4*jobsN)
	errs := make(chan error, 3*perClone)
	var wg sync.WaitGroup
	for c := range f.clones {
		for w := range perClone {
			wg.Go(func() {
				errs <- fleetWorker(f.clones[c], args[c], run, fmt.Sprintf("c%dw%d", c, w), uint64(10*c+w), grants)
			})
		}
	}
	wg.Wait()
	close(errs)
	close(grants)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	granted := map[string][]fleetGrant{}
	for g := range grants {
		granted[g.job] = append(granted[g.job], g)
	}
	for _, j := range jobs {
		if len(granted[j]) != 1 {
			t.Errorf("job %s was granted %d times: %v", j, len(granted[j]), granted[j])
		}
	}

	events := remoteLog(t, f.clones[0], run)
	claimed, done := map[string]int{}, map[string]int{}
	for _, e := range events {
		switch e.Type {
		case "job_claimed":
			claimed[e.Job]++
		case "job_done":
			done[e.Job]++
		}
	}
	for _, j := range jobs {
		if claimed[j] != 1 || done[j] != 1 {
			t.Errorf("job %s: %d job_claimed and %d job_done events on the remote, want 1 and 1", j, claimed[j], done[j])
		}
	}
	var list struct {
		Jobs []struct{ ID, State string }
	}
	if err := json.Unmarshal(f.clones[2].must(t, "job", "list", run), &list); err != nil {
		t.Fatal(err)
	}
	for _, j := range list.Jobs {
		if j.State != "DONE" {
			t.Errorf("job %s is %s on the remote, want DONE", j.ID, j.State)
		}
	}

	// A union built on clone 1 from what the remote holds: every node's file is in it,
	// and the union branch is on the remote too.
	f.clones[1].must(t, "union", run)
	tree := mustGit(t, f.bare, f.env, "", "ls-tree", "-r", "--name-only", "refs/heads/atlas/"+run+"/union")
	for _, j := range jobs {
		if !slices.Contains(strings.Split(tree, "\n"), j+".txt") {
			t.Errorf("the remote's union lacks %s.txt (node %s's work)", j, j)
		}
	}
	fsck(t, f.bare, f.env)
	for _, c := range f.clones {
		fsck(t, c.repo, f.env)
	}
}

// remoteChecks fails when the remote holds a half-applied write of run: its ledger
// must read to the end (every event, consecutive seqs), git fsck must be clean, the
// run's baseline pin and each recorded worktree's pin and branch must be on the remote.
func remoteChecks(t *testing.T, f remoteFleet, reader atlasCLI, run string, round int) {
	t.Helper()
	fsck(t, f.bare, f.env)
	events := remoteLog(t, reader, run)
	for i, e := range events {
		if e.Seq != i+1 {
			t.Fatalf("round %d: the remote's ledger has event %d where %d was expected", round, e.Seq, i+1)
		}
	}
	var state struct {
		Worktrees []struct{ Node, Branch, Baseline string }
	}
	if err := json.Unmarshal([]byte(mustGit(t, f.bare, f.env, "", "show", "refs/atlas/runs/"+run+":state.json")), &state); err != nil {
		t.Fatal(err)
	}
	refs := map[string]string{}
	for line := range strings.SplitSeq(mustGit(t, f.bare, f.env, "", "for-each-ref", "--format=%(refname) %(objectname)"), "\n") {
		name, id, _ := strings.Cut(line, " ")
		refs[name] = id
	}
	if refs["refs/atlas/pins/"+run+"/baseline"] == "" {
		t.Fatalf("round %d: the remote lacks the baseline pin", round)
	}
	for _, w := range state.Worktrees {
		if pin := refs["refs/atlas/pins/"+run+"/node/"+w.Node]; pin != w.Baseline {
			t.Fatalf("round %d: node %s's baseline %s is pinned on the remote as %q", round, w.Node, w.Baseline, pin)
		}
		if refs["refs/heads/"+strings.TrimPrefix(w.Branch, "refs/heads/")] == "" {
			t.Fatalf("round %d: node %s's branch %s is not on the remote", round, w.Node, w.Branch)
		}
	}
}

// TestRemoteKilledWriter: a worker is SIGKILLed at a random moment of its claim,
// worktree add, commit and receipt through the remote (20 times with
// the sweeps build tag, 3 otherwise: the k-th of n kills falls in the k-th n-th of the
// 600 ms a kill may fall in, so that the short version's few still fall early, midway
// and late), on two clones in turn. After every kill the remote holds no half-applied
// write (remoteChecks); afterwards workers that are left alone drain the run: every
// job DONE once, the union on the remote holds every node's work.
func TestRemoteKilledWriter(t *testing.T) {
	t.Parallel() // its own repository and processes; no package globals, no Setenv
	rounds := testenv.Rounds(3, 20)
	f := newRemoteFleet(t, 3)
	for _, c := range f.clones {
		mustGit(t, c.repo, f.env, "", "config", "atlas.remote", "origin")
	}
	const run = "kill"
	f.clones[0].must(t, "start", "--id", run, "--graph", "--max-attempts", "1000")
	jobs := fleetJobs(t, f.clones[0], nil, run, rounds+4)
	reader := f.clones[2]
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	killed := 0
	round := 0
	for ; round < rounds; round++ {
		// The victim: a worker that would drain the run, its git-atlas process killed
		// with SIGKILL at a random moment (0-600 ms into the round: a command through
		// the remote takes tens of milliseconds, so the kill falls anywhere in claim,
		// worktree add or receipt, mid-push included). Its leases last 1 s, so that
		// the workers after the kills can take its jobs.
		a := f.clones[round%2]
		deadline := time.Now().Add(time.Duration((round*600+rng.IntN(600))/rounds) * time.Millisecond)
		err := remoteWorker(killingRunner(a, deadline), a.env, run, fmt.Sprintf("victim%d", round), "1s")
		if errors.Is(err, errKilled) {
			killed++
		} else if err != nil {
			t.Fatal(err)
		}
		remoteChecks(t, f, reader, run, round)
	}
	t.Logf("%d workers killed", killed)

	// The rerun: workers left alone converge (a dead worker's lease expires; they reap).
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for c := range 2 {
		wg.Go(func() {
			errs <- remoteWorker(f.clones[c].run, f.clones[c].env, run, fmt.Sprintf("rerun%d", c), "1s")
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	remoteChecks(t, f, reader, run, rounds)
	done := map[string]int{}
	for _, e := range remoteLog(t, reader, run) {
		if e.Type == "job_done" {
			done[e.Job]++
		}
	}
	reader.must(t, "union", run)
	tree := strings.Split(mustGit(t, f.bare, f.env, "", "ls-tree", "-r", "--name-only", "refs/heads/atlas/"+run+"/union"), "\n")
	for _, j := range jobs {
		if done[j] != 1 {
			t.Errorf("job %s has %d job_done events on the remote, want 1", j, done[j])
		}
		if !slices.Contains(tree, j+".txt") {
			t.Errorf("the remote's union lacks %s.txt", j)
		}
	}
	for _, c := range f.clones {
		fsck(t, c.repo, f.env)
	}
}

// remoteWorker drains run like fleetWorker, with leases of ttl, reaping expired ones
// while it waits, and taking a receipt refused as stale (exit 3: its lease expired
// and was reaped) as the end of that job for this worker. A node whose worktree a
// killed worker left keeps its branch: the file is committed there again only if
// missing.
func remoteWorker(run1 func(args ...string) ([]byte, int, string), env []string, run, holder, ttl string) (err error) {
	a := struct {
		run func(args ...string) ([]byte, int, string)
		env []string
	}{func(args ...string) ([]byte, int, string) {
		out, code, stderr := run1(args...)
		if code == killedCode {
			panic(errKilled)
		}
		return out, code, stderr
	}, env}
	defer func() {
		if p := recover(); p != nil {
			if e, ok := p.(error); !ok || !errors.Is(e, errKilled) {
				panic(p)
			}
			err = errKilled
		}
	}()
	for {
		out, code, stderr := a.run("job", "claim", run, "--holder", holder, "--ttl", ttl)
		var c claimOut
		if code == 0 || code == 5 {
			if err := json.Unmarshal(out, &c); err != nil {
				return fmt.Errorf("claim output %q: %w", out, err)
			}
		}
		switch {
		case code == 3:
			continue
		case code == 5 && c.Reason != nil && *c.Reason == "finished":
			return nil
		case code != 0:
			return fmt.Errorf("%s claim: exit %d: %s", holder, code, stderr)
		case c.Job == nil:
			if _, code, stderr := a.run("reap", run, "--holder", holder); code != 0 && code != 3 {
				return fmt.Errorf("reap: exit %d: %s", code, stderr)
			}
			time.Sleep(20 * time.Millisecond) // a polling interval
			continue
		}
		job, lease := c.Job.ID, *c.Lease
		out, code, stderr = a.run("worktree", "add", run, job, "--lease", lease)
		if code == 3 {
			continue // the lease expired meanwhile, or another writer won every round
		}
		if code != 0 {
			return fmt.Errorf("%s worktree add %s: exit %d: %s", holder, job, code, stderr)
		}
		var wt struct{ Path string }
		if err := json.Unmarshal(out, &wt); err != nil || wt.Path == "" {
			return fmt.Errorf("worktree add output %q: %w", out, err)
		}
		file := filepath.Join(wt.Path, job+".txt")
		if _, err := os.Stat(file); err != nil {
			if err := os.WriteFile(file, []byte("work of "+job+"\n"), 0o644); err != nil {
				return err
			}
		}
		if _, err := gitCmd(wt.Path, a.env, "", "add", job+".txt"); err != nil {
			return err
		}
		if out, _ := gitCmd(wt.Path, a.env, "", "diff", "--cached", "--name-only"); len(out) > 0 {
			if _, err := gitCmd(wt.Path, a.env, "", "commit", "-q", "-m", "work of "+job); err != nil {
				return err
			}
		}
		_, code, stderr = a.run("job", "done", run, job, "--lease", lease, "--status", "ok", "--holder", holder)
		if code != 0 && code != 3 {
			return fmt.Errorf("%s done %s: exit %d: %s", holder, job, code, stderr)
		}
	}
}

var errKilled = errors.New("killed")

const killedCode = -9

// killingRunner runs git-atlas in a's repository like atlasCLI.run, but SIGKILLs the
// command running when deadline passes; that command and every later one return
// killedCode.
func killingRunner(a atlasCLI, deadline time.Time) func(args ...string) ([]byte, int, string) {
	return func(args ...string) ([]byte, int, string) {
		left := time.Until(deadline)
		if left <= 0 {
			return nil, killedCode, ""
		}
		cmd := exec.Command(a.bin, append([]string{"-C", a.repo, "--json"}, args...)...)
		cmd.Env = a.env
		// Its own process group, so that the git processes it started can be waited
		// for after it is killed.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			return nil, -1, err.Error()
		}
		timer := time.AfterFunc(left, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
		err := cmd.Wait()
		timer.Stop()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return stdout.Bytes(), 0, stderr.String()
		case errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled():
			// Only git-atlas was killed: a push it had started goes on (the remote is
			// another machine; it does not die with the worker) and may still land.
			// The checks look at the remote once nothing of the worker runs.
			waitGroupGone(cmd.Process.Pid)
			return nil, killedCode, ""
		case errors.As(err, &ee):
			return stdout.Bytes(), ee.ExitCode(), stderr.String()
		}
		return nil, -1, err.Error()
	}
}

// waitGroupGone returns once no live process is left in process group pgid (zombies,
// which nothing may reap here, do not count), or after a minute.
func waitGroupGone(pgid int) {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !groupAlive(pgid) {
			return
		}
	}
}

func groupAlive(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false // no /proc: nothing to wait for that we could see
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces, so cut after its ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) >= 3 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			return true
		}
	}
	return false
}
