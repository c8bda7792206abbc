// Package testenv holds the conventions the test suites share that start processes:
// git in a pinned environment, the git-atlas binary, fixture repositories, and how the
// binaries a suite starts behave under the race detector. The knobs that need no git
// (sweep sizes, name words) are the leaf package testknob's.
package testenv

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/testknob"
)

// A binary built with -race sleeps GORACE's atexit_sleep_ms (1 s by default) before it
// exits, so that late race reports get out. The suites run their own test binary as a
// command (testscript, the stress writers) thousands of times; that second each was
// most of the README's test command. Races are still reported: a race found while the
// command ran is printed when found and makes it exit 66. Every suite that imports
// testenv turns the sleep off for the processes it starts, unless GORACE says otherwise.
// A test binary's temporary directories go to a tmpfs where one is mounted
// (useMemoryScratch).
func init() {
	if g := os.Getenv("GORACE"); !strings.Contains(g, "atexit_sleep_ms") {
		_ = os.Setenv("GORACE", strings.TrimSpace(g+" atexit_sleep_ms=0"))
	}
	if testing.Testing() {
		useMemoryScratch()
	}
}

// SweepsTag is testknob.SweepsTag, the build tag of the full sweeps.
const SweepsTag = testknob.SweepsTag

// Long is testknob.Long, for the suites that start processes and import testenv.
func Long() bool { return testknob.Long() }

// Rounds is testknob.Rounds, for the suites that start processes and import testenv.
func Rounds(short, long int) int { return testknob.Rounds(short, long) }

// Command returns the path of the git-atlas binary, put once per test binary (the
// first test that asks copies it from the build the test binaries share, buildShared,
// into a temporary directory that RemoveCommand removes; Pin calls it) and used by
// every test after. Its directory can go first on PATH for `git atlas`. It is built
// as the README installs it (static: no dynamic loader to run at each start) and
// without the race detector: the processes are what is under test, and a race-built
// git-atlas costs about twice the CPU in each of the suites' thousands of commands;
// the packages' own tests run git-atlas's code in process under -race, and the root
// package's TestGolden runs its commands as the race-built test binary. It is every
// suite's git-atlas process (one build, not one per helper or per package).
func Command(t testing.TB) string {
	t.Helper()
	bin, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Build is Command for a TestMain, which has no test to fail: the binary's path, or
// why it could not be built.
func Build() (string, error) {
	command.mu.Lock()
	defer command.mu.Unlock()
	if command.built {
		return command.path, command.err
	}
	command.built = true
	dir, err := os.MkdirTemp("", "atlas-bin-")
	if err != nil {
		command.err = err
		return "", err
	}
	command.dir = dir
	bin := filepath.Join(dir, "git-atlas")
	if err := buildShared("cmd/git-atlas", bin); err != nil {
		command.err = err
		return "", err
	}
	command.path = bin
	return bin, nil
}

// buildShared puts the module's program pkg ("cmd/git-atlas") at bin. The test
// binaries of one checkout share one build of each: it is built under a lock into
// sharedBuild's directory, where go itself decides whether the binary there is up to
// date (it links again only when something it is built from changed), and copied to
// bin, so that a later build there never changes a binary a suite runs. Linking
// git-atlas is about 2 CPU-seconds, and a dozen packages' tests ask for it
// (bench/results/2026-12-07.md). Where there is no cache directory or no flock, it is
// built at bin alone.
func buildShared(pkg, bin string) error {
	dir := sharedBuild()
	if dir == "" {
		return goBuild(pkg, bin)
	}
	unlock, err := lockDir(dir)
	if errors.Is(err, errors.ErrUnsupported) || errors.Is(err, fs.ErrNotExist) {
		return goBuild(pkg, bin) // no flock here, or pruneBuilds removed dir meanwhile
	}
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(dir, "lock")); err != nil {
		return goBuild(pkg, bin) // removed while this waited for its lock
	}
	shared := filepath.Join(dir, path.Base(pkg))
	if err := goBuild(pkg, shared); err != nil {
		return err
	}
	info, err := os.Stat(shared)
	if err != nil {
		return err
	}
	if err := copyFile(bin, shared, info); err != nil {
		return err
	}
	// The lock file's time says when a checkout's build was last used.
	now := time.Now()
	_ = os.Chtimes(filepath.Join(dir, "lock"), now, now)
	pruneBuilds(filepath.Dir(dir), now.Add(-buildIdle))
	return nil
}

// buildIdle is how long a checkout's shared build stays unused before the next suite
// of any checkout removes it: each is a whole binary (about 25 MB), and checkouts come
// and go (clones, worktrees, CI's).
const buildIdle = 14 * 24 * time.Hour

