package gitatlas_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/ledger"
)

// stressRepo makes a repository with one commit and returns it with the environment
// its processes run in (pinned identity, the freshly built git-atlas first on PATH).
func stressRepo(t *testing.T) (string, []string) {
	t.Helper()
	bin := atlasBinary(t)
	work := t.TempDir()
	home := filepath.Join(work, "home")
	if err := testenv.Home(home); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), gitEnv(home)...)
	env = append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "GIT_ATLAS_NO_GOGIT=")
	dir := filepath.Join(work, "repo")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	mustGit(t, dir, env, "", "init", "-q", "-b", "main")
	mustGit(t, dir, env, "", "commit", "-q", "--allow-empty", "-m", "first")
	return dir, env
}

// TestStressConcurrentEvents: 12 processes append 40 events each to one run at once
// (8 × 6 without the sweeps build tag: eight writers, four for each core of a small
// machine, still queue on the run's ref together, and every writer's later events
// race the others' after it has won once; more events each only repeat that),
// while a plain-git writer keeps extending the same ledger and moving a neighbouring
// ref. Every event lands exactly once, in one chain with consecutive seqs.
//
// The plain-git writer is what "a concurrent `git update-ref` is never lost" can mean:
// it builds a valid next ledger commit and moves the run's ref with `git update-ref
// <ref> <new> <old>`, the same compare-and-swap through git's <ref>.lock protocol that
// git-atlas uses, but without git-atlas's per-run queue (git.Mutex). An
// update-ref without <old> overwrites whatever it finds by definition; no protocol can
// keep what it throws away, so that case is not tested. The neighbour,
// refs/atlas/pins/r/external, is moved without CAS and repacked with `git pack-refs`
// while git-atlas writes: its last value must survive.
func TestStressConcurrentEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("stress test")
	}
	procs, each := testenv.Rounds(8, 12), testenv.Rounds(6, 40)
	dir, env := stressRepo(t)
	// The writers start git-atlas itself: `git atlas` would start a git for each event
	// only for it to start git-atlas.
	atlas := filepath.Join(atlasBinary(t), "git-atlas")
	mustGit(t, dir, env, "", "atlas", "start", "--id", "r", "--stages", "a")
	head := mustGit(t, dir, env, "", "rev-parse", "HEAD")
	empty := mustGit(t, dir, env, "", "commit-tree", "-m", "neighbour", "4b825dc642cb6eb9a060e54bf8d69288fbee4904")

	var wg sync.WaitGroup
	var failures atomic.Int32
	done := make(chan struct{})
	for p := range procs {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := range each {
				data := fmt.Sprintf(`{"m":"%d-%d"}`, p, i)
				c := exec.Command(atlas, "-C", dir, "event", "r", "note", "--data", data)
				c.Env = env
				if out, err := c.CombinedOutput(); err != nil {
					failures.Add(1)
					t.Errorf("event %s: %v %s", data, err, out)
					return
				}
			}
		}(p)
	}
	t.Setenv("HOME", filepath.Join(filepath.Dir(dir), "home"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	repo, err := git.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var external, lost, neighbour int
	var lastNeighbour string
	extDone := make(chan error, 1)
	go func() {
		defer close(extDone)
		after := 0  // rounds after the git-atlas writers finished
		tried := "" // the ledger's tip when the last round began, or its own commit
		for round := 1; ; round++ {
			select {
			case <-done:
				// The writers can win every race on a fast machine: the plain-git writer
				// goes on alone until one commit of its own is in (or 50 more tries), so
				// the chain always mixes both kinds of writer.
				if after++; external > 0 || after > 50 {
					return
				}
			default:
				// A round for each time a git-atlas writer moved the ledger, as soon as
				// it did (the ref is read in this process): the try then races the next
				// writer's. A try against a tip it already tried, or on top of its own
				// commit, only added git processes.
				if tip, err := repo.ReadRef(context.Background(), "refs/atlas/runs/r"); err == nil && tip == tried {
					round--
					time.Sleep(2 * time.Millisecond) // pacing, not synchronisation
					continue
				} else if err == nil {
					tried = tip
				}
			}
			// A CAS that loses is the point, not a failure: it must change nothing.
			switch commit, err := appendExternal(repo, dir, env, external+1); {
			case err == nil:
				external++
				tried = commit
			case strings.Contains(err.Error(), "cas lost"):
				lost++
			default:
				extDone <- err
				return
			}
			lastNeighbour = []string{head, empty}[round%2]
			if _, err := gitCmd(dir, env, "", "update-ref", "refs/atlas/pins/r/external", lastNeighbour); err != nil {
				extDone <- err
				return
			}
			neighbour++
			if round%10 == 0 {
				if _, err := gitCmd(dir, env, "", "pack-refs", "--all"); err != nil {
					extDone <- err
					return
				}
			}
			// Pacing, not synchronisation: leave the two cores mostly to the writers.
			time.Sleep(10 * time.Millisecond)
		}
	}()
	wg.Wait()
	close(done)
	if err := <-extDone; err != nil {
		t.Fatal(err)
	}
	if failures.Load() > 0 {
		t.FailNow()
	}
	t.Logf("%d git-atlas events, %d plain-git ledger commits (%d lost their CAS), %d neighbour moves", procs*each, external, lost, neighbour)
	if external == 0 {
		t.Fatal("the plain-git writer never got a commit in: nothing was tested against it")
	}

	out := mustGit(t, dir, env, "", "atlas", "log", "r", "--json")
	var log struct {
		Events []ledger.Event `json:"events"`
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	notes, exts := map[string]int{}, map[int]int{}
	for i, ev := range log.Events {
		if ev.Seq != i+1 {
			t.Fatalf("event %d has seq %d: the chain lost or reordered a write", i+1, ev.Seq)
		}
		var d struct {
			M string `json:"m"`
			K int    `json:"k"`
		}
		_ = json.Unmarshal(ev.Data, &d)
		switch ev.Type {
		case "note":
			notes[d.M]++
		case "external":
			exts[d.K]++
		}
	}
	for p := range procs {
		for i := range each {
			if m := fmt.Sprintf("%d-%d", p, i); notes[m] != 1 {
				t.Errorf("event %s is in the chain %d times", m, notes[m])
			}
		}
	}
	for k := 1; k <= external; k++ {
		if exts[k] != 1 {
			t.Errorf("plain-git commit %d is in the chain %d times", k, exts[k])
		}
	}
	if want := 1 + procs*each + external; len(log.Events) != want || len(notes) != procs*each {
		t.Errorf("%d events (%d distinct notes), want %d", len(log.Events), len(notes), want)
	}
	if got := mustGit(t, dir, env, "", "rev-parse", "refs/atlas/pins/r/external"); got != lastNeighbour {
		t.Errorf("neighbour ref at %s, want its last value %s", got, lastNeighbour)
	}
	mustGit(t, dir, env, "", "fsck", "--strict", "--no-dangling")
}

// appendExternal extends run r's ledger the way another tool could: state.json with
// the next seq, event.json of type "external", the same run.json blob, and a plain
// `git update-ref <ref> <new> <old>` from the tip it read. The objects are written
// in-process (repo) only to keep the read-to-CAS window short: with five plumbing
// forks the 16 queued writers left it a commit in a thousand tries. It returns the
// commit it wrote.
func appendExternal(repo *git.Repository, dir string, env []string, k int) (string, error) {
	ctx := context.Background()
	old, err := repo.ReadRef(ctx, "refs/atlas/runs/r")
	if err != nil {
		return "", err
	}
	oldID, err := git.ParseOID(old)
	if err != nil {
		return "", err
	}
	blobs, err := repo.BlobsAt(ctx, []git.BlobSpec{{Commit: oldID, Path: "state.json"}, {Commit: oldID, Path: "run.json"}})
	if err != nil {
		return "", err
	}
	if blobs[0].Err != nil || blobs[1].Err != nil {
		return "", fmt.Errorf("read %s: %w %w", old, blobs[0].Err, blobs[1].Err)
	}
	var state map[string]any
	if err := json.Unmarshal(blobs[0].Data, &state); err != nil {
		return "", err
	}
	seq := int(state["seq"].(float64)) + 1
	state["seq"] = seq
	state["updated_at"] = ledger.Stamp(time.Now())
	sj, _ := json.Marshal(state)
	ej, _ := json.Marshal(map[string]any{"schema": 1, "seq": seq, "type": "external", "time": state["updated_at"], "epoch": 0, "data": map[string]int{"k": k}})
	var ids []string
	for _, doc := range [][]byte{sj, ej} {
		id, err := repo.WriteBlob(ctx, append(doc, '\n'))
		if err != nil {
			return "", err
		}
		ids = append(ids, id.String())
	}
	tree, err := repo.WriteTree(ctx, []git.TreeEntry{{Name: "run.json", Blob: blobs[1].ID}, {Name: "state.json", Blob: ids[0]}, {Name: "event.json", Blob: ids[1]}})
	if err != nil {
		return "", err
	}
	commit, err := repo.WriteCommit(ctx, tree, []git.OID{oldID}, "external\n")
	if err != nil {
		return "", err
	}
	if _, err := gitCmd(dir, env, "", "update-ref", "refs/atlas/runs/r", commit.String(), old); err != nil {
		return "", fmt.Errorf("cas lost: %w", err)
	}
	return commit.String(), nil
}

// waitLines returns after n lines came from r, at its end, or after at most limit (a
// writer stuck behind a stale lock prints nothing; the kill must come anyway).
func waitLines(r io.Reader, n int, limit time.Duration) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		lines := bufio.NewReader(r)
		for ; n > 0; n-- {
			if _, err := lines.ReadString('\n'); err != nil {
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(limit):
	}
}

// TestStressKilledWriter SIGKILLs a writer (and the git it may be running) at 60
// random points (20 without the sweeps build tag, and on until five runs exist, up
// to 60). A kill lands after a random number of the writer's completed writes (0 to
// 3) and a random delay, so the writer makes progress however slowly this machine
// writes. After every kill each run is readable and list reads them all; at the end
// no ref names a missing object and every chain is intact.
//
// A git killed inside update-ref can leave its <ref>.lock behind, exactly as after
// any crashed git; git-atlas then refuses to write that run (git's "File exists"
// error), reads stay fine. The test checks the reads with the lock present, then
// removes it as a person would, so the next writer can go on.
func TestStressKilledWriter(t *testing.T) {
	t.Parallel() // its own repository and processes: runs beside the transcripts
	if testing.Short() {
		t.Skip("stress test")
	}
	const maxKills = 60
	kills := testenv.Rounds(20, maxKills)
	dir, env := stressRepo(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	writer := filepath.Join(t.TempDir(), "killedwriter")
	if err := testenv.BuildProgram("internal/killedwriter", writer); err != nil {
		t.Fatal(err)
	}
	common := filepath.Join(dir, ".git")
	staleLocks := 0
	killedAt := map[string]bool{} // runs whose ledger ref a kill left locked
	created := 0
	k := 0
	// Kills go on past the planned number, up to twice the most, while fewer than five
	// runs exist: under load the writers may complete few writes before their kills.
	for ; k < kills || (created < 5 && k < 2*maxKills); k++ {
		w := exec.Command(writer, dir)
		w.Env = slices.Clip(env)
		if k%2 == 1 {
			w.Env = append(w.Env, "GIT_ATLAS_NO_GOGIT=1") // both write paths
		}
		w.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var stderr bytes.Buffer
		w.Stderr = &stderr
		stdout, err := w.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		// One kill in eight lands during start-up; the others are timed from the
		// writer's "ready" and then from its completed writes (it prints a line after
		// each), so neither a slow start (a loaded machine) nor slow fsyncs eat the
		// whole delay. Not a synchronisation: the lines and the delay only pick where
		// the kill lands.
		if k%8 != 0 {
			waitLines(stdout, 1+rng.IntN(4), 5*time.Second)
		}
		time.Sleep(time.Duration(rng.IntN(120)) * time.Millisecond)
		_ = syscall.Kill(-w.Process.Pid, syscall.SIGKILL)
		err = w.Wait()
		if ws, ok := w.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("kill %d: the writer was not killed but ended: %v\n%s", k, err, stderr.String())
		}
		locks := findLocks(t, common)
		created = len(checkAllReadable(t, dir, env, k))
		for _, l := range locks {
			staleLocks++
			if rel, err := filepath.Rel(common, l); err == nil {
				if id, ok := strings.CutPrefix(filepath.ToSlash(rel), "refs/atlas/runs/"); ok {
					killedAt[strings.TrimSuffix(id, ".lock")] = true
				}
			}
			if err := os.Remove(l); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
	}
	t.Logf("%d kills, %d stale ref locks left by killed git processes", k, staleLocks)
	out := mustGit(t, dir, env, "", "fsck", "--connectivity-only")
	if strings.Contains(out, "missing") || strings.Contains(out, "broken") {
		t.Fatalf("fsck: %s", out)
	}
	runs := checkAllReadable(t, dir, env, k)
	if len(runs) < 5 {
		t.Fatalf("only %d runs were created: the kills came too early to test anything", len(runs))
	}
	// Every chain is readable to its root, seqs consecutive; every run has its pin, and
	// every pin its run unless a kill left that run's ref locked: a start's transaction
	// renames its locks over the refs in name order, as git's files backend does, so a
	// kill between the renames leaves the pin (refs/atlas/pins/) without the run
	// (refs/atlas/runs/), never the reverse.
	ctx := context.Background()
	repo, err := git.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	s := gitstate.New(repo)
	events := 0
	for _, id := range runs {
		evs, err := s.Log(ctx, id)
		if err != nil {
			t.Fatalf("log %s: %v", id, err)
		}
		for i, ev := range evs {
			if ev.Seq != i+1 {
				t.Fatalf("run %s event %d has seq %d", id, i+1, ev.Seq)
			}
		}
		events += len(evs)
	}
	pins, err := repo.ListRefs(ctx, "refs/atlas/pins")
	if err != nil {
		t.Fatal(err)
	}
	pinned, exists := map[string]bool{}, map[string]bool{}
	for _, p := range pins {
		id, _, _ := strings.Cut(strings.TrimPrefix(p.Name, "refs/atlas/pins/"), "/")
		pinned[id] = true
	}
	for _, id := range runs {
		exists[id] = true
		if !pinned[id] {
			t.Fatalf("run %s has no pin: a start was half-written", id)
		}
	}
	for id := range pinned {
		if !exists[id] && !killedAt[id] {
			t.Fatalf("pin of %s without its run, and no kill left the run's ref locked", id)
		}
	}
	t.Logf("%d runs, %d events survived", len(runs), events)
}

func findLocks(t *testing.T, common string) []string {
	t.Helper()
	var locks []string
	err := filepath.WalkDir(common, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "objects" {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".lock") {
			locks = append(locks, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return locks
}

// atlasCmd runs git-atlas itself in dir (`git atlas` would start a git only for it to
// start git-atlas) and returns its standard output; its standard error goes into the
// error.
func atlasCmd(dir string, env []string, args ...string) ([]byte, error) {
	bin, err := testenv.Build()
	if err != nil {
		return nil, err
	}
	c := exec.Command(bin, args...)
	c.Dir, c.Env = dir, env
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("git-atlas %s in %s: %w: %s", strings.Join(args, " "), dir, err, stderr.Bytes())
	}
	return stdout.Bytes(), nil
}

// mustAtlas is atlasCmd that fails t on error; it returns the output trimmed.
func mustAtlas(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	out, err := atlasCmd(dir, env, args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// checkAllReadable runs `git-atlas list --all --json` and fails on any unreadable run.
func checkAllReadable(t *testing.T, dir string, env []string, k int) []string {
	t.Helper()
	out, err := atlasCmd(dir, env, "list", "--all", "--json")
	if err != nil {
		t.Fatalf("after kill %d: list: %v", k, err)
	}
	var l struct {
		Runs []struct {
			RunID      string `json:"run_id"`
			Unreadable bool   `json:"unreadable"`
			Error      string `json:"error"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(out, &l); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range l.Runs {
		if r.Unreadable {
			t.Fatalf("after kill %d: run %s is unreadable: %s", k, r.RunID, r.Error)
		}
		ids = append(ids, r.RunID)
	}
	return ids
}

// TestStressCachesDeleted: the summary cache and the post-checkout hint are derived
// data. Writers change runs (new interrupted and live runs, finishes, stops) while
// readers list and detect and the hook runs on checkouts, each reader deleting one
// cache or the other at random first; then, with the writers stopped, the answers
// (list, detect, brief, the hook's line) read with the caches as they were left are
// the answers read with no cache at all.
func TestStressCachesDeleted(t *testing.T) {
	if testing.Short() {
		t.Skip("stress test")
	}
	t.Parallel() // its own repository and processes; no package globals, no Setenv
	rounds, writers, each := testenv.Rounds(2, 4), testenv.Rounds(3, 4), testenv.Rounds(4, 8)
	dir, env := stressRepo(t)
	mustGit(t, dir, env, "", "branch", "other")
	mustGit(t, dir, env, "", "atlas", "hooks", "install")
	common := mustGit(t, dir, env, "", "rev-parse", "--path-format=absolute", "--git-common-dir")
	caches := []string{filepath.Join(common, "atlas", "cache", "summaries"), filepath.Join(common, "atlas", "hint")}
	drop := func(r *rand.Rand) {
		if k := r.IntN(4); k < len(caches) {
			_ = os.Remove(caches[k])
		}
	}
	// checkout switches branches and returns the hook's line (one at a time: git
	// locks the index).
	var checkoutMu sync.Mutex
	checkout := func() (string, error) {
		checkoutMu.Lock()
		defer checkoutMu.Unlock()
		out, stderr, err := gitRun(dir, env, "", "checkout", "-q", "-")
		return out + stderr, err
	}
	mustGit(t, dir, env, "", "checkout", "-q", "other")
	answers := func() string {
		hook, err := checkout()
		if err != nil {
			t.Fatalf("checkout: %v %s", err, hook)
		}
		return "list:\n" + mustAtlas(t, dir, env, "list", "--all", "--json") +
			"\ndetect:\n" + mustAtlas(t, dir, env, "resume", "--detect", "--json") +
			"\nbrief:\n" + mustAtlas(t, dir, env, "resume", "--brief") +
			"\nhook:\n" + hook
	}
	for round := range rounds {
		var wg sync.WaitGroup
		done := make(chan struct{})
		for w := range writers {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(round), uint64(w)))
				for i := range each {
					id := fmt.Sprintf("w%d-%d-%d", w, round, i)
					args := []string{"start", "--id", id, "--stages", "a"}
					live := r.IntN(3) == 0
					if live {
						args = append(args, "--holder", "h"+id, "--ttl", "1h")
					}
					if _, err := atlasCmd(dir, env, args...); err != nil {
						t.Error(err)
						return
					}
					if k := r.IntN(3); k < 2 {
						status := []string{"completed", "stopped"}[k]
						fin := []string{"finish", id, "--status", status}
						if live { // only its driver writes to a driven run
							fin = append(fin, "--holder", "h"+id)
						}
						if _, err := atlasCmd(dir, env, fin...); err != nil {
							t.Error(err)
							return
						}
					}
				}
			}(w)
		}
		readers := sync.WaitGroup{}
		for rd := range 2 {
			readers.Add(1)
			go func(rd int) {
				defer readers.Done()
				r := rand.New(rand.NewPCG(uint64(round), uint64(100+rd)))
				for {
					select {
					case <-done:
						return
					default:
					}
					drop(r)
					var err error
					switch r.IntN(3) {
					case 0:
						_, err = atlasCmd(dir, env, "list", "--json")
					case 1:
						_, err = atlasCmd(dir, env, "resume", "--brief")
					default:
						var out string
						if out, err = checkout(); err != nil {
							err = fmt.Errorf("checkout: %w %s", err, out)
						}
					}
					if err != nil {
						t.Error(err)
						return
					}
				}
			}(rd)
		}
		wg.Wait()
		close(done)
		readers.Wait()
		if t.Failed() {
			return
		}
		left := answers() // the checkout in it leaves the branch the other way round
		mustGit(t, dir, env, "", "checkout", "-q", "-")
		for _, c := range caches {
			_ = os.Remove(c)
		}
		if none := answers(); timeless(none) != timeless(left) {
			t.Fatalf("round %d: the caches as left gave\n%s\nwith no cache:\n%s", round, left, none)
		}
		mustGit(t, dir, env, "", "checkout", "-q", "-")
	}
}

// timeless blanks what changes with the clock alone between two reads: ages.
func timeless(s string) string {
	return ageRE.ReplaceAllString(s, "AGE")
}

var ageRE = regexp.MustCompile(`"age_seconds": [0-9]+|[0-9]+[smhd] ago|"age": "[^"]*"`)
