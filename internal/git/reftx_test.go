package git

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The ledger's ref transactions run in process (reftx.go) and give git's answers:
// compare-and-swap, create-only, a ref only in packed-refs, all-or-nothing, locks;
// everything else goes to git, which the count of git processes shows. Not parallel:
// Started counts the whole test binary's processes.
func TestLocalRefTransactions(t *testing.T) {
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	head := g("", "rev-parse", "HEAD")
	blob := func(s string) string {
		id, err := r.WriteBlob(ctx, []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return id.String()
	}
	a, b := blob("a\n"), blob("b\n")
	r.configIn(ctx, r.CommonDir) // read once per command, as a command's first step does
	type outcome int
	const (
		ok outcome = iota
		conflict
		locked
		staleRemoved
		failed
	)
	check := func(what string, wantGit bool, want outcome, ups ...RefUpdate) {
		t.Helper()
		before := Started()
		err := r.UpdateRefs(ctx, what, ups...)
		if asked := Started() > before; asked != wantGit {
			t.Errorf("%s: asked git = %v, want %v", what, asked, wantGit)
		}
		var got outcome
		switch {
		case err == nil:
			got = ok
		case errors.Is(err, ErrStaleLockRemoved):
			got = staleRemoved
		case errors.Is(err, ErrRefLocked):
			got = locked
		case errors.Is(err, ErrRefConflict):
			got = conflict
		default:
			got = failed
		}
		if got != want {
			t.Fatalf("%s: outcome %d (%v), want %d", what, got, err, want)
		}
	}
	refs := func() string {
		t.Helper()
		return g("", "for-each-ref", "--format=%(refname) %(objectname)", "refs/atlas")
	}

	// In process: git's answers, and no git process.
	check("create", false, ok, RefUpdate{Name: "refs/atlas/runs/x", New: a, Old: ZeroID})
	check("create again", false, conflict, RefUpdate{Name: "refs/atlas/runs/x", New: b, Old: ZeroID})
	check("stale old value", false, conflict, RefUpdate{Name: "refs/atlas/runs/x", New: b, Old: b})
	check("missing ref expected", false, conflict, RefUpdate{Name: "refs/atlas/runs/none", New: b, Old: a})
	check("compare and swap", false, ok, RefUpdate{Name: "refs/atlas/runs/x", New: b, Old: a})
	check("no expectation", false, ok, RefUpdate{Name: "refs/atlas/runs/x", New: a})
	check("all or nothing", false, conflict,
		RefUpdate{Name: "refs/atlas/runs/y", New: a, Old: ZeroID}, RefUpdate{Name: "refs/atlas/runs/x", New: b, Old: b})
	if got := refs(); got != "refs/atlas/runs/x "+a {
		t.Fatalf("after the failed transaction: %q", got)
	}
	if locks, _ := filepath.Glob(filepath.Join(r.CommonDir, "refs/atlas/runs/*.lock")); len(locks) != 0 {
		t.Fatalf("locks left: %v", locks)
	}
	// A ref only in packed-refs is read there, and a new value goes to a loose file.
	g("", "pack-refs", "--all")
	if _, err := os.Stat(filepath.Join(r.CommonDir, "refs/atlas/runs/x")); !os.IsNotExist(err) {
		t.Fatalf("x is still loose: %v", err)
	}
	check("packed, create", false, conflict, RefUpdate{Name: "refs/atlas/runs/x", New: b, Old: ZeroID})
	check("packed, stale", false, conflict, RefUpdate{Name: "refs/atlas/runs/x", New: b, Old: b})
	check("packed, swap", false, ok, RefUpdate{Name: "refs/atlas/runs/x", New: b, Old: a})
	if got := g("", "rev-parse", "refs/atlas/runs/x"); got != b {
		t.Fatalf("packed ref updated to %s, want %s", got, b)
	}

	// Locks: another process's is waited for and reported; a killed git's old one is
	// removed, and the same transaction then succeeds.
	lock := filepath.Join(r.CommonDir, "refs/atlas/runs/x.lock")
	if err := os.WriteFile(lock, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	check("locked", false, locked, RefUpdate{Name: "refs/atlas/runs/x", New: a, Old: b})
	old := time.Now().Add(-2 * r.LockAge())
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	check("stale lock", false, staleRemoved, RefUpdate{Name: "refs/atlas/runs/x", New: a, Old: b})
	check("after the stale lock", false, ok, RefUpdate{Name: "refs/atlas/runs/x", New: a, Old: b})

	// To git: what git does more than the files backend's plain steps.
	g("", "update-ref", "refs/atlas/logged/l", a)
	if err := os.MkdirAll(filepath.Join(r.CommonDir, "logs/refs/atlas/logged"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.CommonDir, "logs/refs/atlas/logged/l"), nil, 0o666); err != nil {
		t.Fatal(err)
	}
	check("a ref with a reflog", true, ok, RefUpdate{Name: "refs/atlas/logged/l", New: b, Old: a})
	if log, _ := os.ReadFile(filepath.Join(r.CommonDir, "logs/refs/atlas/logged/l")); !strings.HasPrefix(string(log), a+" "+b+" ") {
		t.Fatalf("reflog %q, want the update git appended", log)
	}
	check("a branch of git-atlas's, made", false, ok, RefUpdate{Name: "refs/heads/atlas/n", New: head, Old: ZeroID})
	check("a branch of git-atlas's, checked", false, ok, RefUpdate{Name: "refs/heads/atlas/n", New: head, Old: head})
	check("a branch made at a blob", true, failed, RefUpdate{Name: "refs/heads/atlas/blob", New: a, Old: ZeroID})
	next := g("", "commit-tree", "-p", head, "-m", "next", head+"^{tree}")
	check("a branch of git-atlas's, moved", true, ok, RefUpdate{Name: "refs/heads/atlas/n", New: next, Old: head})
	check("another branch", true, ok, RefUpdate{Name: "refs/heads/n", New: head, Old: ZeroID})
	check("a deletion", true, ok, RefUpdate{Name: "refs/atlas/runs/x", New: ZeroID, Old: a})
	g("", "update-ref", "refs/atlas/df/d", a)
	check("a ref where a directory is", true, conflict, RefUpdate{Name: "refs/atlas/df", New: a, Old: ZeroID})
	check("a directory where a ref is", true, conflict, RefUpdate{Name: "refs/atlas/df/d/e", New: a, Old: ZeroID})
	g("", "pack-refs", "--all")
	check("a directory where a packed ref is", true, conflict, RefUpdate{Name: "refs/atlas/df/d/e", New: a, Old: ZeroID})
	if _, err := os.Stat(filepath.Join(r.CommonDir, "refs/atlas/df/d/e")); !os.IsNotExist(err) {
		t.Fatalf("a directory made for the lock was left: %v", err)
	}
	g("", "update-ref", "refs/atlas/runs/p", a)
	g("", "symbolic-ref", "refs/atlas/sym", "refs/atlas/runs/p")
	check("a symbolic ref", true, ok, RefUpdate{Name: "refs/atlas/sym", New: b})
	if got := g("", "rev-parse", "refs/atlas/runs/p"); got != b {
		t.Fatalf("the symbolic ref's target is at %s, want %s", got, b)
	}
	check("a name git refuses", true, failed, RefUpdate{Name: "refs/atlas/a..b", New: a, Old: ZeroID})
	for _, c := range []struct{ key, value string }{{"core.logAllRefUpdates", "always"}, {"core.sharedRepository", "group"}} {
		g("", "config", c.key, c.value)
		r.ReloadConfig()
		r.configIn(ctx, r.CommonDir)
		check(c.key, true, ok, RefUpdate{Name: "refs/atlas/cfg/" + c.value, New: a, Old: ZeroID})
		if _, err := os.Stat(filepath.Join(r.CommonDir, "logs/refs/atlas/cfg", c.value)); (err == nil) != (c.value == "always") {
			t.Fatalf("%s: reflog: %v", c.key, err)
		}
		g("", "config", "--unset", c.key)
		r.ReloadConfig()
	}
	r.configIn(ctx, r.CommonDir)
	check("back in process", false, ok, RefUpdate{Name: "refs/atlas/cfg/plain", New: a, Old: ZeroID})
	g("", "repack", "-a", "-d", "-q")
	check("a packed object", false, ok, RefUpdate{Name: "refs/atlas/runs/q", New: a, Old: ZeroID})
	check("an object no store has", true, failed, RefUpdate{Name: "refs/atlas/runs/none", New: strings.Repeat("ab", 20), Old: ZeroID})
	g("", "update-ref", "refs/replace/"+head, head)
	check("a packed object under a replace ref", true, ok, RefUpdate{Name: "refs/atlas/runs/r", New: a, Old: ZeroID})
}

// In-process transactions and `git update-ref` moving the same ref at once lose no
// update: each compare-and-swap that succeeded moved the ref one step.
func TestLocalRefTransactionsBesideGit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	const steps = 60
	ids := make([]string, steps+1)
	step := map[string]int{}
	for i := range ids {
		id, err := r.WriteBlob(ctx, []byte(strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		ids[i], step[id.String()] = id.String(), i
	}
	const ref = "refs/atlas/runs/counter"
	g("", "update-ref", ref, ids[0])
	var mu sync.Mutex
	moved := 0
	advance := func(viaGit bool) bool {
		cur, err := r.ReadRef(ctx, ref)
		if err != nil {
			t.Error(err)
			return false
		}
		i := step[cur]
		if i == steps {
			return false
		}
		if viaGit {
			_, err = runGit(r.CommonDir, nil, "", "update-ref", ref, ids[i+1], cur)
		} else {
			err = r.UpdateRefs(ctx, "", RefUpdate{Name: ref, New: ids[i+1], Old: cur})
		}
		if err == nil {
			mu.Lock()
			moved++
			mu.Unlock()
		} else if !viaGit && !errors.Is(err, ErrRefConflict) {
			t.Error(err)
			return false
		}
		return true
	}
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for advance(w == 0) {
			}
		})
	}
	wg.Wait()
	final, _ := r.ReadRef(ctx, ref)
	if step[final] != steps || moved != steps {
		t.Fatalf("ref at step %d after %d successful moves, want %d and %d", step[final], moved, steps, steps)
	}
	if locks, _ := filepath.Glob(filepath.Join(r.CommonDir, "refs/atlas/runs/*.lock")); len(locks) != 0 {
		t.Fatalf("locks left: %v", locks)
	}
}

