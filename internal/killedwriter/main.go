// Command killedwriter is the process TestStressKilledWriter (stress_test.go) SIGKILLs at
// random points: `killedwriter DIR` creates runs in the repository at DIR (run ref and
// pin in one transaction) and appends events to them, forever, printing a line after
// each write so that the test can time its kill. It is a program of its own, built
// without the race detector (internal/testenv BuildProgram), as git-atlas is: a
// race-built test binary takes about 110 ms of CPU to start on a slow machine
// (bench/results/2026-12-07.md).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: killedwriter DIR")
		os.Exit(2)
	}
	fmt.Fprintln(os.Stderr, write(context.Background(), os.Args[1]))
	os.Exit(1)
}

// write writes until it is killed; it returns only the error that stopped it.
func write(ctx context.Context, dir string) error {
	repo, err := git.Open(ctx, dir)
	if err != nil {
		return err
	}
	s := gitstate.New(repo)
	base, err := repo.ResolveCommit(ctx, git.HeadRev())
	if err != nil {
		return err
	}
	entries, err := s.List(ctx, gitstate.ListOptions{})
	if err != nil {
		return err
	}
	var ids []string
	for _, e := range entries {
		ids = append(ids, e.ID)
	}
	fmt.Println("ready") // the test times its kill from here, not from a slow start
	for n := 0; ; n++ {
		if len(ids) == 0 || rand.IntN(8) == 0 {
			id := fmt.Sprintf("k%d-%d", os.Getpid(), n)
			h := ledger.Header{RunID: id, Kind: ledger.KindSingle, CreatedAt: ledger.Stamp(time.Now()), Baseline: base, Stages: []ledger.StageDef{{Name: "a", MaxRetries: 2}}}
			st := ledger.State{RunID: id, Status: ledger.RunRunning, Stages: []ledger.StageState{{Name: "a", Status: ledger.StagePending}}}
			pin := git.RefUpdate{Name: gitstate.PinRef(id, "baseline"), New: base.String(), Old: git.ZeroID}
			if _, err := s.Create(ctx, h, st, ledger.Event{Type: ledger.EventRunStarted}, pin); err != nil {
				return err
			}
			ids = append(ids, id)
			fmt.Println("created")
			continue
		}
		data, err := json.Marshal(map[string]int{"n": n})
		if err != nil {
			return err
		}
		if _, err := s.Update(ctx, ids[rand.IntN(len(ids))], func(r *ledger.Run) (*gitstate.Change, error) {
			return &gitstate.Change{Event: ledger.UserEvent(ledger.About{}, ledger.EventNote, data)}, nil
		}); err != nil {
			return err
		}
		fmt.Println("appended")
	}
}
