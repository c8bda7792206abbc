package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/text"
)

// The brief prints three interrupted runs and counts the others (it reads no more
// than it prints: ops.ResumeDetectRequest.Most); --json has them all.
func TestBriefCountsTheRunsItLeavesOut(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Main(append([]string{"-C", repo}, args...), strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("git atlas %v: exit %d\n%s", args, code, errb.String())
		}
		return out.String()
	}
	for _, id := range []string{"r1", "r2", "r3", "r4", "r5"} {
		run("start", "--id", id, "--stages", "a")
	}
	lines := strings.Split(strings.TrimSpace(run("resume", "--brief")), "\n")
	if len(lines) != 4 || strings.Count(strings.Join(lines[:3], "\n"), "was interrupted") != 3 ||
		lines[3] != "git-atlas: 2 more interrupted run(s): `git atlas -C "+text.ShellQuote(repo)+" resume --detect`" {
		t.Fatalf("brief:\n%s", strings.Join(lines, "\n"))
	}
	var all struct {
		ResumableRuns []struct{ RunID string } `json:"resumable_runs"`
	}
	if err := json.Unmarshal([]byte(run("resume", "--brief", "--json")), &all); err != nil || len(all.ResumableRuns) != 5 {
		t.Fatalf("brief --json: %+v, %v", all, err)
	}
}