// A ledger write that makes a node's branch, made in process, leaves what `git
// update-ref --stdin -m` leaves: the same refs, and the branch's reflog line byte for
// byte (its time blanked) where git starts one (a repository with a work tree) and
// none where it does not (a bare one). A check of the branch (old and new the same)
// changes nothing, and one that fails is git's conflict. Not parallel: it counts the
// processes this package starts.
func TestLocalBranchUpdatesAgreeWithGit(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	repos := twinRepos(t, base)
	const branch = "refs/heads/atlas/r/node/n"
	const msg = "atlas: worktree_added r"
	when := regexp.MustCompile(`> [0-9]+ ([-+][0-9]{4})([\t\n])`)
	state := func(r *Repository, twin string) string {
		t.Helper()
		refs := mustGit(t, r.CommonDir, nil, "", "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/atlas", "refs/atlas")
		log, err := os.ReadFile(filepath.Join(r.CommonDir, "logs", filepath.FromSlash(branch)))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return refs + "reflog: " + string(when.ReplaceAll(log, []byte("> TIME $1$2")))
	}
	for _, name := range []string{"plain", "sep", "bare.git"} {
		pair := repos[name]
		rev := "main"
		if name == "sep" {
			rev = "side"
		}
		commit := mustGit(t, pair[0].CommonDir, nil, "", "rev-parse", rev)
		blob := mustGit(t, pair[0].CommonDir, nil, "blob\n", "hash-object", "-w", "--stdin")
		if got := mustGit(t, pair[1].CommonDir, nil, "blob\n", "hash-object", "-w", "--stdin"); got != blob {
			t.Fatalf("%s: twins differ: %s %s", name, blob, got)
		}
		made := []RefUpdate{{Name: "refs/atlas/runs/r", New: blob, Old: ZeroID}, {Name: branch, New: commit, Old: ZeroID}}
		checked := []RefUpdate{{Name: branch, New: commit, Old: commit}}
		stale := []RefUpdate{{Name: "refs/atlas/runs/r", New: blob, Old: blob}, {Name: branch, New: blob, Old: blob}}

		viaGit := func(ups []RefUpdate) error {
			args := append(append([]string{}, globalArgs...), updateRefArgs(msg)...)
			_, err := runGit(pair[0].CommonDir, nil, string(updateRefInput(ups, pair[0].NullID())), args...)
			return err
		}
		_ = pair[1].configIn(ctx, pair[1].CommonDir) // read once per command, outside the count
		inProcess := func(what string, ups []RefUpdate) error {
			before := Started()
			err := pair[1].UpdateRefs(ctx, msg, ups...)
			if n := Started() - before; n != 0 {
				t.Errorf("%s, %s: started %d git processes, want none", name, what, n)
			}
			return err
		}
		for _, step := range []struct {
			what     string
			ups      []RefUpdate
			conflict bool
		}{
			{"made", made, false},
			{"checked", checked, false},
			{"checked against a stale value", []RefUpdate{{Name: branch, New: blob, Old: blob}}, true},
			{"stale, all or nothing", stale, true},
		} {
			gerr, lerr := viaGit(step.ups), inProcess(step.what, step.ups)
			if (gerr != nil) != step.conflict || (lerr != nil) != step.conflict {
				t.Fatalf("%s, %s: git: %v; in process: %v", name, step.what, gerr, lerr)
			}
			if step.conflict && !errors.Is(lerr, ErrRefConflict) {
				t.Errorf("%s, %s: in process: %v, want a conflict", name, step.what, lerr)
			}
			if g, l := state(pair[0], "git"), state(pair[1], "local"); g != l {
				t.Errorf("%s, %s: git left\n%s\nin process\n%s", name, step.what, g, l)
			}
		}
		if log := state(pair[1], "local"); (name == "bare.git") != strings.HasSuffix(log, "reflog: ") {
			t.Errorf("%s: reflog %q", name, log)
		}
		// A clone's case: the commit packed (the only one, so no delta), a second
		// branch made at it; the pack's index and entry say it is a commit.
		for _, r := range pair {
			mustGit(t, r.CommonDir, nil, "", "repack", "-a", "-d", "-q")
			mustGit(t, r.CommonDir, nil, "", "prune")
		}
		if typ, found := pair[1].objects.(*goGitStore).loose().packedType(commit); !found || typ != "commit" {
			t.Fatalf("%s: the commit is not a packed commit: %q %v", name, typ, found)
		}
		packed := []RefUpdate{{Name: branch + "-packed", New: commit, Old: ZeroID}}
		if gerr, lerr := viaGit(packed), inProcess("made at a packed commit", packed); gerr != nil || lerr != nil {
			t.Fatalf("%s, made at a packed commit: git: %v; in process: %v", name, gerr, lerr)
		}
		logOf := func(r *Repository) string {
			b, _ := os.ReadFile(filepath.Join(r.CommonDir, "logs", filepath.FromSlash(branch+"-packed")))
			return string(when.ReplaceAll(b, []byte("> TIME $1$2")))
		}
		if g, l := logOf(pair[0]), logOf(pair[1]); g != l {
			t.Errorf("%s, made at a packed commit: reflogs differ\ngit: %q\nin process: %q", name, g, l)
		}
		if g, l := state(pair[0], "git"), state(pair[1], "local"); g != l {
			t.Errorf("%s, made at a packed commit: git left\n%s\nin process\n%s", name, g, l)
		}
	}
}

