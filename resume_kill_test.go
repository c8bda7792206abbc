package gitatlas_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/testenv"
)

// TestResumeKilledAnywhere kills `git atlas resume` at random moments (SIGKILL, 20
// times with the sweeps build tag; 3 without), runs it again to the end, and checks that every time the run
// ends in the same state as an uninterrupted resume (timestamps aside), that no dirty
// work was lost, and that no dirty state was snapshotted twice. The k-th of n kills
// falls at a random moment in the k-th n-th of an uninterrupted resume's span, so
// that the short version's 3 kills land early (the snapshots), midway and late (the
// worktrees made again, the ledger) as the full pass's 20 land everywhere.
func TestResumeKilledAnywhere(t *testing.T) {
	t.Parallel() // its own repository and processes: runs beside the transcripts
	kills := testenv.Rounds(3, 20)
	a := newAtlasRepo(t)
	work := filepath.Dir(a.repo)
	setupInterruptedGraph(t, a)
	template := filepath.Join(t.TempDir(), "template.tar")
	tarDir(t, work, "repo", template)

	// The reference: one resume, never interrupted.
	start := time.Now()
	a.must(t, "resume", "k")
	full := time.Since(start)
	want := normalState(t, a)
	checkWorkKept(t, a)
	if len(want.Snapshots) != 2 {
		t.Fatalf("reference resume made %d snapshots, want 2 (dirty a, moved b): %+v", len(want.Snapshots), want.Snapshots)
	}

	rng := rand.New(rand.NewPCG(1, uint64(kills)))
	i := 0
	for ; i < kills; i++ {
		untarDir(t, work, "repo", template)
		delay := time.Duration((int64(i)*int64(full) + rng.Int64N(int64(full)+1)) / int64(kills))
		cmd := exec.Command(a.bin, "-C", a.repo, "--json", "resume", "k")
		cmd.Env = a.env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		timer := time.AfterFunc(delay, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
		_ = cmd.Wait()
		timer.Stop()

		// Whatever the kill left, the ledger reads, and a second resume finishes.
		if out, code, stderr := a.run("resume", "k"); code != 0 {
			t.Fatalf("kill %d after %v: resume again: exit %d: %s\n%s", i, delay, code, stderr, out)
		}
		got := normalState(t, a)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("kill %d after %v: end state differs\n got: %+v\nwant: %+v", i, delay, got, want)
		}
		checkWorkKept(t, a)
	}
}

// setupInterruptedGraph leaves graph run k interrupted: job a RUNNING with a dirty
// worktree, job b RUNNING with a commit in its worktree, job c's worktree clean, and the
// outer stage dispatched with a safe verify.
func setupInterruptedGraph(t *testing.T, a atlasCLI) {
	t.Helper()
	a.must(t, "start", "--id", "k", "--graph", "--stages", "check", "--verify", "true", "--verify-safe")
	for _, j := range []string{"a", "b", "c"} {
		a.must(t, "job", "add", "k", j, "--scope", j+"/**")
	}
	a.must(t, "transition", "k", "check", "dispatched")
	leases := map[string]string{}
	for _, j := range []string{"a", "b"} {
		var g struct {
			Lease string `json:"lease"`
		}
		// dead workers: leases already over
		if err := json.Unmarshal(a.must(t, "job", "claim", "k", "--job", j, "--holder", "w-"+j, "--ttl", "1ms"), &g); err != nil || g.Lease == "" {
			t.Fatalf("claim %s: %v", j, err)
		}
		leases[j] = g.Lease
	}
	paths := map[string]string{}
	for _, j := range []string{"a", "b", "c"} {
		var rec struct {
			Path string `json:"path"`
		}
		args := []string{"worktree", "add", "k", j}
		if leases[j] != "" {
			args = append(args, "--lease", leases[j])
		}
		if err := json.Unmarshal(a.must(t, args...), &rec); err != nil || rec.Path == "" {
			t.Fatalf("worktree add %s: %v", j, err)
		}
		paths[j] = rec.Path
	}
	// a: staged, unstaged and untracked work.
	writeFile(t, filepath.Join(paths["a"], "a/new.txt"), "untracked work\n")
	writeFile(t, filepath.Join(paths["a"], "README"), "edited by agent a\n")
	writeFile(t, filepath.Join(paths["a"], "a/staged.txt"), "staged work\n")
	gitIn(t, a, paths["a"], "add", "a/staged.txt")
	// b: a commit the ledger does not know.
	writeFile(t, filepath.Join(paths["b"], "b/done.txt"), "committed work\n")
	gitIn(t, a, paths["b"], "add", "-A")
	gitIn(t, a, paths["b"], "commit", "-q", "-m", "b work")
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func gitIn(t *testing.T, a atlasCLI, dir string, args ...string) string {
	t.Helper()
	out, err := gitCmd(dir, a.env, "", args...)
	if err != nil {
		t.Fatalf("in %s: %v", dir, err)
	}
	return string(out)
}

func tarDir(t *testing.T, parent, name, to string) {
	t.Helper()
	if out, err := exec.Command("tar", "-C", parent, "-cf", to, name).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
}

func untarDir(t *testing.T, parent, name, from string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(parent, name)); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tar", "-C", parent, "-xf", from).CombinedOutput(); err != nil {
		t.Fatalf("untar: %v\n%s", err, out)
	}
}

