// Command remote measures claims through a git remote (docs/contract.md §10.1): claims per second
// on one graph run with 1, 4 and 12 worker processes writing through a local bare
// repository (spread over 3 clones, as machines would be), against the same workers
// writing locally only, with the ratio; then where one claim's time goes: how many
// ls-remote, fetch and push processes each claim starts and how long each takes
// (GIT_TRACE2_EVENT of the claims of one uncontended worker).
//
//	go run ./bench/remote [-jobs 60] [-workers 1,4,12] [-clones 3] [-samples 20]
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/git-atlas/git-atlas/bench/internal/harness"
)

func main() {
	jobs := flag.Int("jobs", 60, "independent jobs per run (each claimed once)")
	workerList := flag.String("workers", "1,4,12", "concurrent workers, comma-separated")
	clones := flag.Int("clones", 3, "clones of the remote the workers are spread over")
	samples := flag.Int("samples", 20, "claims traced for the split")
	flag.Parse()
	if err := run(*jobs, *workerList, *clones, *samples); err != nil {
		fmt.Fprintln(os.Stderr, "remote:", err)
		os.Exit(1)
	}
}

func run(jobs int, workerList string, clones, samples int) error {
	ctx := context.Background()
	tmp, bin, err := harness.Build("atlas-bench-remote-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	counts, err := harness.Workers(workerList)
	if err != nil {
		return err
	}
	fmt.Printf("claims per second, one graph run of %d independent jobs; remote: a local bare repository, workers spread over %d clones\n\n", jobs, clones)
	fmt.Printf("%-8s %14s %15s %12s %16s %13s %13s\n", "workers", "local claims/s", "remote claims/s", "remote/local", "remote ms/claim", "pushes/claim", "fetches/claim")
	for i, w := range counts {
		local, err := localRound(ctx, bin, filepath.Join(tmp, fmt.Sprintf("local%d", i)), jobs, w)
		if err != nil {
			return err
		}
		dir := filepath.Join(tmp, fmt.Sprintf("remote%d", i))
		trace := filepath.Join(tmp, fmt.Sprintf("trace%d.json", i))
		remote, err := remoteRound(ctx, bin, dir, jobs, w, clones, trace)
		if err != nil {
			return err
		}
		by, err := parseTrace(trace)
		if err != nil {
			return err
		}
		per := func(name string) float64 {
			if a := by[name]; a != nil {
				return float64(a.n) / float64(remote.claims)
			}
			return 0
		}
		fmt.Printf("%-8d %14.1f %15.1f %12.2f %16.1f %13.2f %13.2f\n", w, local.perSec(), remote.perSec(), remote.perSec()/local.perSec(), remote.msPerClaim(w), per("push"), per("fetch"))
	}
	fmt.Println()
	return split(ctx, bin, filepath.Join(tmp, "split"), samples)
}

type round struct {
	claims int64
	wall   time.Duration
}

func (r round) perSec() float64 { return float64(r.claims) / r.wall.Seconds() }

// msPerClaim is the latency one worker sees per claim.
func (r round) msPerClaim(workers int) float64 {
	return float64(r.wall.Milliseconds()) * float64(workers) / float64(r.claims)
}

// drain runs workers that loop `job claim` until nothing is left, each in its repo
// of repos (round-robin), and counts the claims granted.
func drain(bin string, repos []string, workers int, extra []string, env []string) (round, error) {
	var claims atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		dir := repos[w%len(repos)]
		wg.Go(func() {
			for {
				args := append([]string{"-C", dir, "--json"}, extra...)
				c := exec.Command(bin, append(args, "job", "claim", "b", "--holder", fmt.Sprintf("w%d", w), "--ttl", "1h")...)
				c.Env = env
				var out, errb bytes.Buffer
				c.Stdout, c.Stderr = &out, &errb
				err := c.Run()
				code := 0
				ee := &exec.ExitError{}
				if errors.As(err, &ee) {
					code = ee.ExitCode()
				} else if err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				var res struct {
					Job    *json.RawMessage `json:"job"`
					Reason *string          `json:"reason"`
				}
				switch {
				case code == 3:
					continue // lost every round to other writers: claim again
				case code == 5:
					return // nothing left
				case code != 0:
					once.Do(func() { firstErr = fmt.Errorf("claim: exit %d: %s", code, errb.String()) })
					return
				}
				if err := json.Unmarshal(out.Bytes(), &res); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				if res.Job == nil {
					return // waiting: every job is claimed
				}
				claims.Add(1)
			}
		})
	}
	wg.Wait()
	return round{claims: claims.Load(), wall: time.Since(start)}, firstErr
}

