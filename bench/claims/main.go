// Command claims measures graph-run throughput: claims + receipts per second with 1,
// 4 and 16 concurrent workers on one run (the contention curve), through the CLI and
// in-process, and where one write's time goes.
//
//	go run ./bench/claims [-jobs 100] [-workers 1,4,16] [-samples 100] [-cpuprofile FILE]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/git-atlas/git-atlas/bench/internal/harness"
	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/ops"
)

func main() {
	jobs := flag.Int("jobs", 100, "jobs per run (each is claimed once and gets one ok receipt)")
	workerList := flag.String("workers", "1,4,16", "concurrent workers, comma-separated")
	samples := flag.Int("samples", 100, "samples per step of the uncontended split")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the in-process rounds to `file`")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "claims:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "claims:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*jobs, *workerList, *samples); err != nil {
		fmt.Fprintln(os.Stderr, "claims:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(jobs int, workerList string, samples int) error {
	ctx := context.Background()
	tmp, bin, err := harness.Build("atlas-bench-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	counts, err := harness.Workers(workerList)
	if err != nil {
		return err
	}

	fmt.Printf("claims + receipts per second, one graph run of %d independent jobs (each op is one ledger write)\n\n", jobs)
	fmt.Printf("%-8s %10s %10s %14s %9s %14s %16s\n", "workers", "cli ops/s", "cli ms/op", "in-proc ops/s", "tries/op", "in-proc ms/op", "serialized ops/s")
	for i, w := range counts {
		cli, err := cliRound(ctx, bin, filepath.Join(tmp, fmt.Sprintf("cli%d", i)), jobs, w)
		if err != nil {
			return err
		}
		inproc, err := inProcRound(ctx, filepath.Join(tmp, fmt.Sprintf("inproc%d", i)), jobs, w, noLock)
		if err != nil {
			return err
		}
		// The same with one writer at a time (a mutex standing in for a per-run lock
		// file): what a writer queue instead of optimistic retries would give.
		serial, err := inProcRound(ctx, filepath.Join(tmp, fmt.Sprintf("serial%d", i)), jobs, w, &sync.Mutex{})
		if err != nil {
			return err
		}
		fmt.Printf("%-8d %10.1f %10.1f %14.1f %9.2f %14.1f %16.1f\n", w, cli.opsPerSec(), cli.msPerOp(w), inproc.opsPerSec(), inproc.triesPerOp(), inproc.msPerOp(w), serial.opsPerSec())
	}
	fmt.Println()
	return split(ctx, bin, filepath.Join(tmp, "split"), samples)
}

// noLock is a lock that never blocks, for the optimistic rounds.
var noLock = nopLocker{}

type nopLocker struct{}

func (nopLocker) Lock()   {}
func (nopLocker) Unlock() {}

type round struct {
	ops   int64
	tries int64
	wall  time.Duration
}

func (r round) opsPerSec() float64 { return float64(r.ops) / r.wall.Seconds() }

// msPerOp is the latency one worker sees per op.
func (r round) msPerOp(workers int) float64 {
	return float64(r.wall.Milliseconds()) * float64(workers) / float64(r.ops)
}

func (r round) triesPerOp() float64 { return float64(r.tries) / float64(r.ops) }

// cliRound: workers loop `job claim` then `job done --status ok` as processes.
func cliRound(ctx context.Context, bin, dir string, jobs, workers int) (round, error) {
	if _, err := harness.GraphRun(ctx, dir, jobs); err != nil {
		return round{}, err
	}
	atlas := func(args ...string) ([]byte, int, error) {
		c := exec.Command(bin, append([]string{"-C", dir, "--json"}, args...)...)
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		ee := &exec.ExitError{}
		if errors.As(err, &ee) {
			return out.Bytes(), ee.ExitCode(), fmt.Errorf("git atlas %v: %s", args, errb.String())
		}
		return out.Bytes(), 0, err
	}
	var writes atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			holder := fmt.Sprintf("w%d", w)
			for {
				out, code, err := atlas("job", "claim", "b", "--holder", holder)
				if code == 5 {
					return // halted: all done
				}
				if err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				var c struct {
					Job *struct {
						ID string `json:"id"`
					} `json:"job"`
					Lease string `json:"lease"`
				}
				if err := json.Unmarshal(out, &c); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				if c.Job == nil {
					continue // waiting: the last jobs are held by others; poll
				}
				writes.Add(1)
				if _, _, err := atlas("job", "done", "b", c.Job.ID, "--lease", c.Lease, "--status", "ok"); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				writes.Add(1)
			}
		}(w)
	}
	wg.Wait()
	return round{ops: writes.Load(), wall: time.Since(start)}, firstErr
}

// inProcRound: the same loop through the operations the commands call (ops.JobClaim,
// ops.JobDone) in goroutines, each with its own Repository (as separate processes
// would have), counting compare-and-swap tries.
func inProcRound(ctx context.Context, dir string, jobs, workers int, lock sync.Locker) (round, error) {
	if _, err := harness.GraphRun(ctx, dir, jobs); err != nil {
		return round{}, err
	}
	var writes, tries atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			repo, err := git.Open(ctx, dir)
			if err != nil {
				once.Do(func() { firstErr = err })
				return
			}
			o := ops.New(repo)
			worker := ops.Worker{Holder: fmt.Sprintf("w%d", w), TTL: time.Minute}
			for {
				before := o.Tries()
				lock.Lock()
				c, err := o.JobClaim(ctx, ops.JobClaimRequest{Run: "b", Worker: worker})
				lock.Unlock()
				if c != nil && c.Job == nil {
					// A claim that grants nothing writes nothing: not a write try.
					if err != nil { // finished or halted: stop
						return
					}
					continue // waiting: the last jobs are held by others; poll
				}
				if err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				tries.Add(o.Tries() - before)
				writes.Add(1)
				before = o.Tries()
				lock.Lock()
				_, err = o.JobDone(ctx, ops.JobDoneRequest{Run: "b", Job: c.Job.ID, Lease: *c.Lease, Status: ledger.ReceiptOK, Worker: worker})
				lock.Unlock()
				if err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				tries.Add(o.Tries() - before)
				writes.Add(1)
			}
		}(w)
	}
	wg.Wait()
	return round{ops: writes.Load(), tries: tries.Load(), wall: time.Since(start)}, firstErr
}

