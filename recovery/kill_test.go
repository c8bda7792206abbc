package recovery_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/recovery"
)

// TestKillDuringRemove SIGKILLs `git atlas worktree remove` (git-atlas, the binary
// testenv.Command built, and every git it started: the whole process group, as a reboot
// would) at random moments, over and over (30 times with the sweeps build tag, 4
// without: two anywhere in the command's span, two in its later part, where it pins,
// renames, prunes and writes the ledger). After every kill, either the worktree is
// still there unchanged (files, modes, mtimes, index bytes, HEAD) or a snapshot exists
// that restores it exactly — never neither (docs/contract.md §11, invariant 2).
// Running the command again then finishes the job.
func TestKillDuringRemove(t *testing.T) {
	t.Parallel() // its own repository; no package globals, no Setenv
	if testing.Short() {
		t.Skip("kills of git-atlas processes")
	}
	bin := testenv.Command(t)
	f := newFixture(t, 0)
	ctx := context.Background()
	dirty := func(wt string, i int) {
		for _, m := range corpus {
			switch m.name {
			case "staged", "partially-staged", "deletions", "symlinks", "binary", "untracked", "odd-names", "ignored":
				m.apply(t, f, wt)
			}
		}
		write(t, filepath.Join(wt, "unique.txt"), fmt.Sprintf("iteration %d\n", i))
	}
	removeCmd := func(node string) *exec.Cmd {
		c := exec.Command(bin, "-C", f.dir, "worktree", "remove", f.run, node, "--json")
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return c
	}

	// One uninterrupted run gives the span to aim the kills at.
	wt := f.worktree("k0")
	dirty(wt, 0)
	start := time.Now()
	if out, err := removeCmd("k0").CombinedOutput(); err != nil {
		t.Fatalf("remove: %v\n%s", err, out)
	}
	span := time.Since(start)
	t.Logf("an uninterrupted remove takes %v", span)

	rng := rand.New(rand.NewPCG(42, uint64(time.Now().UnixNano())))
	outcomes := map[string]int{}
	kills := testenv.Rounds(4, 30)
	i := 1
	for ; i <= kills; i++ {
		node := fmt.Sprintf("k%d", i)
		wt := f.worktree(node)
		dirty(wt, i)
		before := capture(t, wt)
		exactBefore := exact(t, wt)

		c := removeCmd(node)
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		// Half the kills anywhere, half in the later part (pin, rename, prune, ledger).
		lo := int64(0)
		if i%2 == 1 {
			lo = int64(span) * 6 / 10
		}
		delay := time.Duration(lo + rng.Int64N(int64(span)*11/10-lo))
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s: remove failed before the kill: %v\n%s", node, err, out.String())
			}
			outcomes["finished before the kill"]++
		case <-time.After(delay):
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			if err := <-done; err == nil {
				outcomes["finished as the kill came"]++
			}
		}
		// A kill inside `git update-ref` leaves its ref lock behind; git never breaks a
		// lock on its own, so this is what an operator (or a future stale-lock sweep)
		// would do. Count them: they are a finding, not a loss.
		if n := removeStaleRefLocks(t, f.repo.CommonDir); n > 0 {
			outcomes["stale ref locks left"]++
		}

		intact := false
		if got, err := exactOrErr(wt); err == nil && got == exactBefore {
			intact = true
		}
		snap := snapshotOf(t, f, node)
		verified := snap != "" && restoresTo(t, f, snap, before)
		switch {
		case intact && snap == "":
			outcomes["worktree intact, no snapshot yet"]++
		case intact:
			outcomes["worktree intact, snapshot taken"]++
		case verified:
			outcomes["worktree gone, snapshot verified"]++
		default:
			t.Fatalf("%s: killed after %v: the worktree changed (exists=%v) and no verified snapshot (ref %q)\n%s",
				node, delay, exists(wt), snap, out.String())
		}

		// Run again: it finishes (or says the removal was recorded already), and the
		// work is kept.
		if o, err := removeCmd(node).CombinedOutput(); err != nil {
			if r, lerr := f.store.Load(ctx, f.run); lerr != nil || r.State.Worktree(node) != nil || !strings.Contains(string(o), "not_found") {
				t.Fatalf("%s: re-run after the kill: %v\n%s", node, err, o)
			}
		}
		if exists(wt) {
			t.Fatalf("%s: worktree still there after the re-run", node)
		}
		if snap = snapshotOf(t, f, node); snap == "" || !restoresTo(t, f, snap, before) {
			t.Fatalf("%s: after the re-run no snapshot restores the worktree", node)
		}
	}
	var lines []string
	for k, v := range outcomes {
		lines = append(lines, fmt.Sprintf("%4d  %s", v, k))
	}
	sort.Strings(lines)
	t.Logf("%d kills:\n%s", i-1, strings.Join(lines, "\n"))
	if r, err := f.store.Load(ctx, f.run); err != nil || len(r.State.Worktrees) != 0 {
		t.Fatalf("ledger still lists worktrees: %v %v", err, r)
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// exactOrErr is exact for a worktree that may be half deleted.
func exactOrErr(wt string) (s string, err error) {
	if !exists(wt) {
		return "", os.ErrNotExist
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	ft := &fatalTB{}
	s = exact(ft, wt)
	if ft.failed {
		return "", fmt.Errorf("unreadable worktree")
	}
	return s, nil
}

// fatalTB turns a helper's Fatal into a panic that exactOrErr recovers.
type fatalTB struct {
	testing.TB
	failed bool
}

func (f *fatalTB) Helper()                   {}
func (f *fatalTB) Fatal(args ...any)         { f.failed = true; panic(fmt.Sprint(args...)) }
func (f *fatalTB) Fatalf(s string, a ...any) { f.failed = true; panic(fmt.Sprintf(s, a...)) }

// snapshotOf returns the commit of the newest recovery ref of node, or "". The first
// one taken is the one of the untouched worktree, so it is the one that must restore.
func snapshotOf(t *testing.T, f *fixture, node string) string {
	t.Helper()
	out := run(t, f.dir, "for-each-ref", "--sort=creatordate", "--format=%(objectname) %(refname)", "refs/atlas/recovery/"+f.run+"/")
	for line := range strings.SplitSeq(out, "\n") {
		id, ref, ok := strings.Cut(line, " ")
		if ok && strings.HasPrefix(ref, "refs/atlas/recovery/"+f.run+"/"+node+"-") {
			return id
		}
	}
	return ""
}

// restoresTo restores a snapshot and compares its files and index with the worktree
// as it was.
func restoresTo(t *testing.T, f *fixture, commit string, before state) bool {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "restore")
	s, err := recovery.Restore(ctx, f.repo, testenv.HexOID(commit), dir, false)
	if err != nil {
		t.Logf("restore %s: %v", commit, err)
		return false
	}
	if d := diffMaps(before.withoutIgnored(), fileMap(t, dir, false)); d != "" {
		t.Logf("restore %s differs:\n%s", commit, d)
		return false
	}
	items, err := f.repo.LsTree(ctx, s.IndexTree)
	if err != nil {
		t.Logf("index tree: %v", err)
		return false
	}
	var index strings.Builder
	for _, it := range items {
		fmt.Fprintf(&index, "%s %s 0\t%s\x00", it.Mode, it.ID, it.Path)
	}
	if index.String() != before.Index {
		t.Logf("index of %s differs", commit)
		return false
	}
	return true
}

// removeStaleRefLocks deletes the .lock files a killed `git update-ref` left, and
// returns how many there were.
func removeStaleRefLocks(t *testing.T, commonDir string) int {
	t.Helper()
	n := 0
	_ = filepath.WalkDir(filepath.Join(commonDir, "refs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".lock") {
			n++
			_ = os.Remove(p)
		}
		return nil
	})
	if exists(filepath.Join(commonDir, "packed-refs.lock")) {
		n++
		_ = os.Remove(filepath.Join(commonDir, "packed-refs.lock"))
	}
	return n
}
