package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/resume"
)

// hookRepo is a repository with the hook installed, where `git-atlas` on PATH is a
// stand-in that only records that the script started it (and `date` may be a
// stand-in that prints a chosen time): what the script decides alone is what these
// tests see.
type hookRepo struct {
	t        *testing.T
	dir, bin string
	log      string
	store    *gitstate.Store
	// env is the environment of the git commands the test runs: the pinned one
	// (TestMain), with bin first on PATH. The test's own process keeps its PATH, so
	// the tests run in parallel.
	env []string
}

func newHookRepo(t *testing.T) *hookRepo {
	t.Helper()
	h := &hookRepo{t: t, dir: t.TempDir(), bin: t.TempDir()}
	h.env = append(os.Environ(), "PATH="+h.bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	h.log = filepath.Join(h.bin, "calls")
	h.write(filepath.Join(h.bin, "git-atlas"), "#!/bin/sh\necho \"$*\" >>\""+h.log+"\"\n", 0o755)
	h.git("init", "-q", "-b", "main")
	h.write(filepath.Join(h.dir, "f.txt"), "f\n", 0o644)
	h.git("add", "f.txt")
	h.git("commit", "-q", "-m", "first")
	h.git("branch", "other")
	repo, err := git.Open(context.Background(), h.dir)
	if err != nil {
		t.Fatal(err)
	}
	h.store = Options{}.store(repo) // as a front end opens it: its writes keep the hint
	if _, err := Install(context.Background(), repo, Options{}); err != nil {
		t.Fatal(err)
	}
	if !repo.HintInUse() {
		t.Fatal("install left no hint")
	}
	return h
}

func (h *hookRepo) write(path, content string, mode os.FileMode) {
	h.t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		h.t.Fatal(err)
	}
}

func (h *hookRepo) git(args ...string) string {
	h.t.Helper()
	return h.gitIn(h.dir, args...)
}

// command runs git with args in dir, in the test's environment (h.env) and extra, and
// returns what it printed: its standard output, then its standard error.
func (h *hookRepo) command(dir string, extra []string, args ...string) (string, error) {
	out, stderr, err := testenv.GitRun(dir, append(append([]string(nil), h.env...), extra...), "", args...)
	return out + stderr, err
}