func localRound(ctx context.Context, bin, dir string, jobs, workers int) (round, error) {
	if _, err := harness.GraphRun(ctx, dir, jobs); err != nil {
		return round{}, err
	}
	return drain(bin, []string{dir}, workers, nil, os.Environ())
}

// remoteRound: the run is made in a seed repository and pushed to a bare one, of
// which clones clones are made; the workers claim with --remote origin. With trace
// set, git's trace2 events of every claim go there.
func remoteRound(ctx context.Context, bin, dir string, jobs, workers, clones int, trace string) (round, error) {
	seed := filepath.Join(dir, "seed")
	bare := filepath.Join(dir, "remote.git")
	if _, err := harness.GraphRun(ctx, seed, jobs); err != nil {
		return round{}, err
	}
	if err := harness.Git(dir, "init", "-q", "--bare", "-b", "main", bare); err != nil {
		return round{}, err
	}
	if err := harness.Git(seed, "push", "-q", bare, "main", "refs/atlas/*:refs/atlas/*"); err != nil {
		return round{}, err
	}
	var repos []string
	for k := range clones {
		c := filepath.Join(dir, fmt.Sprintf("clone%d", k))
		if err := harness.Git(dir, "clone", "-q", bare, c); err != nil {
			return round{}, err
		}
		repos = append(repos, c)
	}
	if workers < len(repos) {
		repos = repos[:workers]
	}
	env := os.Environ()
	if trace != "" {
		env = append(env, "GIT_TRACE2_EVENT="+trace)
	}
	return drain(bin, repos, workers, []string{"--remote", "origin"}, env)
}

// agg is the git processes of one command name in a trace: how many, and their time.
type agg struct {
	n     int
	total float64 // seconds
}

// parseTrace reads GIT_TRACE2_EVENT output and sums, per git command, the processes
// git-atlas started (not their own children: upload-pack, receive-pack, ... are in
// their parent's time).
func parseTrace(file string) (map[string]*agg, error) {
	type proc struct {
		name    string
		elapsed float64
	}
	procs := map[string]*proc{}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev struct {
			Event string  `json:"event"`
			SID   string  `json:"sid"`
			Name  string  `json:"name"`
			TAbs  float64 `json:"t_abs"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || strings.Contains(ev.SID, "/") {
			continue
		}
		p := procs[ev.SID]
		if p == nil {
			p = &proc{}
			procs[ev.SID] = p
		}
		switch ev.Event {
		case "cmd_name":
			p.name = ev.Name
		case "exit":
			p.elapsed = ev.TAbs
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	by := map[string]*agg{}
	for _, p := range procs {
		a := by[p.name]
		if a == nil {
			a = &agg{}
			by[p.name] = a
		}
		a.n++
		a.total += p.elapsed
	}
	return by, nil
}

// split traces the claims of one worker through the remote and says, per claim, how
// many of each git process ran and how long each took.
func split(ctx context.Context, bin, dir string, samples int) error {
	trace := filepath.Join(dir, "trace.json")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	r, err := remoteRound(ctx, bin, dir, samples, 1, 1, trace)
	if err != nil {
		return err
	}
	by, err := parseTrace(trace)
	if err != nil {
		return err
	}
	var all float64
	for _, a := range by {
		all += a.total
	}
	names := make([]string, 0, len(by))
	for n := range by {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return by[names[i]].total > by[names[j]].total })
	claims := float64(r.claims + 1) // and the last claim, which found nothing left
	fmt.Printf("one worker, %d claims through the remote (%.1f ms per claim end to end); git processes per claim:\n\n", r.claims, r.msPerClaim(1))
	fmt.Printf("%-14s %12s %10s %14s\n", "git command", "per claim", "ms each", "ms per claim")
	for _, n := range names {
		a := by[n]
		fmt.Printf("%-14s %12.2f %10.1f %14.1f\n", n, float64(a.n)/claims, 1000*a.total/float64(a.n), 1000*a.total/claims)
	}
	fmt.Printf("%-14s %12s %10s %14.1f\n", "all git", "", "", 1000*all/claims)
	return nil
}