// endState is the run's state with timestamps and sequence numbers left out.
type endState struct {
	Status    string
	Epoch     int
	GasSpent  int
	Jobs      []string
	Stages    []string
	Worktrees []string
	Snapshots []string
	Resuming  string
}

func normalState(t *testing.T, a atlasCLI) endState {
	t.Helper()
	var show struct {
		State struct {
			Status   string `json:"status"`
			Epoch    int    `json:"epoch"`
			GasSpent int    `json:"gas_spent"`
			Jobs     []struct {
				ID, State, Lease string
				Attempts         int
			} `json:"jobs"`
			Stages []struct {
				Name, Status string
				Attempts     []json.RawMessage
			} `json:"stages"`
			Worktrees []struct {
				Node, Branch, Baseline, Head string
				Untrusted                    bool
			} `json:"worktrees"`
			Snapshots []struct {
				ID, Node, Ref, Commit, Reason string
			} `json:"snapshots"`
			Resuming *struct {
				Phase string `json:"phase"`
			} `json:"resuming"`
		} `json:"state"`
	}
	if err := json.Unmarshal(a.must(t, "show", "k"), &show); err != nil {
		t.Fatal(err)
	}
	s := show.State
	e := endState{Status: s.Status, Epoch: s.Epoch, GasSpent: s.GasSpent}
	for _, j := range s.Jobs {
		e.Jobs = append(e.Jobs, fmt.Sprintf("%s:%s:%d:%s", j.ID, j.State, j.Attempts, j.Lease))
	}
	for _, st := range s.Stages {
		e.Stages = append(e.Stages, fmt.Sprintf("%s:%s:%d", st.Name, st.Status, len(st.Attempts)))
	}
	for _, w := range s.Worktrees {
		e.Worktrees = append(e.Worktrees, fmt.Sprintf("%s:%s:%s:%s:%v", w.Node, w.Branch, w.Baseline, w.Head, w.Untrusted))
	}
	// A kill while a worktree was being checked out or reset in place leaves it
	// half-made; the next resume snapshots it (an agent may have used it) before
	// making it again. When the node has another snapshot, that one holds what the
	// uninterrupted resume keeps and the half-made one is extra (a part-made tree);
	// when it has none, the kill came before the node's own snapshot, and the
	// half-made one is that snapshot (the same content, the same id).
	others := map[string]int{}
	for _, sn := range s.Snapshots {
		if !strings.Contains(sn.Reason, "checkout never finished") {
			others[sn.Node]++
		}
	}
	for _, sn := range s.Snapshots {
		if strings.Contains(sn.Reason, "checkout never finished") && others[sn.Node] > 0 {
			continue
		}
		e.Snapshots = append(e.Snapshots, sn.Node+":"+sn.ID)
	}
	if s.Resuming != nil {
		e.Resuming = s.Resuming.Phase
	}
	sort.Strings(e.Worktrees)
	sort.Strings(e.Snapshots)
	return e
}

// checkWorkKept finds every byte the agents wrote in a recovery snapshot.
func checkWorkKept(t *testing.T, a atlasCLI) {
	t.Helper()
	refs := strings.Fields(gitIn(t, a, a.repo, "for-each-ref", "--format=%(refname)", "refs/atlas/recovery/k"))
	want := map[string]string{"a/new.txt": "untracked work\n", "README": "edited by agent a\n", "a/staged.txt": "staged work\n", "b/done.txt": "committed work\n"}
	for path, content := range want {
		found := false
		for _, ref := range refs {
			if out, err := gitCmd(a.repo, a.env, "", "cat-file", "blob", ref+":"+path); err == nil && string(out) == content {
				found = true
			}
		}
		if !found {
			t.Fatalf("%s (%q) is in no recovery snapshot (%v)", path, content, refs)
		}
	}
}
