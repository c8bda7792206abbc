package cli

import (
	"bytes"
	"encoding/json"
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
func TestProcessBudget(t *testing.T) {
	repo := newRepo(t)
	run := func(budget int64, args ...string) string {
		t.Helper()
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

	run(0, "--version")
	run(0, "resume", "--brief")
	run(2, "start", "--id", "r", "--stages", "a,b", "--holder", "h")
	run(1, "show", "r")
	run(1, "list")
	run(1, "resume", "--detect")
	run(2, "transition", "r", "a", "dispatched", "--holder", "h")
	run(2, "event", "r", "note", "--holder", "h")

	run(2, "start", "--id", "g", "--graph", "--holder", "h")
	run(1<<30, "job", "add", "g", "j", "--holder", "h") // not in the table
	var claim struct{ Lease string }
	if err := json.Unmarshal([]byte(run(2, "job", "claim", "g", "--holder", "w", "--json")), &claim); err != nil || claim.Lease == "" {
		t.Fatalf("job claim printed no lease: %v", err)
	}
	run(2, "job", "done", "g", "j", "--lease", claim.Lease, "--status", "ok", "--holder", "w")

	dirty(strings.TrimSpace(run(1<<30, "worktree", "add", "r", "a", "--holder", "h")))
	run(14, "worktree", "remove", "r", "a", "--holder", "h")

	dirty(strings.TrimSpace(run(1<<30, "worktree", "add", "r", "a", "--holder", "h")))
	run(19, "resume", "r", "--no-verify", "--holder", "h2", "--take-over")
}