// pruneBuilds removes, under root, each build-* directory last used before cutoff (its
// lock file's time) that no test binary holds now. What it cannot remove stays.
func pruneBuilds(root string, cutoff time.Time) {
	dirs, _ := filepath.Glob(filepath.Join(root, "build-*"))
	for _, dir := range dirs {
		info, err := os.Stat(filepath.Join(dir, "lock"))
		if err != nil || info.ModTime().After(cutoff) {
			continue
		}
		unlock, err := tryLockDir(dir)
		if err != nil {
			continue
		}
		// The lock file goes too: a suite that opened it before and waits for the
		// flock finds it gone once it has it, and builds alone (buildShared).
		_ = os.RemoveAll(dir)
		unlock()
	}
}

// BuildProgram puts the module's main package pkg (its directory from the module's
// root: "recovery/internal/upperfilter") at bin, built as git-atlas is for the tests
// (Command): shared by the checkout's test binaries, static, and without the race
// detector whatever the tests run with (a race-built binary takes about 110 ms of CPU
// to start on a slow machine). For a helper process a test starts many times.
func BuildProgram(pkg, bin string) error { return buildShared(pkg, bin) }

// goBuild builds the module's program pkg at bin: with the person's go caches, not
// Pin's home, and CGO_ENABLED=0 as the README has it.
func goBuild(pkg, bin string) error {
	build := exec.Command("go", "build", "-o", bin, modulePath+"/"+pkg)
	build.Env = append(slices.Clip(startEnv), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %w\n%s", err, out)
	}
	return nil
}

// cacheDir is CacheDir's answer, read before Pin replaces HOME.
var cacheDir = func() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "git-atlas-test")
}()

// CacheDir is where the suites keep what outlives a test binary (git-atlas's shared
// build, the npm install of the TypeScript MCP client): git-atlas-test under the
// person's cache directory as it was before Pin replaced HOME, or "" when there is
// none. Its subdirectories are made by whoever needs them.
func CacheDir() string { return cacheDir }

// sharedBuild is the directory the test binaries of one module share git-atlas's
// build in: under CacheDir, one per checkout (named by a hash of the module's
// directory, so that two checkouts do not link over each other), made if missing. ""
// when there is no cache directory or the module's directory cannot be found from the
// working directory (a package's, where a test runs).
func sharedBuild() string {
	if cacheDir == "" {
		return ""
	}
	root, err := moduleRoot()
	if err != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(cacheDir, "build-"+hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ""
	}
	return dir
}

// moduleRoot is the directory of the go.mod above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fs.ErrNotExist
		}
		dir = parent
	}
}

// modulePath is the module git-atlas's command is built from: `go build` finds it
// from any package directory of the module, where a test runs.
const modulePath = "github.com/git-atlas/git-atlas"

// startEnv is the environment the test binary started with, before Pin replaced
// HOME: go finds its build and module caches from it.
var startEnv = os.Environ()

// command is the binary Command built.
var command struct {
	mu    sync.Mutex // held while one is built: the callers meanwhile wait for it
	built bool
	dir   string
	path  string
	err   error
}

// RemoveCommand removes the binary Command built, if it built one: TestMain calls it
// after the tests (Pin does). A Command after it builds the binary again (go test
// -count=N runs a test that removes it N times).
func RemoveCommand() {
	command.mu.Lock()
	defer command.mu.Unlock()
	if command.dir != "" {
		_ = os.RemoveAll(command.dir)
	}
	command.built, command.dir, command.path, command.err = false, "", "", nil
}

// PinnedEnv is the git environment every suite's git processes run in: no system
// config and no user config of the person's (HOME is home, which Home makes; no
// GIT_CONFIG_GLOBAL), fixed author and committer, and no variable of the person
// running the tests that git-atlas reads (ATLAS_SESSION, CI, NO_COLOR, atlas.remote
// through GIT_CONFIG_*).
func PinnedEnv(home string) map[string]string {
	return map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "A U Thor", "GIT_AUTHOR_EMAIL": "author@example.com",
		"GIT_COMMITTER_NAME": "C O Mitter", "GIT_COMMITTER_EMAIL": "committer@example.com",
		"ATLAS_SESSION": "", "CI": "", "NO_COLOR": "", "GIT_CONFIG_COUNT": "", "GIT_CONFIG_PARAMETERS": "", "GIT_CONFIG_GLOBAL": "",
		"GIT_DIR": "", "GIT_WORK_TREE": "", "GIT_INDEX_FILE": "", "GIT_ATLAS_NO_GOGIT": "",
	}
}

