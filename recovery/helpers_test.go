package recovery_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/internal/testknob"
	"github.com/git-atlas/git-atlas/ledger"
)

func TestMain(m *testing.M) {
	testknob.NoRaceExitSleep()
	os.Exit(runTests(m))
}

// runTests pins the environment every test here runs git in, then runs them.
func runTests(m *testing.M) int {
	home, err := os.MkdirTemp("", "atlas-recovery-home-")
	if err != nil {
		panic(err)
	}
	for _, kv := range []string{
		"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=A U Thor", "GIT_AUTHOR_EMAIL=author@example.com",
		"GIT_COMMITTER_NAME=C O Mitter", "GIT_COMMITTER_EMAIL=committer@example.com",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
	} {
		k, v, _ := strings.Cut(kv, "=")
		_ = os.Setenv(k, v)
	}
	defer func() { _ = os.RemoveAll(home) }()
	if err := testenv.Home(home); err != nil {
		panic(err)
	}
	if templatesDir, err = os.MkdirTemp("", "atlas-recovery-fixtures-"); err != nil {
		panic(err)
	}
	defer func() { _ = os.RemoveAll(templatesDir) }()
	if upperFilterPath, err = buildUpperFilter(templatesDir); err != nil {
		panic(err)
	}
	defer testenv.RemoveCommand()
	testknob.ProcessBoundParallel() // its tests wait on git
	return m.Run()
}

// run runs git in dir and returns its stdout; it fails the test on error.
func run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := runErr(dir, nil, args...)
	if err != nil {
		t.Fatalf("git %q in %s: %v", args, dir, err)
	}
	return out
}

func runErr(dir string, stdin []byte, args ...string) (string, error) {
	return testenv.GitErr(dir, string(stdin), args...)
}

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for k := range 8 {
			b[i+k] = byte(v >> (8 * k))
		}
	}
	return b
}

// fixture is a repository with a baseline commit full of things to break, a run, and
// managed worktrees made the way `git atlas worktree add` makes them.
type fixture struct {
	t     testing.TB
	dir   string
	repo  *git.Repository
	store *gitstate.Store
	run   string
	base  string
	many  int // files under many/ in the baseline
}

const (
	nameSpace   = "with space.txt"
	nameNewline = "new\nline.txt"
	nameBytes   = "\xff\xfe-latin.txt"
)

func newFixture(t testing.TB, many int) *fixture {
	t.Helper()
	return newFixtureWith(t, many, nil)
}

// newFixtureWith is newFixture with prep run in the new repository before the
// baseline is committed (config, and files the baseline should hold).
func newFixtureWith(t testing.TB, many int, prep func(dir string)) *fixture {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if prep == nil {
		return copyFixture(t, dir, many)
	}
	return buildFixture(t, dir, many, prep)
}

// fixtureTemplates holds, per count of files under many/, the fixture newFixture built
// once for the test binary (runTests removes templatesDir after the tests).
var (
	templatesDir string
	templatesMu  sync.Mutex
	templates    = map[int]*fixtureTemplate{}
)

type fixtureTemplate struct {
	once sync.Once
	dir  string
	base string
	ok   bool
}

// copyFixture is buildFixture(t, dir, many, nil) without its two dozen git processes
// for each test: a copy of the one built first, its index refreshed (testenv.Restat,
// or git where it cannot; the copy's files
// have other inodes and change times than the index recorded). The copy has the same
// commits, branches, run and ledger, files, modes and mtimes, and a clean stat cache.
func copyFixture(t testing.TB, dir string, many int) *fixture {
	t.Helper()
	templatesMu.Lock()
	tpl := templates[many]
	if tpl == nil {
		tpl = &fixtureTemplate{}
		templates[many] = tpl
	}
	templatesMu.Unlock()
	tpl.once.Do(func() {
		tpl.dir = filepath.Join(templatesDir, fmt.Sprintf("many%d", many), "repo")
		tpl.base = buildFixture(t, tpl.dir, many, nil).base
		tpl.ok = true
	})
	if !tpl.ok {
		t.Fatalf("the fixture template with %d files failed to build (see the first test that built it)", many)
	}
	if err := testenv.CopyTree(dir, tpl.dir); err != nil {
		t.Fatal(err)
	}
	if ok, err := testenv.Restat(dir, tpl.dir); err != nil {
		t.Fatal(err)
	} else if !ok {
		run(t, dir, "update-index", "-q", "--refresh")
	}
	return openFixture(t, dir, many, tpl.base)
}

