package gitatlas_test

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/testenv"
)

// TestConcurrentKillSweep runs `resume`, `worktree add` and `gc --apply` at the same
// time on an interrupted graph run and a finished run, SIGKILLs some of them (their
// whole process group, git included) at random moments, lets "agents" write into
// whatever worktree directory is there afterwards (a half-made one included), runs a
// second such wave, then one plain resume and gc. After every round, every byte any
// agent wrote is in a worktree directory (or one set aside whole) or in a recovery
// snapshot, and no command failed with anything but a documented conflict or refusal.
// 24 rounds with the sweeps build tag, each killing about half of eight commands in two
// waves, chosen at random. The short version runs 2 rounds whose kills are chosen, not
// drawn: in each wave every other command is killed, the others in the other wave and
// in the other round, so each command (both resumes, gc, worktree add) is killed in
// each wave once and runs to the end beside the killed ones once, at random moments;
// the full pass keeps the breadth. The full pass spreads its rounds over parallel lanes
// (one repository each: recorded worktree paths are absolute, so a lane cannot be a
// copy), never more lanes than rounds; the short version's two rounds share one lane,
// so that the runs, worktrees and the span the kills aim at are set up once (a lane's
// rounds each start from the same tar of its repository).
func TestConcurrentKillSweep(t *testing.T) {
	t.Parallel() // its own repository and processes; no package globals, no Setenv
	const short = 2
	rounds := testenv.Rounds(short, 24)
	lanes := min(max(runtime.NumCPU(), 2), 8, rounds)
	if !testenv.Long() {
		lanes = 1
	}
	first := newAtlasRepo(t)
	for lane := range lanes {
		n := rounds / lanes
		if lane < rounds%lanes {
			n++
		}
		t.Run(fmt.Sprintf("lane%d", lane), func(t *testing.T) {
			t.Parallel()
			a := first
			if lane > 0 {
				a.repo = filepath.Join(t.TempDir(), "repo")
				if err := makeFixture(a.repo, a.env); err != nil {
					t.Fatal(err)
				}
			}
			sweepLane(t, a, n, lane)
		})
	}
}

// sweepLane runs rounds rounds in a's repository; lane decides which commands the
// short version kills in its rounds.
func sweepLane(t *testing.T, a atlasCLI, rounds, lane int) {
	work := filepath.Dir(a.repo)
	setupInterruptedGraph(t, a)
	leases := map[string]string{}
	var show struct {
		State struct {
			Jobs []struct{ ID, Lease string } `json:"jobs"`
		} `json:"state"`
	}
	if err := json.Unmarshal(a.must(t, "show", "k"), &show); err != nil {
		t.Fatal(err)
	}
	for _, j := range show.State.Jobs {
		leases[j.ID] = j.Lease
	}
	// A finished run with a dirty worktree: what gc --apply snapshots and removes.
	a.must(t, "start", "--id", "f", "--stages", "code")
	var rec struct {
		Path string `json:"path"`
	}
	if err := json.Unmarshal(a.must(t, "worktree", "add", "f", "code"), &rec); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(rec.Path, "f-work.txt"), "finished run's leftover\n")
	a.must(t, "finish", "f", "--status", "completed")

	template := filepath.Join(t.TempDir(), "template.tar")
	tarDir(t, work, "repo", template)
	root := filepath.Join(a.repo, ".git", "atlas", "worktrees")
	base := map[string]string{ // what setupInterruptedGraph's agents and run f left
		"a/new.txt": "untracked work\n", "README": "edited by agent a\n", "a/staged.txt": "staged work\n",
		"b/done.txt": "committed work\n", "f-work.txt": "finished run's leftover\n",
	}

	// One plain resume gives the span to aim the kills at.
	start := time.Now()
	a.must(t, "resume", "k")
	span := time.Since(start)

	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(7, seed))
	sweepStart := time.Now()
	round := 0
	for ; round < rounds; round++ {
		untarDir(t, work, "repo", template)
		keep := map[string]string{}
		maps.Copy(keep, base)
		var odd []string
		wave := func(w int) {
			cmds := [][]string{{"resume", "k"}, {"resume", "k"}, {"gc", "--before", "0s", "--apply"}}
			for _, j := range []string{"a", "b", "c"}[rng.IntN(3):][:1] {
				args := []string{"worktree", "add", "k", j}
				if leases[j] != "" && rng.IntN(4) != 0 { // mostly the holder; sometimes a lease-less caller
					args = append(args, "--lease", leases[j])
				}
				cmds = append(cmds, args)
			}
			var wg sync.WaitGroup
			var mu sync.Mutex
			for i, args := range cmds {
				kill := rng.IntN(2) == 0
				if !testenv.Long() {
					kill = (i+w+round+lane)%2 == 0
				}
				delay := time.Duration(rng.Int64N(int64(span) + 1))
				wg.Go(func() {
					cmd := exec.Command(a.bin, append([]string{"-C", a.repo, "--json"}, args...)...)
					cmd.Env = a.env
					cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
					var stderr bytes.Buffer
					cmd.Stderr = &stderr
					if err := cmd.Start(); err != nil {
						t.Error(err)
						return
					}
					var timer *time.Timer
					if kill {
						timer = time.AfterFunc(delay, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
					}
					err := cmd.Wait()
					if timer != nil {
						timer.Stop()
					}
					var ee *exec.ExitError
					if err == nil || !errors.As(err, &ee) || ee.ExitCode() == -1 {
						return // success, or killed
					}
					// 3: a concurrent process won; 5: refused (a finished run, a live run).
					if code := ee.ExitCode(); code != 3 && code != 5 {
						mu.Lock()
						odd = append(odd, fmt.Sprintf("wave %d: git atlas %s: exit %d: %s", w, strings.Join(args, " "), code, strings.TrimSpace(stderr.String())))
						mu.Unlock()
					}
				})
			}
			wg.Wait()
		}
		// An agent writes into every worktree directory that is there, finished or not.
		agents := func(w int) {
			dirs, _ := filepath.Glob(filepath.Join(root, "*", "*"))
			for _, d := range dirs {
				if st, err := os.Stat(d); err != nil || !st.IsDir() || strings.Contains(filepath.Base(d), ".atlas-") {
					continue
				}
				name := fmt.Sprintf("agent-r%d-w%d-%s-%s.txt", round, w, filepath.Base(filepath.Dir(d)), filepath.Base(d))
				content := fmt.Sprintf("round %d wave %d wrote this in %s\n", round, w, d)
				writeFile(t, filepath.Join(d, name), content)
				keep[name] = content
			}
		}

		wave(1)
		agents(1)
		wave(2)
		agents(2)
		// Plain runs to the end: whatever the waves left, these finish.
		if out, code, stderr := a.run("resume", "k"); code != 0 {
			t.Fatalf("round %d: resume after the waves: exit %d: %s\n%s", round, code, stderr, out)
		}
		if _, code, stderr := a.run("gc", "--before", "0s", "--apply"); code != 0 {
			t.Fatalf("round %d: gc after the waves: exit %d: %s", round, code, stderr)
		}
		for _, o := range odd {
			t.Errorf("round %d: %s", round, o)
		}
		checkKept(t, a, root, keep, round)
		t.Logf("round %d: %d agent files checked (%v so far)", round, len(keep), time.Since(sweepStart).Round(time.Second))
		if t.Failed() {
			return
		}
	}
}