// GitConfig is the global git configuration of every home the suites make (Home): git
// starts no housekeeping of its own after a command. A `git commit` would start `git
// maintenance run --auto` and every push `git gc --auto` in the receiving repository,
// each a process or more that no test asks for and that a suite's few objects never
// need; the tests that are about packing and pruning run `git gc` or `git pack-refs`
// themselves.
const GitConfig = "[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n[receive]\n\tautoGC = false\n"

// Home makes dir, if it is missing, a home directory for the git processes of a test:
// its .gitconfig holds GitConfig. The file is written once, before any command runs,
// so that it is older than anything a test writes after it (the hooks' hint compares
// the global config's modification time with its own).
func Home(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ".gitconfig"), []byte(GitConfig), 0o644)
}

// Pin sets PinnedEnv for the whole test binary, once, in TestMain (before m.Run), with
// HOME in a new temporary directory it removes after: tests then need no t.Setenv of
// their own for git, and may run in parallel. It returns m.Run's code. The templates of
// CopyTemplate live in another temporary directory, removed after the tests too. It
// starts with testknob.NoRaceExitSleep, and runs the tests with
// testknob.ProcessBoundParallel's -parallel: the suites it pins start processes.
func Pin(m *testing.M) int {
	testknob.NoRaceExitSleep()
	home, err := os.MkdirTemp("", "atlas-home-")
	if err != nil {
		panic(err)
	}
	defer func() { _ = os.RemoveAll(home) }()
	if templates.dir, err = os.MkdirTemp("", "atlas-templates-"); err != nil {
		panic(err)
	}
	defer func() { _ = os.RemoveAll(templates.dir) }()
	if err := Home(home); err != nil {
		panic(err)
	}
	for k, v := range PinnedEnv(home) {
		if v == "" {
			_ = os.Unsetenv(k)
		} else {
			_ = os.Setenv(k, v)
		}
	}
	defer RemoveCommand()
	testknob.ProcessBoundParallel()
	return m.Run()
}

// Repo makes a repository with one empty commit on main, in t's temporary directory,
// and returns its path. It runs the real git through internal/git, in the environment
// the process has (Pin's, in a suite that pins it). Under Pin it is a copy of the one
// made first (CopyTemplate), which starts no process: the commit, dated when the
// template was made, is the same in every copy.
func Repo(t testing.TB) string {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "repo")
	templates.Lock()
	pinned := templates.dir != ""
	templates.Unlock()
	if pinned {
		CopyTemplate(t, repo, "Repo", makeRepo)
		return repo
	}
	if err := makeRepo(repo); err != nil {
		t.Fatal(err)
	}
	return repo
}

// makeRepo makes Repo's repository at dir.
func makeRepo(dir string) error {
	ctx := context.Background()
	if err := git.InitRepository(ctx, dir, nil); err != nil {
		return err
	}
	r, err := git.Open(ctx, dir)
	if err != nil {
		return err
	}
	return r.Worktree(dir).CommitEmpty(ctx, "init", nil)
}

// copyFile copies the regular file src, whose Lstat or Stat is info, to dst, with its
// permission bits and modification time.
func copyFile(dst, src string, info fs.FileInfo) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.WriteFile(dst, data, info.Mode().Perm()); err != nil {
		return err
	}
	if err := os.Chmod(dst, info.Mode().Perm()); err != nil { // WriteFile's mode is masked by umask
		return err
	}
	return os.Chtimes(dst, info.ModTime(), info.ModTime())
}

// CopyTree copies the directory src to dst, which must not exist: directories, regular
// files and symbolic links, with their permission bits and modification times (a
// fixture's checkout, whose mtimes a test may fingerprint). It starts no process: a
// suite builds a fixture once with git and copies it for each test, where making it
// again would cost a dozen git processes.
func CopyTree(dst, src string) error {
	type dirTime struct {
		path string
		perm fs.FileMode
		mod  time.Time
	}
	var dirs []dirTime // set last, deepest first: writing into a directory changes its mtime
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch mode := info.Mode(); {
		case mode.IsDir():
			if err := os.Mkdir(to, mode.Perm()|0o700); err != nil {
				return err
			}
			dirs = append(dirs, dirTime{to, mode.Perm(), info.ModTime()})
			return nil
		case mode&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case mode.IsRegular():
			return copyFile(to, p, info)
		default:
			return fmt.Errorf("copy %s: cannot copy a file of mode %v", p, mode)
		}
	})
	if err != nil {
		return err
	}
	for _, dir := range slices.Backward(dirs) {
		if err := os.Chmod(dir.path, dir.perm); err != nil {
			return err
		}
		if err := os.Chtimes(dir.path, dir.mod, dir.mod); err != nil {
			return err
		}
	}
	return nil
}

// Symlink makes a symbolic link name in dir pointing at target (which may not exist)
// and returns its path.
func Symlink(t testing.TB, dir, name, target string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	return p
}
