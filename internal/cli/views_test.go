package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/testenv"
)

// git runs git in repo and returns its stdout.
func gitOut(t *testing.T, repo string, args ...string) string {
	t.Helper()
	out, err := testenv.GitErr(repo, "", args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestShowAtEverySeq: `show --at SEQ` is, for every event of a 30-event run, the
// state.json of the ledger commit that event made, and its seq is SEQ.
func TestShowAtEverySeq(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	atlas(t, repo, "start", "--id", "r", "--stages", "plan,code,check")
	steps := [][]string{
		{"transition", "r", "plan", "dispatched"}, {"transition", "r", "plan", "passed"}, {"transition", "r", "plan", "completed"},
		{"transition", "r", "code", "dispatched"}, {"transition", "r", "code", "failed"}, {"transition", "r", "code", "dispatched"},
	}
	for _, s := range steps {
		atlas(t, repo, s...)
	}
	for i := len(steps) + 1; i < 30; i++ {
		atlas(t, repo, "event", "r", "note", "--data", fmt.Sprintf(`{"n": %d}`, i), "--holder", "h1")
	}
	chain := strings.Fields(gitOut(t, repo, "rev-list", "--first-parent", "refs/atlas/runs/r"))
	if len(chain) != 30 {
		t.Fatalf("want 30 ledger commits, got %d", len(chain))
	}
	for seq := 1; seq <= 30; seq++ {
		commit := chain[30-seq]
		var want, got any
		if err := json.Unmarshal([]byte(gitOut(t, repo, "cat-file", "blob", commit+":state.json")), &want); err != nil {
			t.Fatal(err)
		}
		var view struct {
			Tip    string          `json:"tip"`
			Events int             `json:"events"`
			State  json.RawMessage `json:"state"`
		}
		if err := json.Unmarshal([]byte(atlas(t, repo, "show", "r", "--at", fmt.Sprint(seq), "--json")), &view); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(view.State, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("show --at %d:\n got %v\nwant %v", seq, got, want)
		}
		if view.Tip != commit || view.Events != seq {
			t.Fatalf("show --at %d: tip %s events %d, want %s and %d", seq, view.Tip, view.Events, commit, seq)
		}
	}
	for _, seq := range []string{"0", "31", "-1"} {
		var out, errb bytes.Buffer
		code := Main([]string{"-C", repo, "show", "r", "--at=" + seq}, strings.NewReader(""), &out, &errb)
		if code != ExitNotFound || !strings.Contains(errb.String(), "run r has no event "+seq+": its events are 1 to 30") {
			t.Fatalf("show --at %s: exit %d, %q", seq, code, errb.String())
		}
	}
}

// onTerminalOut runs git-atlas with stdout on a terminal (System says so) in the
// environment env, and returns what it printed there.
func onTerminalOut(t *testing.T, repo string, env map[string]string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	code, _ := execute(context.Background(), nil, fakeSystem(env, &out), append([]string{"-C", repo}, args...), strings.NewReader(""), &out, &errb)
	if code != 0 {
		t.Fatalf("git atlas %v: exit %d\n%s", args, code, errb.String())
	}
	return out.String()
}

// TestGraphColour: colour on a terminal only, never with NO_COLOR, and the same words
// either way.
func TestGraphColour(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	atlas(t, repo, "start", "--id", "s", "--stages", "plan,code")
	atlas(t, repo, "transition", "s", "plan", "dispatched")
	coloured := onTerminalOut(t, repo, map[string]string{"TERM": "xterm"}, "graph", "s")
	if !strings.Contains(coloured, "\x1b[33mdispatched\x1b[0m") {
		t.Fatalf("no colour on a terminal:\n%q", coloured)
	}
	if plain := atlas(t, repo, "graph", "s"); strings.Contains(plain, "\x1b") {
		t.Fatalf("colour without a terminal:\n%q", plain)
	}
	if out := onTerminalOut(t, repo, map[string]string{"TERM": "xterm", "NO_COLOR": "1"}, "graph", "s"); strings.Contains(out, "\x1b") || !strings.Contains(out, "dispatched") {
		t.Fatalf("colour with NO_COLOR:\n%q", out)
	}
}

// onTerminalErr runs git-atlas with stderr on a terminal (System says so, 250
// columns: a long temporary path in a label is not cut) in the environment env; it
// returns stdout, what the terminal showed, and the exit code.
func onTerminalErr(t *testing.T, repo string, env map[string]string, args ...string) (string, string, int) {
	t.Helper()
	var out, shown bytes.Buffer
	code, _ := execute(context.Background(), nil, fakeSystem(env, &shown), append([]string{"-C", repo}, args...), strings.NewReader(""), &out, &shown)
	return out.String(), shown.String(), code
}

// TestLockWaitToldOnTerminalOnly: a start that waits for a ref lock a killed git-atlas
// left (the kill of a start between its two ref renames) says why it stopped, once, on
// stderr when that is a terminal; never with --json or CI=true. Each lock is made 7 s
// old, so that the start (however slow the machine, well under 3 s from the lock to its
// first write) waits until it is stale (10 s), removes it and goes on.
func TestLockWaitToldOnTerminalOnly(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	gitDir := strings.TrimSpace(gitOut(t, repo, "rev-parse", "--absolute-git-dir"))
	for _, c := range []struct {
		run  string
		env  map[string]string
		json bool
		told bool
	}{{"shown", nil, false, true}, {"json", nil, true, false}, {"ci", map[string]string{"CI": "true"}, false, false}} {
		t.Run(c.run, func(t *testing.T) {
			t.Parallel()
			lock := filepath.Join(gitDir, "refs", "atlas", "runs", c.run+".lock")
			if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(lock, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			old := time.Now().Add(-7 * time.Second)
			if err := os.Chtimes(lock, old, old); err != nil {
				t.Fatal(err)
			}
			args := []string{"start", "--id", c.run}
			if c.json {
				args = append(args, "--json")
			}
			out, shown, code := onTerminalErr(t, repo, c.env, args...)
			if code != 0 {
				t.Fatalf("%v: exit %d\n%s%s", args, code, out, shown)
			}
			const want = "git-atlas: waiting for "
			told := strings.Count(shown, want)
			switch {
			case c.told && (told != 1 || !strings.Contains(shown, c.run+".lock: another git process holds it, or a killed one left it (removed once 10s old)")):
				t.Errorf("%v on a terminal: stderr %q; want the lock waited for named once", args, shown)
			case !c.told && told != 0:
				t.Errorf("%v: stderr %q; want no word of the wait", args, shown)
			}
			if strings.Contains(out, want) {
				t.Errorf("%v: the wait told on stdout: %q", args, out)
			}
		})
	}
}

// TestProgressOnTerminalOnly: audit and union draw a progress bar on stderr when it is
// a terminal, and never with --json or CI=true; stdout never holds one.
func TestProgressOnTerminalOnly(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	atlas(t, repo, "start", "--id", "g", "--graph")
	var paths []string
	for _, n := range []string{"a", "b", "c"} {
		atlas(t, repo, "job", "add", "g", n)
		var g struct {
			Lease string `json:"lease"`
		}
		if err := json.Unmarshal([]byte(atlas(t, repo, "job", "claim", "g", "--job", n, "--holder", "w", "--json")), &g); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, strings.TrimSpace(atlas(t, repo, "worktree", "add", "g", n, "--lease", g.Lease)))
		atlas(t, repo, "job", "done", "g", n, "--lease", g.Lease, "--status", "ok")
	}
	for _, c := range []struct {
		args []string
		what string
	}{{[]string{"audit"}, "checking worktrees"}, {[]string{"union", "g"}, "integrating nodes"}} {
		out, shown, _ := onTerminalErr(t, repo, nil, c.args...)
		// mpb draws a frame after the step that asked for it, not at it: a fast
		// step can be drawn with the next one's count, so any step's count will do.
		if !strings.Contains(shown, c.what) || !strings.Contains(shown, "/3)") {
			t.Errorf("%v on a terminal: no progress on stderr:\n%q", c.args, shown)
		}
		if strings.Contains(out, c.what) {
			t.Errorf("%v: progress on stdout:\n%q", c.args, out)
		}
		out, shown, _ = onTerminalErr(t, repo, nil, append(c.args, "--json")...)
		if strings.Contains(shown, c.what) || strings.Contains(out, c.what) {
			t.Errorf("%v --json: progress shown:\n%q\n%q", c.args, shown, out)
		}
		if _, shown, _ = onTerminalErr(t, repo, map[string]string{"CI": "true"}, c.args...); strings.Contains(shown, c.what) {
			t.Errorf("%v with CI=true: progress shown:\n%q", c.args, shown)
		}
	}
	// An import, one step per source run.
	src := t.TempDir()
	for name, body := range map[string]string{
		"r/state.json": `{"run_id":"r","created_ts":"2026-07-01T12:00:00Z","updated_ts":"2026-07-01T12:05:00Z","current_state":"CODED","stages":{},"scope_paths":[]}`,
		"r/log.jsonl":  `{"run_id":"r","stage":"INIT","ts":"2026-07-01T12:00:01Z"}` + "\n",
	} {
		if err := os.MkdirAll(filepath.Join(src, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, shown, code := onTerminalErr(t, repo, nil, "import", "kimi-atlas", src, "--dry-run"); code != 0 || !strings.Contains(shown, "importing runs") {
		t.Errorf("import on a terminal: exit %d, no progress:\n%q", code, shown)
	}
	if _, shown, _ := onTerminalErr(t, repo, nil, "import", "kimi-atlas", src, "--dry-run", "--json"); strings.Contains(shown, "importing runs") {
		t.Errorf("import --json: progress shown:\n%q", shown)
	}
	// A snapshot before a removal: dirty work in a's worktree.
	if err := os.WriteFile(filepath.Join(paths[0], "work.txt"), []byte("unsaved\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, shown, code := onTerminalErr(t, repo, nil, "worktree", "remove", "g", "a"); code != 0 || !strings.Contains(shown, "snapshot /") {
		// (The label is the worktree's path, cut to the line: mpb's width is 80 when the
		// output is no terminal file.)
		t.Errorf("worktree remove on a terminal: exit %d, no snapshot progress:\n%q", code, shown)
	}
}