// checkKept finds every (path, content) an agent wrote either as a file under the
// worktree root (a live worktree, or one set aside whole) or in a recovery snapshot.
func checkKept(t *testing.T, a atlasCLI, root string, keep map[string]string, round int) {
	t.Helper()
	onDisk := map[string]bool{}
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil {
			onDisk[filepath.Base(p)+"\x00"+string(b)] = true
		}
		return nil
	})
	// Every recovery snapshot's files, as path -> blob ids: one ls-tree per snapshot.
	refs := strings.Fields(gitIn(t, a, a.repo, "for-each-ref", "--format=%(refname)", "refs/atlas/recovery/"))
	inSnap := map[string]bool{}
	for _, ref := range refs {
		for line := range strings.SplitSeq(gitIn(t, a, a.repo, "ls-tree", "-r", "-z", ref), "\x00") {
			meta, path, ok := strings.Cut(line, "\t")
			if f := strings.Fields(meta); ok && len(f) == 3 && f[1] == "blob" {
				inSnap[path+"\x00"+f[2]] = true
			}
		}
	}
	for path, content := range keep {
		if onDisk[filepath.Base(path)+"\x00"+content] {
			continue
		}
		h := sha1.New()
		fmt.Fprintf(h, "blob %d\x00%s", len(content), content)
		found := inSnap[path+"\x00"+hex.EncodeToString(h.Sum(nil))]
		if !found {
			t.Errorf("round %d: %s (%q) is in no worktree and no recovery snapshot (%d snapshots)", round, path, content, len(refs))
		}
	}
}

// TestConcurrentResumes starts four resumes of one interrupted run at once, a few
// times: each exits 0 (the winner, or one that came after it) or 3 with a plain
// message (docs/contract.md §6 "Concurrent resumes"), never leaves a "being made" marker behind,
// and every byte the agents wrote is in a recovery snapshot.
func TestConcurrentResumes(t *testing.T) {
	t.Parallel() // its own repository and processes; no package globals, no Setenv
	a := newAtlasRepo(t)
	work := filepath.Dir(a.repo)
	setupInterruptedGraph(t, a)
	template := filepath.Join(t.TempDir(), "template.tar")
	tarDir(t, work, "repo", template)
	for try := range 3 {
		untarDir(t, work, "repo", template)
		type result struct {
			code   int
			stderr string
		}
		results := make([]result, 4)
		var wg sync.WaitGroup
		for i := range results {
			wg.Go(func() {
				_, code, stderr := a.run("resume", "k")
				results[i] = result{code, stderr}
			})
		}
		wg.Wait()
		winners := 0
		for _, r := range results {
			switch {
			case r.code == 0:
				winners++
			case r.code == 3 && strings.Contains(r.stderr, "being resumed by another process") && !strings.Contains(r.stderr, "git worktree"):
			default:
				t.Errorf("try %d: a concurrent resume: exit %d: %s", try, r.code, r.stderr)
			}
		}
		if winners == 0 {
			t.Errorf("try %d: no resume won", try)
		}
		markers, _ := filepath.Glob(filepath.Join(a.repo, ".git", "atlas", "worktrees", "k", "*.atlas-materializing*"))
		if len(markers) > 0 {
			t.Errorf("try %d: markers left behind: %v", try, markers)
		}
		checkWorkKept(t, a)
		if t.Failed() {
			return
		}
	}
}
