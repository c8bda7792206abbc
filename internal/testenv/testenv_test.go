package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCopyTree: the copy has every directory, file and link of the source, with the
// same contents, link targets, permission bits and modification times.
func TestCopyTree(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	old := time.Date(2020, 1, 2, 3, 4, 5, 6000, time.UTC)
	for _, d := range []string{"a/b", "empty"} {
		if err := os.MkdirAll(filepath.Join(src, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, perm := range map[string]os.FileMode{"a/b/run.sh": 0o755, "a/data.txt": 0o644, "top": 0o600} {
		if err := os.WriteFile(filepath.Join(src, name), []byte("content of "+name), perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(src, name), perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(filepath.Join(src, name), old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("b/run.sh", filepath.Join(src, "a", "link")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a/b", "a", "empty"} {
		if err := os.Chtimes(filepath.Join(src, d), old, old); err != nil {
			t.Fatal(err)
		}
	}
	dst := filepath.Join(t.TempDir(), "dst")
	if err := CopyTree(dst, src); err != nil {
		t.Fatal(err)
	}
	want, got := treeOf(t, src), treeOf(t, dst)
	if len(want) != 8 {
		t.Fatalf("the source tree has %d entries, want 8: %v", len(want), want)
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s: copied as %q, want %q", p, got[p], w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: in the copy only", p)
		}
	}
	if err := CopyTree(dst, src); err == nil {
		t.Error("CopyTree onto an existing directory succeeded")
	}
}

// treeOf describes every entry under root: mode, mtime (not of the root, nor of links),
// and content or link target.
func treeOf(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		v := info.Mode().String()
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			v += " -> " + target
		case info.Mode().IsRegular():
			data, _ := os.ReadFile(p)
			v += fmt.Sprintf(" %d %q", info.ModTime().UnixNano(), data)
		case rel != ".":
			v += fmt.Sprintf(" %d", info.ModTime().UnixNano())
		}
		m[rel] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestHomeStartsNoHousekeeping: in a home Home made, a commit starts no `git
// maintenance run --auto` and a push no `git gc --auto` in the receiving repository
// (GIT_TRACE lists every command git starts, in every git process of the push).
func TestHomeStartsNoHousekeeping(t *testing.T) {
	work := t.TempDir()
	home := filepath.Join(work, "home")
	if err := Home(home); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(work, "trace")
	pinned := PinnedEnv(home)
	env := []string{"GIT_TRACE=" + trace}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !pinnedKey(pinned, k) {
			env = append(env, kv)
		}
	}
	for k, v := range pinned {
		if v != "" {
			env = append(env, k+"="+v)
		}
	}
	repo, bare := filepath.Join(work, "repo"), filepath.Join(work, "bare.git")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main", repo}, {"init", "-q", "--bare", bare},
		{"-C", repo, "commit", "-q", "--allow-empty", "-m", "first"},
		{"-C", repo, "push", "-q", bare, "main"},
	} {
		if _, err := GitEnvErr("", env, "", args...); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "receive-pack") {
		t.Fatalf("the trace shows no push:\n%s", data)
	}
	for _, housekeeping := range []string{"maintenance run", "gc --auto"} {
		if strings.Contains(string(data), housekeeping) {
			t.Errorf("git started `git %s`:\n%s", housekeeping, data)
		}
	}
}

func pinnedKey(pinned map[string]string, k string) bool {
	_, ok := pinned[k]
	return ok
}

// TestGitRun: GitRun returns git's output and error apart, GitErr puts the error's
// text in its error, Git trims the output.
func TestGitRun(t *testing.T) {
	dir := t.TempDir()
	if got := Git(t, dir, "", "init", "-q", "-b", "main", "."); got != "" {
		t.Errorf("init printed %q", got)
	}
	if got := Git(t, dir, "hello\n", "hash-object", "--stdin"); got != "ce013625030ba8dba906f756967f9e9ca394464a" {
		t.Errorf("hash-object of hello: %q", got)
	}
	out, stderr, err := GitRun(dir, nil, "", "rev-parse", "--verify", "no-such-ref")
	if err == nil || out != "" || !strings.Contains(stderr, "fatal") {
		t.Errorf("rev-parse of a missing ref: %q, %q, %v", out, stderr, err)
	}
	if _, err := GitErr(dir, "", "rev-parse", "--verify", "no-such-ref"); err == nil || !strings.Contains(err.Error(), "fatal") {
		t.Errorf("GitErr's error does not carry git's: %v", err)
	}
}

// pinnedTemplates gives t the environment Pin sets, in a home of its own, and
// templates of its own, both restored after it.
func pinnedTemplates(t *testing.T) {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	if err := Home(home); err != nil {
		t.Fatal(err)
	}
	for k, v := range PinnedEnv(home) {
		t.Setenv(k, v) // restored after the test
		if v == "" {
			_ = os.Unsetenv(k)
		}
	}
	saved, savedBuilt := templates.dir, templates.built
	templates.dir, templates.built = t.TempDir(), nil
	t.Cleanup(func() { templates.dir, templates.built = saved, savedBuilt })
}

// TestCopyTemplate: the template is built once for every copy; each copy is a
// repository of its own with the template's commit, and its index is refreshed, so
// that the first git command in it has nothing to rewrite (a `git status` leaves the
// index's bytes as they are).
func TestCopyTemplate(t *testing.T) {
	pinnedTemplates(t)
	builds := 0
	build := func(dir string) error {
		builds++
		if err := os.WriteFile(filepath.Join(dir, "README"), []byte("hello\n"), 0o644); err != nil {
			return err
		}
		for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "first"}} {
			if _, err := GitErr(dir, "", args...); err != nil {
				return err
			}
		}
		return nil
	}
	var heads []string
	for i := range 2 {
		dst := filepath.Join(t.TempDir(), fmt.Sprintf("copy%d", i))
		CopyTemplate(t, dst, "TestCopyTemplate", build)
		index := filepath.Join(dst, ".git", "index")
		before, err := os.ReadFile(index)
		if err != nil {
			t.Fatal(err)
		}
		if st := Git(t, dst, "", "status", "--porcelain"); st != "" {
			t.Errorf("copy %d is not clean: %q", i, st)
		}
		if after, err := os.ReadFile(index); err != nil || string(after) != string(before) {
			t.Errorf("copy %d: git status rewrote the index (%v): its stat data was not refreshed", i, err)
		}
		heads = append(heads, Git(t, dst, "", "rev-parse", "HEAD"))
		if err := os.WriteFile(filepath.Join(dst, "README"), []byte("changed\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if builds != 1 || heads[0] != heads[1] || heads[0] == "" {
		t.Errorf("%d builds, heads %q: want one build and the same commit in both copies", builds, heads)
	}
}

// TestRepoIsACopyUnderPin: under Pin, Repo copies the repository it made first (no
// git process for the others): a repository of one empty commit on main, and no index
// to refresh.
func TestRepoIsACopyUnderPin(t *testing.T) {
	pinnedTemplates(t)
	a, b := Repo(t), Repo(t)
	if templates.built["Repo"] == nil {
		t.Fatal("Repo made no template")
	}
	for _, dir := range []string{a, b} {
		if got := Git(t, dir, "", "log", "--format=%s", "main"); got != "init" {
			t.Errorf("%s: log of main %q, want one commit, init", dir, got)
		}
	}
	if Git(t, a, "", "rev-parse", "HEAD") != Git(t, b, "", "rev-parse", "HEAD") {
		t.Error("the copies have different commits")
	}
}

// TestCommandBuildShared: the test binaries of a checkout share one build of
// git-atlas, in sharedBuild's directory (go links it again only when something it is
// built from changed), and every suite runs its own copy of it, never the shared
// file, which a later build may replace.
func TestCommandBuildShared(t *testing.T) {
	dir := sharedBuild()
	if dir == "" {
		t.Skip("no cache directory: every test binary builds git-atlas alone")
	}
	RemoveCommand()
	bin := Command(t)
	defer RemoveCommand()
	shared, err := os.ReadFile(filepath.Join(dir, "git-atlas"))
	if err != nil {
		t.Fatalf("no shared build: %v", err)
	}
	own, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(own, shared) {
		t.Errorf("%s is not the shared build", bin)
	}
	a, _ := os.Stat(bin)
	b, _ := os.Stat(filepath.Join(dir, "git-atlas"))
	if os.SameFile(a, b) {
		t.Errorf("%s is the shared file itself, not a copy", bin)
	}
	if out, err := exec.Command(bin, "--version").CombinedOutput(); err != nil {
		t.Fatalf("%s --version: %v: %s", bin, err, out)
	}
}

// TestPruneBuilds: a checkout's shared build unused for buildIdle goes, unless a
// test binary holds its lock now; one used since stays.
func TestPruneBuilds(t *testing.T) {
	root := t.TempDir()
	old := time.Now().Add(-2 * buildIdle)
	mk := func(name string, used time.Time) string {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"lock", "git-atlas"} {
			if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(filepath.Join(dir, "lock"), used, used); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	idle, recent, held := mk("build-idle", old), mk("build-recent", time.Now()), mk("build-held", old)
	other := mk("npm-cache", old)
	unlock, err := lockDir(held)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip("no flock: builds are not shared, nothing is pruned")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	pruneBuilds(root, time.Now().Add(-buildIdle))
	for dir, want := range map[string]bool{idle: false, recent: true, held: true, other: true} {
		if _, err := os.Stat(dir); (err == nil) != want {
			t.Errorf("%s: exists = %v, want %v", filepath.Base(dir), err == nil, want)
		}
	}
}

// TestCommandBuiltOnce: Command builds git-atlas once for the test binary (every
// caller gets the same file, which runs) and RemoveCommand removes it.
func TestCommandBuiltOnce(t *testing.T) {
	bin := Command(t)
	if again := Command(t); again != bin {
		t.Fatalf("Command built twice: %s, then %s", bin, again)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "git-atlas") {
		t.Fatalf("%s --version: %v: %s", bin, err, out)
	}
	RemoveCommand()
	if _, err := os.Stat(bin); !os.IsNotExist(err) {
		t.Errorf("RemoveCommand left %s: %v", bin, err)
	}
	// Removed, it is built again when asked for (-count=2 runs this test twice).
	again := Command(t)
	if out, err := exec.Command(again, "--version").CombinedOutput(); err != nil {
		t.Fatalf("after RemoveCommand: %s --version: %v: %s", again, err, out)
	}
	RemoveCommand()
}