// buildFixture makes the fixture's repository at dir with git, prep run in it before
// the baseline is committed, and creates the run.
func buildFixture(t testing.TB, dir string, many int, prep func(dir string)) *fixture {
	t.Helper()
	run(t, "", "init", "-q", "-b", "main", dir)
	if prep != nil {
		prep(dir)
	}
	files := map[string]string{
		"staged.txt": "staged\n", "unstaged.txt": "unstaged\n", "partial.txt": "partial\n",
		"del-unstaged.txt": "gone\n", "del-staged.txt": "gone too\n", "mode.sh": "#!/bin/sh\n",
		"mode-staged.sh": "#!/bin/sh\necho\n", "f2l.txt": "becomes a link\n", "f2d": "becomes a dir\n",
		"d2f/inner.txt": "dir becomes a file\n", "conflict.txt": "base\n", "moddel.txt": "base\n",
		"assumed.txt": "assumed\n", "skipped.txt": "skipped\n", "sparse.txt": "sparse\n", nameSpace: "space\n", nameBytes: "bytes\n", nameNewline: "newline\n",
		".gitignore": "build/\n*.log\n", "exec.sh": "#!/bin/sh\nexit 0\n",
	}
	for name, content := range files {
		write(t, filepath.Join(dir, name), content)
	}
	if err := os.Chmod(filepath.Join(dir, "exec.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin.dat"), randomBytes(1, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{"link-old", "staged.txt"}, {"l2f", "unstaged.txt"}} {
		if err := os.Symlink(l[1], filepath.Join(dir, l[0])); err != nil {
			t.Fatal(err)
		}
	}
	for i := range many {
		write(t, filepath.Join(dir, "many", fmt.Sprintf("d%02d", i%50), fmt.Sprintf("f%05d.txt", i)), fmt.Sprintf("file %d\n", i))
	}
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "baseline")
	base := strings.TrimSpace(run(t, dir, "rev-parse", "HEAD"))
	// A side branch to merge: conflicts of every shape against the worktree's commit.
	run(t, dir, "checkout", "-q", "-b", "theirs")
	write(t, filepath.Join(dir, "conflict.txt"), "theirs\n")
	write(t, filepath.Join(dir, "addadd.txt"), "theirs add\n")
	run(t, dir, "rm", "-q", "moddel.txt")
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "theirs")
	run(t, dir, "checkout", "-q", "main")

	ctx := context.Background()
	f := openFixture(t, dir, many, base)
	h := ledger.Header{RunID: f.run, Kind: ledger.KindSingle, CreatedAt: ledger.Stamp(time.Now().UTC()), Baseline: testenv.HexOID(base),
		Stages: []ledger.StageDef{{Name: "code", MaxRetries: 2}}}
	st := ledger.State{RunID: f.run, Status: ledger.RunRunning, Stages: []ledger.StageState{{Name: "code", Status: ledger.StagePending}}}
	if _, err := f.store.Create(ctx, h, st, ledger.Event{Type: "run_started"}); err != nil {
		t.Fatal(err)
	}
	return f
}

// openFixture opens the fixture repository at dir, whose baseline commit is base.
func openFixture(t testing.TB, dir string, many int, base string) *fixture {
	t.Helper()
	repo, err := git.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, dir: dir, repo: repo, store: gitstate.New(repo), run: "r1", base: base, many: many}
}

