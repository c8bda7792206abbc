// Command briefprobe times, in one process, the steps `git atlas resume --brief` takes
// on a repository, for bench/resume.sh: opening it (`git rev-parse`), the ref scan
// (`git for-each-ref`), reading every run's run.json and state.json (for-each-ref into
// `cat-file --batch`: git.RefFiles), then reading and decoding them in full
// (Store.List at ListFull, as resume selects) or as summaries (at ListSummaries, as
// --brief and --detect), and
// the detection on top. Medians of N rounds of wall time and of this process's CPU
// time (user + system, git's excluded): CPU over RefFiles' is the decoding.
//
//	go run ./bench/briefprobe [-n N] REPO
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/resume"
)

func main() {
	n := flag.Int("n", 30, "rounds")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: briefprobe [-n N] REPO")
		os.Exit(2)
	}
	if err := probe(context.Background(), flag.Arg(0), *n); err != nil {
		fmt.Fprintln(os.Stderr, "briefprobe:", err)
		os.Exit(1)
	}
}

func probe(ctx context.Context, dir string, rounds int) error {
	repo, err := git.Open(ctx, dir)
	if err != nil {
		return err
	}
	store := gitstate.New(repo)
	runs := 0
	steps := []struct {
		name string
		fn   func() error
	}{
		{"git.Open (rev-parse)", func() error { _, err := git.Open(ctx, dir); return err }},
		{"ref scan (for-each-ref)", func() error {
			_, err := repo.ListRefs(ctx, "refs/atlas/runs")
			return err
		}},
		{"ref scan + blob reads (RefFiles)", func() error {
			runs = 0
			return repo.RefFiles(ctx, "refs/atlas/runs", []string{"run.json", "state.json"}, func(git.Ref, []git.Blob) { runs++ })
		}},
		{"... + full decode (List, ListFull)", func() error {
			_, err := store.List(ctx, gitstate.ListOptions{Depth: gitstate.ListFull})
			return err
		}},
		{"... + summary decode (List, ListSummaries)", func() error {
			_, err := store.List(ctx, gitstate.ListOptions{Depth: gitstate.ListSummaries})
			return err
		}},
		{"resume.Detect (ListFull, filter, sort)", func() error {
			_, _, err := resume.Detect(ctx, store, store.Now(), resume.DetectOptions{Depth: gitstate.ListFull})
			return err
		}},
		{"resume.Detect (ListSummaries, ...)", func() error {
			_, _, err := resume.Detect(ctx, store, store.Now(), resume.DetectOptions{Depth: gitstate.ListSummaries})
			return err
		}},
	}
	wall := make([][]time.Duration, len(steps))
	cpu := make([][]time.Duration, len(steps))
	for range rounds {
		for i, s := range steps {
			c0, t0 := cpuTime(), time.Now()
			if err := s.fn(); err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			wall[i] = append(wall[i], time.Since(t0))
			cpu[i] = append(cpu[i], cpuTime()-c0)
		}
	}
	fmt.Printf("in-process, %d runs, median of %d rounds     wall ms   CPU ms\n", runs, rounds)
	for i, s := range steps {
		fmt.Printf("  %-44s %7.1f  %7.1f\n", s.name, ms(median(wall[i])), ms(median(cpu[i])))
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// cpuTime is the CPU time (user + system) this process has used.
func cpuTime() time.Duration {
	var u syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}
