// Package harness is what the Go benchmark programs under bench/ share: building the
// binary they measure, reading a worker-count list, and the fixture of a graph run.
package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// Build builds git-atlas into a new temporary directory named after prefix and
// returns the directory (the caller removes it) and the binary's path.
func Build(prefix string) (tmp, bin string, err error) {
	tmp, err = os.MkdirTemp("", prefix)
	if err != nil {
		return "", "", err
	}
	bin = filepath.Join(tmp, "git-atlas")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/git-atlas").CombinedOutput(); err != nil {
		_ = os.RemoveAll(tmp)
		return "", "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	return tmp, bin, nil
}

// Workers reads a comma-separated list of worker counts, each at least 1.
func Workers(list string) ([]int, error) {
	var counts []int
	for f := range strings.SplitSeq(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad -workers %q", list)
		}
		counts = append(counts, n)
	}
	return counts, nil
}

// Git runs git in dir.
func Git(dir string, args ...string) error {
	c := exec.Command("git", args...)
	c.Dir = dir
	if out, err := c.CombinedOutput(); err != nil {
		return fmt.Errorf("git %v: %w\n%s", args, err, out)
	}
	return nil
}

// GraphRun makes a repository in dir (branch main, one commit) holding graph run "b"
// of n independent jobs, its baseline pinned, the jobs added in one ledger event
// (setting up is not what is measured).
func GraphRun(ctx context.Context, dir string, n int) (*gitstate.Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := Git(dir, "init", "-q", "-b", "main"); err != nil {
		return nil, err
	}
	if err := Git(dir, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "--allow-empty", "-m", "base"); err != nil {
		return nil, err
	}
	repo, err := git.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	head, err := repo.ResolveCommit(ctx, git.HeadRev())
	if err != nil {
		return nil, err
	}
	base := head
	store := gitstate.New(repo)
	h := ledger.Header{RunID: "b", Kind: ledger.KindGraph, CreatedAt: ledger.Stamp(store.Now()), Baseline: base, Stages: []ledger.StageDef{}, MaxAttempts: 2}
	st := ledger.State{RunID: "b", Status: ledger.RunRunning, Stages: []ledger.StageState{}}
	pin := git.RefUpdate{Name: gitstate.PinRef("b", "baseline"), New: base.String(), Old: git.ZeroID}
	if _, err := store.Create(ctx, h, st, ledger.Event{Type: ledger.EventRunStarted}, pin); err != nil {
		return nil, err
	}
	specs := make([]ledger.JobSpec, n)
	for i := range specs {
		specs[i] = ledger.JobSpec{ID: fmt.Sprintf("j%04d", i)}
	}
	_, err = store.Update(ctx, "b", func(r *ledger.Run) (*gitstate.Change, error) {
		return &gitstate.Change{Event: ledger.Event{Type: ledger.EventJobAdded}}, ledger.AddJobs(&r.State, specs)
	})
	return store, err
}
