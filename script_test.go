package gitatlas_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/git-atlas/git-atlas/internal/cli"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/internal/testknob"
)

func TestMain(m *testing.M) {
	testknob.NoRaceExitSleep()
	testscript.Main(cleaningUp{m}, map[string]func(){
		"git-atlas": func() { os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// cleaningUp runs the tests, then removes the binary testenv.Command built (testscript.Main
// exits with the tests' code, so nothing after it would run).
type cleaningUp struct{ m *testing.M }

func (c cleaningUp) Run() int {
	testknob.ProcessBoundParallel() // the transcripts and sweeps wait on processes
	code := c.m.Run()
	testenv.RemoveCommand()
	if fixtureTemplate.dir != "" {
		_ = os.RemoveAll(fixtureTemplate.dir)
	}
	return code
}

// TestScript runs the end-to-end transcripts in testdata/script against the real git
// binary. Every transcript starts in $WORK/repo, a repository whose checkout is dirty
// (staged, unstaged and untracked changes); when the transcript ends, the checkout
// invariant is checked: HEAD, index bytes, files, modes and mtimes of the user's
// checkout are exactly as they were.
//
// Transcripts run `exec git-atlas ...`: `git atlas` would start git only for it to
// start git-atlas, a second process for every command. The ones about git's front door
// (help_version, git_dir_env, completion, hooks_*, worktree_hooks) run `git atlas`.
//
// `git-atlas` is the binary atlasBinary built, without the race detector, like every
// process the stress and kill tests start: built with it, git-atlas costs about twice
// the CPU in each of the transcripts' thousand commands (docs/design.md keeps the
// measurement). TestGolden runs the commands
// with --json output, one after another, as the race-built test binary, so a data race
// inside one is still reported (exit 66); the packages' own tests run under -race too.
func TestScript(t *testing.T) {
	t.Parallel() // each transcript has its own work directory and environment
	testscript.Run(t, scriptParams(t, "testdata/script", atlasBinary(t)))
}

// frontDoorTranscripts are the transcripts about git's front door, which run `git
// atlas` through git: help and version, the git dir variables git exports, completion,
// and the hooks git runs.
var frontDoorTranscripts = regexp.MustCompile(`^(help_version|git_dir_env|completion|hooks_.*|worktree_hooks)\.txtar$`)

// TestTranscriptsStartGitAtlasDirectly holds the transcripts to `exec git-atlas`: an
// `exec git atlas` starts a git process only for it to start git-atlas, one process
// more for every command of the suite (TestScript's doc comment). A `git atlas` in the
// command line of an `exec sh -c` is the same extra process.
func TestTranscriptsStartGitAtlasDirectly(t *testing.T) {
	execGitAtlas := regexp.MustCompile(`(?m)^\s*(\[[^]]*\]\s*)?!?\s*exec (sh -c .*\W)?git atlas\b`)
	files, err := filepath.Glob(filepath.Join("testdata", "*", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		if frontDoorTranscripts.MatchString(filepath.Base(file)) {
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(execGitAtlas.FindAll(data, -1)); n > 0 {
			t.Errorf("%s: %d commands run as `exec git atlas`; run `exec git-atlas` (one process, not two)", file, n)
		}
	}
}

// TestTranscriptsReadJSONWithJsonvar holds the transcripts to jsonvar for a value
// they read from a command's JSON: `--json | sed` scrapes by indentation and line
// shape, and an empty match passes on silently where jsonvar fails naming the path.
func TestTranscriptsReadJSONWithJsonvar(t *testing.T) {
	scrape := regexp.MustCompile(`--json[^|'\n]*\|\s*(grep[^|'\n]*\|\s*)?sed\b`)
	files, err := filepath.Glob(filepath.Join("testdata", "*", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(scrape.FindAll(data, -1)); n > 0 {
			t.Errorf("%s: %d values scraped from --json output with sed; read them with jsonvar VAR PATH", file, n)
		}
	}
}

type fpKey struct{}

// scriptParams runs the transcripts in dir with bin, a directory holding git-atlas,
// first on PATH; with bin "", git-atlas is the test binary itself (TestMain).
func scriptParams(t *testing.T, dir, bin string) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			home := filepath.Join(env.WorkDir, "home")
			if err := testenv.Home(home); err != nil {
				return err
			}
			for _, kv := range gitEnv(home) {
				k, v, _ := strings.Cut(kv, "=")
				env.Setenv(k, v)
			}
			if bin != "" {
				env.Setenv("PATH", bin+string(os.PathListSeparator)+env.Getenv("PATH"))
			}
			repo := filepath.Join(env.WorkDir, "repo")
			if err := makeFixture(repo, env.Vars); err != nil {
				return err
			}
			env.Cd = repo
			fp := &checkouts{dir: repo}
			if err := fp.record(); err != nil {
				return err
			}
			env.Values[fpKey{}] = fp
			tb := env.T().(testing.TB)
			env.Defer(func() {
				if tb.Failed() {
					return
				}
				if diff := fp.diff(); diff != "" {
					tb.Errorf("the user's checkout changed:\n%s", diff)
				}
			})
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"checkout-baseline":  cmdCheckoutBaseline,
			"checkout-unchanged": cmdCheckoutUnchanged,
			"jsonpath":           cmdJSONPath,
			"jsonvar":            cmdJSONVar,
		},
	}
}

// gitEnv pins git's identity, dates and config so hashes are reproducible and no
// machine setting leaks in.
func gitEnv(home string) []string {
	return []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=A U Thor", "GIT_AUTHOR_EMAIL=author@example.com",
		"GIT_COMMITTER_NAME=C O Mitter", "GIT_COMMITTER_EMAIL=committer@example.com",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
		"CI=true", "NO_COLOR=1", "ATLAS_SESSION=",
	}
}

// buildFixture creates the user's repository: two commits, then a dirty checkout
// (makeFixture copies the one it built).
func buildFixture(repo string, vars []string) error {
	if err := os.MkdirAll(filepath.Join(repo, "src"), 0o755); err != nil {
		return err
	}
	run := func(args ...string) error {
		_, err := gitCmd(repo, append(os.Environ(), vars...), "", args...)
		return err
	}
	write := func(name, content string) error {
		return os.WriteFile(filepath.Join(repo, name), []byte(content), 0o644)
	}
	if err := run("init", "-q", "-b", "main"); err != nil {
		return err
	}
	for name, content := range map[string]string{"README": "hello\n", "src/a.go": "package a\n", "src/b.go": "package b\n", "docs.txt": "docs\n"} {
		if err := write(name, content); err != nil {
			return err
		}
	}
	if err := run("add", "-A"); err != nil {
		return err
	}
	if err := run("commit", "-q", "-m", "initial"); err != nil {
		return err
	}
	if err := write("docs.txt", "docs v2\n"); err != nil {
		return err
	}
	if err := run("commit", "-q", "-am", "second"); err != nil {
		return err
	}
	// The user's work in progress: one staged, one unstaged, one untracked change.
	if err := write("src/a.go", "package a // staged\n"); err != nil {
		return err
	}
	if err := run("add", "src/a.go"); err != nil {
		return err
	}
	if err := write("README", "hello, unstaged\n"); err != nil {
		return err
	}
	return write("notes.txt", "untracked\n")
}

// checkouts fingerprints every checkout of the user's: the main worktree and its linked
// worktrees that git-atlas did not create.
type checkouts struct {
	dir string
	fp  map[string]string
}

func (c *checkouts) record() error {
	fp, err := c.take()
	c.fp = fp
	return err
}

func (c *checkouts) diff() string {
	now, err := c.take()
	if err != nil {
		return err.Error()
	}
	var out []string
	for k, v := range c.fp {
		if now[k] != v {
			out = append(out, fmt.Sprintf("  %s: was %q, now %q", k, v, now[k]))
		}
	}
	for k, v := range now {
		if _, ok := c.fp[k]; !ok {
			out = append(out, fmt.Sprintf("  %s: new %q", k, v))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// take fingerprints the main worktree and every linked worktree the repository
// registers, but those git-atlas made. It reads the registrations as `git worktree
// list` does (each .git/worktrees/ID/gitdir names the worktree's .git file) and starts
// no process: it runs twice in every transcript.
func (c *checkouts) take() (map[string]string, error) {
	paths := []string{c.dir}
	regs := filepath.Join(c.dir, ".git", "worktrees")
	entries, err := os.ReadDir(regs)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(regs, e.Name(), "gitdir"))
		if err != nil {
			return nil, fmt.Errorf("worktree registration %s: %w", e.Name(), err)
		}
		paths = append(paths, strings.TrimSuffix(strings.TrimSpace(string(data)), "/.git"))
	}
	fp := map[string]string{}
	for _, path := range paths {
		if strings.Contains(path, "/atlas/worktrees/") || strings.Contains(path, "/atlas-worktrees/") {
			continue
		}
		if err := fingerprint(path, fp); err != nil {
			return nil, err
		}
	}
	return fp, nil
}

// fingerprint records HEAD, the index bytes, and every file's mode, size, mtime and
// content (or link target) of one checkout.
func fingerprint(root string, fp map[string]string) error {
	gitDir := filepath.Join(root, ".git")
	if st, err := os.Stat(gitDir); err == nil && !st.IsDir() {
		data, _ := os.ReadFile(gitDir)
		gitDir = strings.TrimSpace(strings.TrimPrefix(string(data), "gitdir:"))
	}
	for _, name := range []string{"HEAD", "index"} {
		data, err := os.ReadFile(filepath.Join(gitDir, name))
		if err != nil && !os.IsNotExist(err) {
			return err
		}
		fp[root+"!"+name] = hash(data)
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		v := fmt.Sprintf("%v %d %d", info.Mode(), info.Size(), info.ModTime().UnixNano())
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			v += " -> " + target
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + hash(data)
		case info.IsDir():
			v = fmt.Sprintf("%v", info.Mode())
		}
		fp[p] = v
		return nil
	})
}

func hash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}

// checkout-baseline: the transcript changed the user's checkout on purpose (its own
// setup); record the new state as the one that must not change from here on.
func cmdCheckoutBaseline(ts *testscript.TestScript, neg bool, args []string) {
	fp := ts.Value(fpKey{}).(*checkouts)
	ts.Check(fp.record())
}

// checkout-unchanged: check the invariant now, mid-transcript.
func cmdCheckoutUnchanged(ts *testscript.TestScript, neg bool, args []string) {
	fp := ts.Value(fpKey{}).(*checkouts)
	diff := fp.diff()
	if neg {
		if diff == "" {
			ts.Fatalf("checkout unchanged, expected a change")
		}
		return
	}
	if diff != "" {
		ts.Fatalf("the user's checkout changed:\n%s", diff)
	}
}

// jsonpath [-stderr] PATH [VALUE]: the last command's stdout (or stderr) is JSON and
// the value at PATH (dot-separated keys and indices; "@len" is a length) is VALUE (strings
// bare, anything else as JSON); without VALUE, PATH must exist. `! jsonpath` negates.
func cmdJSONPath(ts *testscript.TestScript, neg bool, args []string) {
	src := "stdout"
	if len(args) > 0 && args[0] == "-stderr" {
		src, args = "stderr", args[1:]
	}
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: jsonpath [-stderr] PATH [VALUE]")
	}
	var doc any
	if err := json.Unmarshal([]byte(ts.ReadFile(src)), &doc); err != nil {
		ts.Fatalf("%s is not JSON: %v", src, err)
	}
	got, ok := walkJSON(doc, args[0])
	if len(args) == 1 {
		if ok == neg {
			ts.Fatalf("jsonpath %s: exists=%v", args[0], ok)
		}
		return
	}
	if !ok {
		if !neg {
			ts.Fatalf("jsonpath %s: not found", args[0])
		}
		return
	}
	var s string
	if str, isStr := got.(string); isStr {
		s = str
	} else {
		b, _ := json.Marshal(got)
		s = string(b)
	}
	if (s == args[1]) == neg {
		ts.Fatalf("jsonpath %s: got %s, want %s%s", args[0], s, map[bool]string{true: "not ", false: ""}[neg], args[1])
	}
}

