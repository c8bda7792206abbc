package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/git"
)

// TestProcessBudget holds each command that runs most to the number of git processes
// it may start (issue 34: start-up of a process is what costs on slow machines). It
// counts, never times: git.Started before and after the command, run in process on a
// small repository with no atlas.remote. It runs alone (no t.Parallel), so no other
// test's git processes are counted.
//
// It runs twice: as most repositories are read (go-git's refs and loose objects in
// process), and with GIT_ATLAS_NO_GOGIT=1, the path of every repository go-git cannot
// open (any extension: sha256, worktreeConfig, partialClone, reftable), where refs and
// objects go through git. That path has its own ceilings, above the budgets
// (objects are written by hash-object, mktree and commit-tree, refs read by
// for-each-ref): they hold its count where it is, so that it only falls.
func TestProcessBudget(t *testing.T) {
	t.Run("go-git", func(t *testing.T) { processBudget(t, false) })
	t.Run("no-go-git", func(t *testing.T) {
		t.Setenv("GIT_ATLAS_NO_GOGIT", "1") // the parent runs alone: no parallel test sees it
		processBudget(t, true)
	})
}

func processBudget(t *testing.T, noGoGit bool) {
	repo := newRepo(t)
	// run runs a command and checks its count against budget[0], or budget[1] (when
	// given) on the path without go-git.
	run := func(budgets []int64, args ...string) string {
		t.Helper()
		budget := budgets[0]
		if noGoGit && len(budgets) > 1 {
			budget = budgets[1]
		}
		var out, errb bytes.Buffer
		before := git.Started()
		code := Main(append([]string{"-C", repo}, args...), strings.NewReader(""), &out, &errb)
		n := git.Started() - before
		if code != 0 {
			t.Fatalf("git atlas %v: exit %d\n%s", args, code, errb.String())
		}
		t.Logf("git atlas %s: %d git processes", strings.Join(args, " "), n)
		if n > budget {
			t.Errorf("git atlas %s started %d git processes; its budget is %d", strings.Join(args, " "), n, budget)
		}
		return out.String()
	}
	dirty := func(path string) {
		t.Helper()
		for _, f := range []string{"n1", "n2", "n3"} {
			if err := os.WriteFile(filepath.Join(path, f), []byte(f+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}

	b := func(budgets ...int64) []int64 { return budgets }
	free := b(1 << 30) // not in the table
	run(b(0), "--version")
	run(b(0), "resume", "--brief")
	run(b(1, 8), "start", "--id", "r", "--stages", "a,b", "--holder", "h") // the first command: git lists the configuration
	// Configuration comes from the record of the last command's listing (internal/git
	// configstore.go), no process, once the files it watches are older than the record
	// by their file system's granularity: where times are whole seconds, the commands
	// right after the repository was made still ask git (c: one more process each).
	c := int64(0)
	if fi, err := os.Stat(filepath.Join(repo, ".git", "config")); err != nil || fi.ModTime().Nanosecond() == 0 {
		c = 1
	}
	run(b(c, 2+c), "show", "r")
	run(b(c, 2+c), "list")
	run(b(c, 1+c), "resume", "--detect")
	run(b(c, 9+c), "transition", "r", "a", "dispatched", "--holder", "h")
	run(b(c, 7+c), "event", "r", "note", "--holder", "h")

	run(b(c, 8+c), "start", "--id", "g", "--graph", "--holder", "h")
	run(free, "job", "add", "g", "j", "--holder", "h")
	var claim struct{ Lease string }
	if err := json.Unmarshal([]byte(run(b(c, 7+c), "job", "claim", "g", "--holder", "w", "--json")), &claim); err != nil || claim.Lease == "" {
		t.Fatalf("job claim printed no lease: %v", err)
	}
	run(b(c, 8+c), "job", "done", "g", "j", "--lease", claim.Lease, "--status", "ok", "--holder", "w")

	// A worktree add: the checkout; the ledger's transaction with the node's new branch,
	// the registration and the attach are in process.
	dirty(strings.TrimSpace(run(b(1+c, 18+c), "worktree", "add", "r", "a", "--holder", "h")))
	run(b(3+c, 38+c), "worktree", "remove", "r", "a", "--holder", "h")

	dirty(strings.TrimSpace(run(b(1+c, 18+c), "worktree", "add", "r", "a", "--holder", "h")))
	run(b(5+c, 59+c), "resume", "r", "--no-verify", "--holder", "h2", "--take-over")

	// A listing: one status for the dirty worktree; its commit ahead of the baseline is
	// counted in process (internal/git CountCommits).
	wt := strings.TrimSpace(run(free, "path", "r", "a"))
	gitOut(t, wt, "commit", "-q", "--allow-empty", "-m", "the node's work")
	dirty(wt)
	run(b(1+c, 5+c), "worktree", "list")

	// The guard of an agent's edit (a PreToolUse hook: it runs on every edit) of the
	// checkout while the session drives a run with a worktree: the repositories that
	// hold the path are found in process, whatever the session's cwd.
	run(free, "start", "--id", "gd", "--stages", "code", "--holder", "h", "--session", "s1")
	run(free, "transition", "gd", "code", "dispatched", "--holder", "h", "--session", "s1")
	run(free, "worktree", "add", "gd", "code", "--holder", "h", "--session", "s1")
	for _, cwd := range []string{repo, filepath.Dir(repo)} {
		event := fmt.Sprintf(`{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":%q,"content":"x"},"cwd":%q}`,
			filepath.Join(repo, "new.txt"), cwd)
		var out bytes.Buffer
		before := git.Started()
		Main([]string{"agent", "guard", "claude"}, strings.NewReader(event), &out, io.Discard)
		n, budget := git.Started()-before, c
		if noGoGit {
			budget = 4 + c
		}
		t.Logf("git atlas agent guard claude (cwd %s): %d git processes", cwd, n)
		if n > budget || !strings.Contains(out.String(), `"permissionDecision":"deny"`) {
			t.Errorf("the guard from %s: %d git processes (budget %d), answer %q", cwd, n, budget, out.String())
		}
	}
}