func (h *hookRepo) gitIn(dir string, args ...string) string {
	h.t.Helper()
	out, err := h.command(dir, nil, args...)
	if err != nil {
		h.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(out)
}

// checkout switches dir's branch (between main and other) and reports whether the
// script started git-atlas, and what it printed; env is added to git's environment.
func (h *hookRepo) checkout(dir string, env ...string) (asked bool, stderr string) {
	h.t.Helper()
	before, _ := os.ReadFile(h.log)
	args := []string{"checkout", "-q", "other"}
	switch {
	case dir != h.dir: // a linked worktree: the branches are the main worktree's
		args = []string{"checkout", "-q", "--detach", "main"}
	case h.gitIn(dir, "rev-parse", "--abbrev-ref", "HEAD") == "other":
		args[2] = "main"
	}
	out, err := h.command(dir, env, args...)
	if err != nil {
		h.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	after, _ := os.ReadFile(h.log)
	return len(after) > len(before), out
}

// refresh is what git-atlas does when the script asks it (PostCheckout outside a
// managed worktree): it re-derives the hint.
func (h *hookRepo) refresh() []resume.Candidate {
	h.t.Helper()
	cands, err := RefreshHint(context.Background(), h.store, true)
	if err != nil {
		h.t.Fatal(err)
	}
	return cands
}

func (h *hookRepo) mustAnswerAlone(why string) string {
	h.t.Helper()
	asked, out := h.checkout(h.dir)
	if asked {
		h.t.Fatalf("%s: the script started git-atlas with a fresh hint", why)
	}
	return out
}

func (h *hookRepo) mustAsk(why string) {
	h.t.Helper()
	if asked, out := h.checkout(h.dir); !asked {
		h.t.Fatalf("%s: the script answered alone (%q) where the hint cannot be trusted", why, out)
	}
}

// run creates run id with the given status and driver lease end (zero: none).
func (h *hookRepo) run(store *gitstate.Store, id, status string, driver time.Time) {
	h.t.Helper()
	now := ledger.Stamp(time.Now().UTC())
	head := h.gitIn(store.Repo.TopLevel, "rev-parse", "HEAD")
	hd := ledger.Header{RunID: id, Kind: "single", CreatedAt: now, Baseline: testenv.HexOID(head), Stages: []ledger.StageDef{{Name: "a"}}}
	st := ledger.State{RunID: id, Status: status, UpdatedAt: now, Stages: []ledger.StageState{{Name: "a", Status: "dispatched"}}}
	if !driver.IsZero() {
		st.Driver = &ledger.Lease{Holder: "agent", ExpiresAt: ledger.Stamp(driver)}
	}
	if _, err := store.Create(context.Background(), hd, st, ledger.Event{Type: "run_started"}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *hookRepo) setStatus(id, status string) {
	h.t.Helper()
	_, err := h.store.Update(context.Background(), id, func(r *ledger.Run) (*gitstate.Change, error) {
		from := r.State.Status
		r.State.Status = status
		return &gitstate.Change{Event: ledger.RunFinishedEvent(ledger.About{}, ledger.RunFinishedData{From: from, Status: status})}, nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
}

const interruptedLine = "git-atlas: run %s was interrupted; `git atlas resume --detect` lists it\n"

// The common case: a fresh hint and nothing to say; then a ledger write by git-atlas
// keeps the hint fresh, and the script says what git-atlas would.
func TestHintAnswersWithoutGitAtlas(t *testing.T) {
	t.Parallel()
	h := newHookRepo(t)
	if out := h.mustAnswerAlone("no runs"); out != "" {
		t.Fatalf("no runs: printed %q", out)
	}
	h.run(h.store, "done", ledger.RunCompleted, time.Time{})
	if out := h.mustAnswerAlone("a finished run"); out != "" {
		t.Fatalf("a finished run: printed %q", out)
	}
	h.run(h.store, "r1", ledger.RunRunning, time.Time{}) // no driver: interrupted
	if out := h.mustAnswerAlone("an interrupted run"); out != fmt.Sprintf(interruptedLine, "r1") {
		t.Fatalf("an interrupted run: printed %q", out)
	}
	// A file checkout does nothing, as before.
	if out, err := h.command(h.dir, nil, "checkout", "-q", "HEAD", "--", "f.txt"); err != nil || len(out) > 0 {
		t.Fatalf("file checkout: %v %q", err, out)
	}
}

// The hint describes the local ledger, which is what the hook reads: re-deriving it
// never fetches, not even for a store that writes through a remote (every write
// refreshes the hint, with the writer's store), so an unreachable remote neither
// fails it nor costs it a round trip.
func TestHintReadsTheLocalLedger(t *testing.T) {
	t.Parallel()
	h := newHookRepo(t)
	h.run(h.store, "r1", ledger.RunRunning, time.Time{}) // no driver: interrupted
	// ... and a managed worktree of it, whose record the hint lists (read locally too).
	wt := filepath.Join(h.store.Repo.CommonDir, "atlas", "worktrees", "r1", "a")
	h.git("worktree", "add", "-q", "-b", "atlas/r1/node/a", wt)
	_, err := h.store.Update(context.Background(), "r1", func(r *ledger.Run) (*gitstate.Change, error) {
		r.State.Worktrees = []ledger.WorktreeRec{{Node: "a", Path: wt, Branch: "atlas/r1/node/a"}}
		return &gitstate.Change{Event: ledger.Event{Type: "test_worktrees"}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	remote := gitstate.New(h.store.Repo)
	remote.Remote = &gitstate.Remote{Name: filepath.Join(t.TempDir(), "no-such-remote")}
	cands, err := RefreshHint(context.Background(), remote, true)
	if err != nil || len(cands) != 1 || cands[0].RunID != "r1" {
		t.Fatalf("RefreshHint through an unreachable remote = %+v, %v; want r1 from the local ledger", cands, err)
	}
	if out := h.mustAnswerAlone("a hint derived through a remote"); out != fmt.Sprintf(interruptedLine, "r1") {
		t.Fatalf("printed %q", out)
	}
	if data, _ := os.ReadFile(h.store.Repo.HintPath()); !strings.Contains(string(data), "\nwt refs/heads/atlas/r1/node/a ") {
		t.Fatalf("hint %q: the managed worktree is not listed", data)
	}
}

// Every way the hint can go stale sends the script to git-atlas.
func TestStaleHintAsksGitAtlas(t *testing.T) {
	t.Parallel()
	h := newHookRepo(t)
	h.run(h.store, "fin", ledger.RunRunning, time.Time{})
	h.setStatus("fin", ledger.RunCompleted)
	h.mustAnswerAlone("fresh")

	// Missing.
	if err := h.store.Repo.RemoveHint(); err != nil {
		t.Fatal(err)
	}
	h.mustAsk("no hint")
	h.refresh()
	h.mustAnswerAlone("re-derived")

	// A ref moved by plain git: the run taken back to its interrupted tip.
	h.git("update-ref", "refs/atlas/runs/fin", "refs/atlas/runs/fin~1")
	h.mustAsk("a ledger ref moved by plain git")
	if c := h.refresh(); len(c) != 1 || c[0].RunID != "fin" {
		t.Fatalf("after plain git: git-atlas finds %v", c)
	}
	if out := h.mustAnswerAlone("re-derived"); out != fmt.Sprintf(interruptedLine, "fin") {
		t.Fatalf("re-derived: %q", out)
	}
	h.setStatus("fin", ledger.RunCompleted)
	h.mustAnswerAlone("finished again")

	// A write by a git-atlas that keeps no hint (an older version).
	h.run(gitstate.New(h.store.Repo), "old", ledger.RunStopped, time.Time{}) // no AfterWrite
	h.mustAsk("a run written by an older git-atlas")
	h.refresh()
	h.setStatus("old", ledger.RunCompleted)

	// A run fetched from another clone.
	other := t.TempDir()
	h.gitIn(other, "clone", "-q", h.dir, ".")
	orepo, err := git.Open(context.Background(), other)
	if err != nil {
		t.Fatal(err)
	}
	h.run(gitstate.New(orepo), "far", ledger.RunStopped, time.Time{})
	h.mustAnswerAlone("before the fetch")
	h.git("fetch", "-q", other, "+refs/atlas/*:refs/atlas/*")
	h.mustAsk("a run fetched from another clone")
	h.refresh()
	h.setStatus("far", ledger.RunCompleted)

	// Refs packed, then a ref added to packed-refs alone (as a clone writes them).
	h.git("pack-refs", "--all")
	h.mustAsk("refs packed")
	h.refresh()
	h.mustAnswerAlone("packed, re-derived")
	tip := h.git("rev-parse", "refs/atlas/runs/fin~1")
	packed := filepath.Join(h.store.Repo.CommonDir, "packed-refs")
	data, err := os.ReadFile(packed)
	if err != nil {
		t.Fatal(err)
	}
	// (No longer sorted, so say so in its header.)
	unsorted := strings.Replace(string(data), " sorted", "", 1) + tip + " refs/atlas/runs/packed-only\n"
	h.write(packed+".new", unsorted, 0o644)
	if err := os.Rename(packed+".new", packed); err != nil {
		t.Fatal(err)
	}
	h.mustAsk("a run added to packed-refs")
	h.refresh()

	// The config (which can move the worktrees' root) changed.
	h.mustAnswerAlone("re-derived")
	h.git("config", "atlas.worktreeRoot", filepath.Join(t.TempDir(), "wt"))
	h.mustAsk("atlas.worktreeRoot set")
	h.refresh()
	h.mustAnswerAlone("re-derived")

	// A hint the script does not understand: another version, cut short, empty.
	hint := h.store.Repo.HintPath()
	good, err := os.ReadFile(hint)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(hint)
	for name, bad := range map[string]string{
		"a newer version": strings.Replace(string(good), "git-atlas hint 1", "git-atlas hint 2", 1),
		"cut short":       strings.TrimSuffix(string(good), "end\n"),
		"empty":           "",
		"an unknown line": strings.Replace(string(good), "end\n", "future thing\nend\n", 1),
		"no expiry":       strings.Replace(string(good), "expires 0\n", "", 1),
	} {
		h.write(hint, bad, 0o644)
		if err := os.Chtimes(hint, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
		h.mustAsk("a hint " + name)
	}
}

// A live run becomes interrupted with no write at all when its driver lease ends:
// from the hint's `expires` second on, the script asks git-atlas. `date` is a
// stand-in here (no test waits for a lease to end).
func TestHintExpiresWithTheEarliestLease(t *testing.T) {
	t.Parallel()
	h := newHookRepo(t)
	soon := time.Now().Add(time.Hour).Truncate(time.Second).Add(300 * time.Millisecond)
	h.run(h.store, "live", ledger.RunRunning, soon.Add(time.Hour))
	h.run(h.store, "live2", ledger.RunBlocked, soon)
	h.run(h.store, "fin", ledger.RunCompleted, soon.Add(-2*time.Hour)) // finished: never interrupted
	data, err := os.ReadFile(h.store.Repo.HintPath())
	if err != nil {
		t.Fatal(err)
	}
	want := soon.Unix() // rounded down
	if !strings.Contains(string(data), fmt.Sprintf("\nexpires %d\n", want)) {
		t.Fatalf("hint %q: want expires %d", data, want)
	}
	// By that second's end the run is interrupted, as git-atlas decides it.
	r, err := h.store.Load(context.Background(), "live2")
	if err != nil {
		t.Fatal(err)
	}
	if !r.Interrupted(time.Unix(want+1, 0)) || r.Interrupted(time.Unix(want-1, 0)) {
		t.Fatalf("the run's lease ends at %s; the hint says %d", r.State.Driver.ExpiresAt, want)
	}
	fakeDate := func(sec int64) {
		h.write(filepath.Join(h.bin, "date"), "#!/bin/sh\necho "+strconv.FormatInt(sec, 10)+"\n", 0o755)
	}
	fakeDate(want - 1)
	h.mustAnswerAlone("before the lease ends")
	fakeDate(want)
	h.mustAsk("the lease ended")
	fakeDate(want + 3600*24)
	h.mustAsk("long after")
	h.write(filepath.Join(h.bin, "date"), "#!/bin/sh\nexit 1\n", 0o755)
	h.mustAsk("no clock")
}

// Managed worktrees are git-atlas's to judge: any linked worktree under the root, or
// locked, or in a checkout configured from the environment, asks it; the user's own
// linked worktree elsewhere does not.
func TestHintManagedWorktreesAsk(t *testing.T) {
	t.Parallel()
	h := newHookRepo(t)
	root := filepath.Join(h.store.Repo.CommonDir, "atlas", "worktrees")
	managed := filepath.Join(root, "r", "n")
	h.git("worktree", "add", "-q", "--detach", managed)
	mine := filepath.Join(t.TempDir(), "mine")
	h.git("worktree", "add", "-q", "--detach", mine)
	locked := filepath.Join(t.TempDir(), "locked")
	h.git("worktree", "add", "-q", "--detach", locked)
	h.git("worktree", "lock", locked)
	h.refresh() // worktree add runs no ledger write
	for _, c := range []struct {
		dir  string
		want bool
	}{{managed, true}, {locked, true}, {mine, false}, {h.dir, false}} {
		if asked, _ := h.checkout(c.dir); asked != c.want {
			t.Errorf("checkout in %s: asked git-atlas = %v, want %v", c.dir, asked, c.want)
		}
	}
	if asked, _ := h.checkout(mine, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=atlas.worktreeRoot", "GIT_CONFIG_VALUE_0="+filepath.Dir(mine)); !asked {
		t.Error("config from the environment (it can move the root): answered alone")
	}
}

// A hint is never left when the ledger changed while it was derived.
func TestWriteHintRace(t *testing.T) {
	t.Parallel()
	h := newHookRepo(t)
	repo := h.store.Repo
	err := repo.WriteHint(func() ([]byte, error) {
		h.git("update-ref", "refs/atlas/runs/x", "HEAD")
		return []byte("git-atlas hint 1\nexpires 0\nend\n"), nil
	})
	if !errors.Is(err, git.ErrHintRace) || repo.HintInUse() {
		t.Fatalf("a ref changed during the derivation: %v, hint left: %v", err, repo.HintInUse())
	}
	// Written, its stamp is the newest watched file's: not older, and a change made
	// right after (in the same clock tick, as like as not) is newer.
	h.refresh()
	hint, _ := os.Stat(repo.HintPath())
	runs, _ := os.Stat(filepath.Join(repo.CommonDir, "refs", "atlas", "runs"))
	if !hint.ModTime().Equal(runs.ModTime()) {
		t.Fatalf("hint stamped %s, the newest ledger change is %s", hint.ModTime(), runs.ModTime())
	}
	h.git("update-ref", "refs/atlas/runs/y", "HEAD")
	runs, _ = os.Stat(filepath.Join(repo.CommonDir, "refs", "atlas", "runs"))
	if !runs.ModTime().After(hint.ModTime()) {
		t.Fatalf("a change after the hint (%s) is not newer than it (%s)", runs.ModTime(), hint.ModTime())
	}
}

// A live run whose open attempt has an idle budget is interrupted when that budget
// runs out without a heartbeat, before its lease ends: the hint's `expires` is the
// earlier of the two, so the script asks git-atlas from then on.
func TestHintExpiresWithAnIdleAttempt(t *testing.T) {
	t.Parallel()
	h := newHookRepo(t)
	start := time.Now().UTC().Truncate(time.Second)
	lease := start.Add(2 * time.Hour)
	head := h.gitIn(h.store.Repo.TopLevel, "rev-parse", "HEAD")
	hd := ledger.Header{RunID: "idle", Kind: "single", CreatedAt: ledger.Stamp(start), Baseline: testenv.HexOID(head),
		Stages: []ledger.StageDef{{Name: "a", IdleBudget: "30m"}}}
	st := ledger.State{RunID: "idle", Status: ledger.RunRunning, UpdatedAt: ledger.Stamp(start),
		Stages: []ledger.StageState{{Name: "a", Status: ledger.StageDispatched,
			Attempts: []ledger.Attempt{{N: 1, StartedAt: ledger.Stamp(start), Baseline: testenv.HexOID(head)}}}},
		Driver: &ledger.Lease{Holder: "agent", ExpiresAt: ledger.Stamp(lease)}}
	if _, err := h.store.Create(context.Background(), hd, st, ledger.Event{Type: ledger.EventRunStarted}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(h.store.Repo.HintPath())
	if err != nil {
		t.Fatal(err)
	}
	idle := start.Add(30 * time.Minute).Unix()
	if !strings.Contains(string(data), fmt.Sprintf("\nexpires %d\n", idle)) {
		t.Fatalf("hint %q: want expires %d (the idle budget's end), not the lease's %d", data, idle, lease.Unix())
	}
	h.write(filepath.Join(h.bin, "date"), "#!/bin/sh\necho "+strconv.FormatInt(idle-1, 10)+"\n", 0o755)
	h.mustAnswerAlone("before the attempt goes idle")
	h.write(filepath.Join(h.bin, "date"), "#!/bin/sh\necho "+strconv.FormatInt(idle, 10)+"\n", 0o755)
	h.mustAsk("the attempt went idle")
	// And git-atlas, asked once the budget has run out, names the run.
	past := Options{Clock: func() time.Time { return time.Unix(idle+1, 0).UTC() }}
	res, err := PostCheckout(context.Background(), h.store.Repo, []string{"x", "y", "1"}, past)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Interrupted) != 1 || res.Interrupted[0].RunID != "idle" {
		t.Fatalf("post-checkout past the idle budget found %+v, want run idle", res.Interrupted)
	}
}

// A managed worktree the hint lists is answered alone while a checkout leaves its
// HEAD on the node's branch (nothing to say there, not even about interrupted runs),
// or when it is marked untrusted already; a checkout that moves HEAD off the branch,
// a worktree recorded away from <root>/<run>/<node>, a finished run's worktree and a
// cut-short list all ask git-atlas, which records what it must.
func TestHintManagedWorktreeAnswered(t *testing.T) {
	t.Parallel()
	h := newHookRepo(t)
	root := filepath.Join(h.store.Repo.CommonDir, "atlas", "worktrees")
	wt := filepath.Join(root, "r1", "a")
	branch := "atlas/r1/node/a"
	h.git("worktree", "add", "-q", "-b", branch, wt)
	h.git("worktree", "lock", "--reason", "git-atlas run r1 node a", wt)
	h.run(h.store, "r1", ledger.RunRunning, time.Time{}) // no driver: interrupted
	setRec := func(id string, rec *ledger.WorktreeRec) {
		t.Helper()
		_, err := h.store.Update(context.Background(), id, func(r *ledger.Run) (*gitstate.Change, error) {
			r.State.Worktrees = nil
			if rec != nil {
				r.State.Worktrees = []ledger.WorktreeRec{*rec}
			}
			return &gitstate.Change{Event: ledger.Event{Type: "test_worktrees"}}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	rec := ledger.WorktreeRec{Node: "a", Path: wt, Branch: branch}
	setRec("r1", &rec)
	checkout := func(args ...string) (bool, string) {
		t.Helper()
		before, _ := os.ReadFile(h.log)
		out, err := h.command(wt, nil, append([]string{"checkout", "-q"}, args...)...)
		if err != nil {
			t.Fatalf("git checkout %v: %v\n%s", args, err, out)
		}
		after, _ := os.ReadFile(h.log)
		return len(after) > len(before), out
	}
	if asked, out := checkout(branch); asked || out != "" {
		t.Fatalf("on its branch: asked git-atlas = %v, printed %q; want neither", asked, out)
	}
	if out := h.mustAnswerAlone("the main worktree"); out != fmt.Sprintf(interruptedLine, "r1") {
		t.Fatalf("the main worktree: printed %q", out)
	}
	if asked, _ := checkout("--detach"); !asked {
		t.Fatal("HEAD left its branch: answered alone (the worktree_untrusted event is git-atlas's to write)")
	}
	if asked, _ := checkout("-b", "elsewhere"); !asked {
		t.Fatal("another branch checked out: answered alone")
	}
	if asked, _ := checkout(branch); asked {
		t.Fatal("back on its branch (nothing recorded meanwhile): asked git-atlas")
	}

	rec.Untrusted = true
	setRec("r1", &rec)
	if asked, out := checkout("--detach"); asked || out != "" {
		t.Fatalf("marked untrusted already: asked git-atlas = %v, printed %q; want neither", asked, out)
	}

	// Cut short in the list of worktrees: not to be trusted.
	hint := h.store.Repo.HintPath()
	good, err := os.ReadFile(hint)
	if err != nil || !strings.HasSuffix(string(good), "wtend\n") {
		t.Fatalf("hint %q, %v: want a list of worktrees", good, err)
	}
	fi, _ := os.Stat(hint)
	h.write(hint, strings.TrimSuffix(string(good), "wtend\n"), 0o644)
	if err := os.Chtimes(hint, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if asked, _ := checkout("--detach"); !asked {
		t.Fatal("a list of worktrees without wtend: answered alone")
	}
	h.refresh()

	// A record of another node at that path (not where git-atlas puts its
	// worktrees): Owner's one-run lookup misses, and it takes the first record of
	// that path in any run, here r0's, whose branch HEAD is not on. The script must
	// not judge by r1's record.
	h.run(h.store, "r0", ledger.RunRunning, time.Time{})
	setRec("r0", &ledger.WorktreeRec{Node: "z", Path: wt, Branch: "atlas/r0/node/z"})
	setRec("r1", &ledger.WorktreeRec{Node: "b", Path: wt, Branch: branch})
	if asked, _ := checkout(branch); !asked {
		t.Fatal("a worktree recorded away from <root>/<run>/<node>: answered alone")
	}
	setRec("r0", nil)
	setRec("r1", &rec)
	if asked, _ := checkout("--detach"); asked {
		t.Fatal("the record back in place: asked git-atlas")
	}

	// A finished run's worktree is not listed.
	h.setStatus("r1", ledger.RunCompleted)
	if asked, _ := checkout("--detach"); !asked {
		t.Fatal("a finished run's worktree: answered alone")
	}
	if data, _ := os.ReadFile(hint); strings.Contains(string(data), "\nwt ") {
		t.Fatalf("hint %q lists a finished run's worktree", data)
	}
}