// jsonvar [-stderr] VAR PATH [REGEXP]: the last command's stdout (or stderr) is JSON;
// the string at PATH becomes $VAR, and must match REGEXP when one is given. It is how a
// transcript uses a value it cannot know ahead, such as a lease token's nonce.
func cmdJSONVar(ts *testscript.TestScript, neg bool, args []string) {
	src := "stdout"
	if len(args) > 0 && args[0] == "-stderr" {
		src, args = "stderr", args[1:]
	}
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: jsonvar [-stderr] VAR PATH [REGEXP]")
	}
	var doc any
	if err := json.Unmarshal([]byte(ts.ReadFile(src)), &doc); err != nil {
		ts.Fatalf("%s is not JSON: %v", src, err)
	}
	got, ok := walkJSON(doc, args[1])
	str, isStr := got.(string)
	if !ok || !isStr {
		ts.Fatalf("jsonvar %s: no string at %s", args[0], args[1])
	}
	if len(args) == 3 && !regexp.MustCompile(args[2]).MatchString(str) {
		ts.Fatalf("jsonvar %s: %s is %q, which does not match %s", args[0], args[1], str, args[2])
	}
	ts.Setenv(args[0], str)
}

func walkJSON(doc any, path string) (any, bool) {
	cur := doc
	if path == "." || path == "" {
		return cur, true
	}
	for part := range strings.SplitSeq(strings.TrimPrefix(path, "."), ".") {
		switch v := cur.(type) {
		case map[string]any:
			if part == "@len" {
				return float64(len(v)), true
			}
			next, ok := v[part]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			if part == "@len" {
				return float64(len(v)), true
			}
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}