// TestWaitLocksTellsWhatItWaitsFor: a write that waits for a ref lock in its way
// says so once, before its first wait, with the lock's path and the age at which a
// killed process's lock is removed, whichever writes the refs (in process, or git's
// update-ref); a write with nothing in its way says nothing.
func TestWaitLocksTellsWhatItWaitsFor(t *testing.T) {
	t.Parallel() // its own repositories; no package globals
	ctx := context.Background()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			r, g := testRepo(t, k)
			// this repository's alone; long enough that the lock is fresh at the first
			// try however slow the machine, so that the write waits
			r.StaleLockAge = time.Second
			head := mustOID(t, g("", "rev-parse", "HEAD"))
			type told struct {
				lock  string
				after time.Duration
			}
			var got []told
			r.OnLockWait = func(lock string, after time.Duration) { got = append(got, told{lock, after}) }
			write := func(name string) func() error {
				return func() error { return r.UpdateRefs(ctx, "test", RefUpdate{Name: name, New: head.String()}) }
			}

			lock := filepath.Join(r.CommonDir, "refs", "atlas", "x.lock")
			if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(lock, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := r.WaitLocks(ctx, write("refs/atlas/x")); err != nil {
				t.Fatalf("WaitLocks with a fresh lock in the way: %v", err)
			}
			if len(got) != 1 || got[0].after != r.StaleLockAge {
				t.Fatalf("told %+v; want once, with the stale age %v", got, r.StaleLockAge)
			}
			if a, err := os.Stat(filepath.Dir(got[0].lock)); err != nil || filepath.Base(got[0].lock) != "x.lock" || !sameDir(t, a, filepath.Dir(lock)) {
				t.Errorf("told the lock %q; want %s", got[0].lock, lock)
			}
			if _, err := os.Stat(lock); !os.IsNotExist(err) {
				t.Errorf("the lock is still there once stale: %v", err)
			}

			got = nil
			if err := r.WaitLocks(ctx, write("refs/atlas/y")); err != nil || len(got) != 0 {
				t.Errorf("WaitLocks with nothing in the way: %v, told %+v", err, got)
			}
		})
	}
}

// sameDir reports whether a is the directory dir.
func sameDir(t *testing.T, a os.FileInfo, dir string) bool {
	t.Helper()
	b, err := os.Stat(dir)
	return err == nil && os.SameFile(a, b)
}