// split times the steps of one uncontended write, each on its own, median of samples.
func split(ctx context.Context, bin, dir string, samples int) error {
	store, err := harness.GraphRun(ctx, dir, samples)
	if err != nil {
		return err
	}
	repo := store.Repo
	r, err := store.Load(ctx, "b")
	if err != nil {
		return err
	}
	stateJSON, _ := gitstate.MarshalState(&r.State)
	tip, err := git.ParseOID(r.Tip)
	if err != nil {
		return err
	}
	info, err := repo.Commit(ctx, tip)
	if err != nil {
		return err
	}
	flip := []string{r.Tip, info.Parents[0].String()}
	med := func(f func(i int) error) (time.Duration, error) {
		d := make([]time.Duration, samples)
		for i := range d {
			t := time.Now()
			if err := f(i); err != nil {
				return 0, err
			}
			d[i] = time.Since(t)
		}
		slices.Sort(d)
		return d[len(d)/2], nil
	}
	steps := []struct {
		name string
		f    func(i int) error
	}{
		{"process: exec git-atlas --version", func(int) error { return exec.Command(bin, "--version").Run() }},
		{"git.Open (rev-parse fork)", func(int) error { _, err := git.Open(ctx, dir); return err }},
		{"load run (go-git ref + 2 blobs)", func(int) error { _, err := store.Load(ctx, "b"); return err }},
		{"object writes (2 blobs, tree, commit; fsync)", func(i int) error {
			b1, err := repo.WriteBlob(ctx, append(stateJSON, []byte(strconv.Itoa(i))...))
			if err != nil {
				return err
			}
			b2, err := repo.WriteBlob(ctx, []byte(fmt.Sprintf(`{"seq":%d}`, i)))
			if err != nil {
				return err
			}
			tree, err := repo.WriteTree(ctx, []git.TreeEntry{{Name: "state.json", Blob: b1.String()}, {Name: "event.json", Blob: b2.String()}})
			if err != nil {
				return err
			}
			_, err = repo.WriteCommit(ctx, tree, []git.OID{tip}, "bench\n")
			return err
		}},
		{"  write+rename 4 small files, no fsync", func(i int) error { return writeFiles(repo.CommonDir, i, false) }},
		{"  write+rename 4 small files, fsync file+dir", func(i int) error { return writeFiles(repo.CommonDir, i, true) }},
		{"update-ref --stdin CAS (fork, fsync)", func(i int) error {
			// A scratch ref flips between the tip and its parent: every CAS is a real move.
			old := git.ZeroID
			if i > 0 {
				old = flip[(i-1)%2]
			}
			return repo.UpdateRefs(ctx, "bench", git.RefUpdate{Name: "refs/atlas/bench/x", New: flip[i%2], Old: old})
		}},
	}
	fmt.Printf("one uncontended write, median of %d (ms)\n\n", samples)
	for _, s := range steps {
		d, err := med(s.f)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		fmt.Printf("  %-48s %6.2f\n", s.name, float64(d.Microseconds())/1000)
	}
	// The whole write as a user runs it: a claim and its receipt, as processes.
	d, err := med(func(i int) error {
		out, err := exec.Command(bin, "-C", dir, "--json", "job", "claim", "b").Output()
		if err != nil {
			return err
		}
		var c struct {
			Job   struct{ ID string } `json:"job"`
			Lease string              `json:"lease"`
		}
		if err := json.Unmarshal(out, &c); err != nil {
			return err
		}
		return exec.Command(bin, "-C", dir, "job", "done", "b", c.Job.ID, "--lease", c.Lease, "--status", "ok").Run()
	})
	if err != nil {
		return err
	}
	fmt.Printf("  %-48s %6.2f\n", "CLI claim + done (2 processes), per write", float64(d.Microseconds())/2000)
	return nil
}

// writeFiles does what four loose-object writes do to the file system (write a temp
// file, rename it into place), with or without go-git's flush of file and directory.
func writeFiles(common string, i int, flush bool) error {
	dir := filepath.Join(common, "objects", "bench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for k := range 4 {
		tmp := filepath.Join(dir, fmt.Sprintf("tmp-%d-%d", i, k))
		if err := os.WriteFile(tmp, bytes.Repeat([]byte{byte(i + k)}, 600), 0o444); err != nil {
			return err
		}
		final := filepath.Join(dir, fmt.Sprintf("obj-%d-%d", i, k))
		if err := os.Rename(tmp, final); err != nil {
			return err
		}
		if flush {
			for _, p := range []string{final, dir} {
				f, err := os.Open(p)
				if err != nil {
					return err
				}
				err = f.Sync()
				f.Close()
				if err != nil {
					return err
				}
			}
		}
	}
	return nil
}