// worktree makes a managed worktree for node: locked, on its node branch at the
// baseline, recorded in the ledger.
func (f *fixture) worktree(node string) string {
	f.t.Helper()
	ctx := context.Background()
	path := filepath.Join(f.repo.CommonDir, "atlas", "worktrees", f.run, node)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := f.repo.AddWorktree(ctx, path, mustOID(f.t, f.base), "git-atlas run "+f.run+" node "+node, nil); err != nil {
		f.t.Fatal(err)
	}
	branch := "atlas/" + f.run + "/node/" + node
	run(f.t, path, "update-ref", "refs/heads/"+branch, f.base)
	run(f.t, path, "symbolic-ref", "HEAD", "refs/heads/"+branch)
	_, err := f.store.Update(ctx, f.run, func(r *ledger.Run) (*gitstate.Change, error) {
		r.State.Worktrees = append(r.State.Worktrees, ledger.WorktreeRec{Node: node, Stage: "code", Path: path, Branch: branch, Baseline: testenv.HexOID(f.base), Head: testenv.HexOID(f.base)})
		return &gitstate.Change{Event: ledger.Event{Type: "test_worktrees"}}, nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return path
}

// state is a worktree as a user sees it: every file (kind, exec bit, content or link
// target), the index entries with their stages, HEAD, and the ignored files.
type state struct {
	Files   map[string]string
	Index   string // ls-files --stage -z
	Head    string
	Ignored map[string]bool
	Status  string // staged, unstaged, untracked and unmerged paths, as git reports them
	Pending string // MERGE_HEAD, CHERRY_PICK_HEAD, REVERT_HEAD: those present, with ids
}

func fileMap(t testing.TB, root string, withTimes bool) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		var v string
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			v = "link " + target
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s := sha256.Sum256(data)
			v = fmt.Sprintf("file x=%v %s", info.Mode()&0o100 != 0, hex.EncodeToString(s[:]))
		}
		if withTimes {
			v += fmt.Sprintf(" %v %d", info.Mode(), info.ModTime().UnixNano())
		}
		m[filepath.ToSlash(rel)] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func capture(t testing.TB, wt string) state {
	t.Helper()
	s := state{Files: fileMap(t, wt, false), Index: run(t, wt, "ls-files", "--stage", "-z"), Ignored: map[string]bool{}}
	s.Head, _ = runErr(wt, nil, "rev-parse", "--verify", "-q", "HEAD")
	// The operations in progress, read from their files in the worktree's git dir
	// rather than with a `git rev-parse` each (three processes for every capture): the
	// fixtures' repositories store refs as files, and git writes each of these pseudo
	// refs as one id and a newline, what `rev-parse --verify` printed for it.
	dir := gitDir(t, wt)
	for _, name := range []string{"MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD"} {
		if id, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			s.Pending += name + " " + string(id)
		} else if !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	s.Status = run(t, wt, "--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=all")
	for p := range strings.SplitSeq(run(t, wt, "ls-files", "-z", "--others", "--ignored", "--exclude-standard"), "\x00") {
		if p != "" {
			s.Ignored[p] = true
		}
	}
	return s
}

// withoutIgnored is the files a snapshot without --include-ignored keeps.
func (s state) withoutIgnored() map[string]string {
	m := map[string]string{}
	for k, v := range s.Files {
		if !s.Ignored[k] {
			m[k] = v
		}
	}
	return m
}

// exact is a checkout's bytes as the invariant sees them: files with modes and
// mtimes, the index file's bytes, HEAD.
func exact(t testing.TB, wt string) string {
	t.Helper()
	dir := gitDir(t, wt)
	idx, _ := os.ReadFile(filepath.Join(dir, "index"))
	head, _ := os.ReadFile(filepath.Join(dir, "HEAD"))
	files := fileMap(t, wt, true)
	b, _ := json.Marshal(files)
	s := sha256.Sum256(idx)
	return fmt.Sprintf("%s\nindex %x\nHEAD %s", b, s, head)
}

// gitDir is the git dir of the checkout wt, as `git rev-parse --absolute-git-dir`
// gives it, read without starting git: wt/.git is the directory itself (a main
// worktree) or a file naming it (a linked worktree, "gitdir: PATH", PATH relative to
// wt or absolute).
func gitDir(t testing.TB, wt string) string {
	t.Helper()
	dot := filepath.Join(wt, ".git")
	info, err := os.Lstat(dot)
	if err != nil {
		t.Fatal(err)
	}
	if info.IsDir() {
		return dot
	}
	data, err := os.ReadFile(dot)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := strings.CutPrefix(strings.TrimRight(string(data), "\r\n"), "gitdir: ")
	if !ok {
		t.Fatalf("%s: not a gitdir file: %q", dot, data)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(wt, p)
	}
	return p
}

func diffMaps(want, got map[string]string) string {
	var out []string
	for k, v := range want {
		if g, ok := got[k]; !ok {
			out = append(out, fmt.Sprintf("  missing %q", k))
		} else if g != v {
			out = append(out, fmt.Sprintf("  %q: want %s, got %s", k, v, g))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			out = append(out, fmt.Sprintf("  extra %q", k))
		}
	}
	sort.Strings(out)
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("  ... and %d more", len(out)-20))
	}
	return strings.Join(out, "\n")
}

// mustOID parses an id a test read from git.
func mustOID(t testing.TB, s string) git.OID {
	t.Helper()
	id, err := git.ParseOID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// config sets git configuration in the fixture's repository, and its Repository reads
// the configuration again: a Repository reads it once, as one command does.
func (f *fixture) config(t testing.TB, kv ...string) {
	t.Helper()
	gitConfig(t, f.dir, kv...)
	f.repo.ReloadConfig()
}
