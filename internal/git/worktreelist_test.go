package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// porcelainZ prints list as `git worktree list --porcelain -z` does.
func porcelainZ(list []WorktreeInfo) string {
	var b strings.Builder
	for _, w := range list {
		b.WriteString("worktree " + w.Path + "\x00")
		if w.Bare {
			b.WriteString("bare\x00")
		} else {
			b.WriteString("HEAD " + w.Head + "\x00")
			if w.Detached {
				b.WriteString("detached\x00")
			} else if w.Branch != "" {
				b.WriteString("branch " + w.Branch + "\x00")
			}
		}
		if w.Locked {
			b.WriteString("locked")
			if w.LockReason != "" {
				b.WriteString(" " + w.LockReason)
			}
			b.WriteString("\x00")
		}
		if w.Prunable {
			b.WriteString("prunable " + w.PrunableReason + "\x00")
		}
		b.WriteString("\x00")
	}
	return b.String()
}

// agreeWithGit checks that the list read in process is, byte for byte, what git
// prints for the repository.
func agreeWithGit(t *testing.T, r *Repository, state string) {
	t.Helper()
	want, err := runGit(r.CommonDir, nil, "", "worktree", "list", "--porcelain", "-z")
	if err != nil {
		t.Fatal(err)
	}
	list, ok := r.listWorktreesLocal()
	if !ok {
		t.Fatalf("%s: the list was not read in process", state)
	}
	if got := porcelainZ(list); got != want {
		t.Errorf("%s: in process\n%q\ngit\n%q", state, got, want)
	}
}

// The worktree list read in process is what git prints, in every state a
// repository's worktrees can be in that it reads: the main worktree on a branch (a
// packed one), detached, on a branch yet to be born, bare; linked worktrees detached
// or on a branch (packed, loose over packed, unborn), locked with a reason, with one
// git trims, without one, prunable (directory gone), locked and gone (not prunable),
// ids with a suffix (name, name1), a path with a space, a half-made one (null id,
// locked "initializing") under an id with odd characters, a separate git dir, and the entries git lists nothing for (a stray file, an
// administrative directory without a gitdir file or with an empty one).
func TestWorktreeListAgreesWithGit(t *testing.T) {
	t.Parallel()
	r, g := testRepo(t, kinds[0])
	base := t.TempDir()
	at := func(name string) string { return filepath.Join(base, name) }
	g("", "branch", "packed")
	g("", "pack-refs", "--all")
	g("", "worktree", "add", "-q", "--detach", "--lock", "--reason", "agent run", at("a"), "HEAD")
	g("", "worktree", "add", "-q", "-b", "feat", at("b"))
	g("", "worktree", "add", "-q", "--detach", at("c"))
	g("", "worktree", "lock", at("c"))
	g("", "worktree", "add", "-q", "--detach", at("d"))
	g("", "worktree", "add", "-q", "--detach", "--lock", at("e"))
	g("", "worktree", "add", "-q", "--detach", at("x/name"))
	g("", "worktree", "add", "-q", "--detach", at("y/name"))
	g("", "worktree", "add", "-q", at("p"), "packed")
	g("", "worktree", "add", "-q", "--detach", at("u"))
	g("", "worktree", "add", "-q", "--detach", at("with space"))
	g("", "worktree", "add", "-q", "--detach", at("half"))
	mustGit(t, at("p"), nil, "", "commit", "-q", "--allow-empty", "-m", "loose over packed")
	mustGit(t, at("u"), nil, "", "symbolic-ref", "HEAD", "refs/heads/unborn")
	for _, gone := range []string{"d", "e"} {
		if err := os.RemoveAll(at(gone)); err != nil {
			t.Fatal(err)
		}
	}
	admin := filepath.Join(r.CommonDir, "worktrees")
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(admin, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g("", "worktree", "lock", "--reason", "  padded reason \t", at("with space"))
	write("half/HEAD", r.NullID()+"\n")
	write("half/locked", "initializing")
	if err := os.Rename(filepath.Join(admin, "half"), filepath.Join(admin, "odd id\t-")); err != nil {
		t.Fatal(err)
	}
	write("stray", "not a worktree\n")
	write("nogitdir/HEAD", "ref: refs/heads/main\n")
	write("emptygitdir/gitdir", "")
	if _, err := os.Stat(filepath.Join(admin, "name1")); err != nil {
		t.Fatalf("no id with a suffix: %v", err)
	}
	agreeWithGit(t, r, "main on a packed branch")

	g("", "update-ref", "--no-deref", "HEAD", g("", "rev-parse", "HEAD"))
	agreeWithGit(t, r, "main detached")
	g("", "symbolic-ref", "HEAD", "refs/heads/newborn")
	agreeWithGit(t, r, "main on an unborn branch")

	bare := at("bare.git")
	mustGit(t, base, nil, "", "init", "-q", "--bare", "-b", "main", bare)
	mustGit(t, bare, nil, "", "fetch", "-q", r.CommonDir, "main:main")
	mustGit(t, bare, nil, "", "worktree", "add", "-q", "--detach", at("bare-detached"), "main")
	mustGit(t, bare, nil, "", "worktree", "add", "-q", "-b", "side", at("bare-side"), "main")
	rb, err := Open(context.Background(), bare)
	if err != nil {
		t.Fatal(err)
	}
	agreeWithGit(t, rb, "bare common repository")

	sep := at("sep-checkout")
	mustGit(t, base, nil, "", "init", "-q", "-b", "main", "--separate-git-dir", at("sep.git"), sep)
	mustGit(t, sep, nil, "", "commit", "-q", "--allow-empty", "-m", "first")
	mustGit(t, sep, nil, "", "worktree", "add", "-q", "--detach", at("sep-linked"))
	rs, err := Open(context.Background(), sep)
	if err != nil {
		t.Fatal(err)
	}
	agreeWithGit(t, rs, "a separate git dir")
}

// Everything the in-process read is not certain of is git's to answer: the read
// declines (ok false) and ListWorktrees starts git, whose answer it returns. Where
// the read is certain, ListWorktrees starts no process. Not parallel: it counts the
// git processes this package starts, and sets GIT_CONFIG_PARAMETERS.
func TestWorktreeListFallsBackToGit(t *testing.T) {
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	base := t.TempDir()
	linked := filepath.Join(base, "w")
	g("", "worktree", "add", "-q", "--detach", linked)
	admin := filepath.Join(r.CommonDir, "worktrees", "w")
	want, err := runGit(r.CommonDir, nil, "", "worktree", "list", "--porcelain", "-z")
	if err != nil {
		t.Fatal(err)
	}
	before := Started()
	list, err := r.ListWorktrees(ctx)
	if err != nil || porcelainZ(list) != want {
		t.Fatalf("ListWorktrees = %q, %v; want %q", porcelainZ(list), err, want)
	}
	if n := Started() - before; n != 0 {
		t.Fatalf("ListWorktrees started %d processes where the list is certain", n)
	}

	// replace sets the file name (in the common dir) to data and returns what puts it
	// back; data nil removes it.
	replace := func(name string, data []byte) func() {
		t.Helper()
		p := filepath.Join(r.CommonDir, filepath.FromSlash(name))
		old, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if data == nil {
			err = os.Remove(p)
		} else {
			err = os.WriteFile(p, data, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
		return func() {
			if old == nil {
				_ = os.Remove(p)
				return
			}
			if err := os.WriteFile(p, old, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	mkdir := func(name string) func() {
		t.Helper()
		p := filepath.Join(r.CommonDir, filepath.FromSlash(name))
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return func() { _ = os.Remove(p) }
	}
	head := g("", "rev-parse", "HEAD")
	config, err := os.ReadFile(filepath.Join(r.CommonDir, "config"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		set  func() func()
	}{
		{"objects through git", func() func() { r.UseGitForObjects(); return func() { r.objects = newObjectStore(r, true) } }},
		{"GIT_CONFIG_PARAMETERS", func() func() {
			t.Setenv("GIT_CONFIG_PARAMETERS", "'core.bare'='false'")
			return func() { _ = os.Unsetenv("GIT_CONFIG_PARAMETERS") }
		}},
		{"reftable", func() func() { return mkdir("reftable") }},
		{"an include", func() func() { return replace("config", append(config, "[include]\n\tpath = other\n"...)) }},
		{"core.worktree", func() func() { return replace("config", append(config, "[core]\n\tworktree = /elsewhere\n"...)) }},
		{"core.bare twice", func() func() { return replace("config", append(config, "[core]\n\tbare = false\n"...)) }},
		{"core.bare unset", func() func() { return replace("config", []byte("[core]\n\trepositoryformatversion = 0\n")) }},
		{"core.bare yes", func() func() { return replace("config", []byte("[core]\n\tbare = yes\n")) }},
		{"main HEAD unparsed", func() func() { return replace("HEAD", []byte("ref: refs/heads/main")) }},
		{"main HEAD outside refs/heads", func() func() { return replace("HEAD", []byte("ref: refs/remotes/origin/main\n")) }},
		{"HEAD garbage", func() func() { return replace("worktrees/w/HEAD", []byte("garbage\n")) }},
		{"HEAD upper case", func() func() { return replace("worktrees/w/HEAD", []byte(strings.ToUpper(head)+"\n")) }},
		{"HEAD trailing text", func() func() { return replace("worktrees/w/HEAD", []byte(head+" x\n")) }},
		{"HEAD missing", func() func() { return replace("worktrees/w/HEAD", nil) }},
		{"HEAD a symref to a symref", func() func() {
			undo := replace("refs/heads/alias", []byte("ref: refs/heads/main\n"))
			undo2 := replace("worktrees/w/HEAD", []byte("ref: refs/heads/alias\n"))
			return func() { undo2(); undo() }
		}},
		{"gitdir relative", func() func() { return replace("worktrees/w/gitdir", []byte("../w/.git\n")) }},
		{"gitdir trailing space", func() func() { return replace("worktrees/w/gitdir", []byte(linked+"/.git \n")) }},
		{"gitdir CRLF", func() func() { return replace("worktrees/w/gitdir", []byte(linked+"/.git\r\n")) }},
		{"gitdir not a .git file", func() func() { return replace("worktrees/w/gitdir", []byte(linked+"\n")) }},
		{"gitdir a directory", func() func() {
			undo := replace("worktrees/w/gitdir", nil)
			undo2 := mkdir("worktrees/w/gitdir")
			return func() { undo2(); undo() }
		}},
		{"commondir empty", func() func() { return replace("worktrees/w/commondir", []byte{}) }},
		{"commondir elsewhere", func() func() { return replace("worktrees/w/commondir", []byte("/elsewhere\n")) }},
		{"locked a directory", func() func() { return mkdir("worktrees/w/locked") }},
		{"lock reason with a NUL", func() func() { return replace("worktrees/w/locked", []byte("a\x00b")) }},
		{"an administrative symlink", func() func() {
			p := filepath.Join(r.CommonDir, "worktrees", "link")
			if err := os.Symlink(admin, p); err != nil {
				t.Fatal(err)
			}
			return func() { _ = os.Remove(p) }
		}},
		{"an order case folding changes", func() func() {
			g("", "worktree", "add", "-q", "--detach", filepath.Join(base, "AZ"))
			g("", "worktree", "add", "-q", "--detach", filepath.Join(base, "A_"))
			return func() {
				g("", "worktree", "remove", filepath.Join(base, "AZ"))
				g("", "worktree", "remove", filepath.Join(base, "A_"))
			}
		}},
		{"two worktrees at one path", func() func() {
			g("", "worktree", "add", "-q", "--detach", filepath.Join(base, "twin"))
			gitdir, err := os.ReadFile(filepath.Join(r.CommonDir, "worktrees", "twin", "gitdir"))
			if err != nil {
				t.Fatal(err)
			}
			undo := replace("worktrees/w/gitdir", gitdir)
			return func() { undo(); g("", "worktree", "remove", filepath.Join(base, "twin")) }
		}},
	}
	for _, c := range cases {
		undo := c.set()
		if _, ok := r.listWorktreesLocal(); ok {
			t.Errorf("%s: read in process", c.name)
		}
		before := Started()
		_, _ = r.ListWorktrees(ctx)
		if Started() == before {
			t.Errorf("%s: git was not asked", c.name)
		}
		undo()
		if _, ok := r.listWorktreesLocal(); !ok {
			t.Fatalf("after %s: the list is no longer read in process", c.name)
		}
	}

	// sha256 repositories are git's to list (their refs are not go-git's to read).
	r256, g256 := testRepo(t, kinds[2])
	g256("", "worktree", "add", "-q", "--detach", filepath.Join(base, "w256"))
	if _, ok := r256.listWorktreesLocal(); ok {
		t.Error("sha256: read in process")
	}
	want, err = runGit(r256.CommonDir, nil, "", "worktree", "list", "--porcelain", "-z")
	if err != nil {
		t.Fatal(err)
	}
	if list, err := r256.ListWorktrees(ctx); err != nil || porcelainZ(list) != want {
		t.Errorf("sha256: ListWorktrees = %q, %v; want %q", porcelainZ(list), err, want)
	}
}

// BenchmarkListWorktrees: the list read in process against `git worktree list`, with
// 1 and 50 linked worktrees. Run it by hand (go test -run '^$' -bench ListWorktrees).
func BenchmarkListWorktrees(b *testing.B) {
	for _, n := range []int{1, 50} {
		dir := b.TempDir()
		mustGit(b, dir, nil, "", "init", "-q", "-b", "main")
		mustGit(b, dir, nil, "", "commit", "-q", "--allow-empty", "-m", "first")
		for i := range n {
			mustGit(b, dir, nil, "", "worktree", "add", "-q", "--detach", filepath.Join(b.TempDir(), fmt.Sprint("w", i)))
		}
		r, err := Open(context.Background(), dir)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprint(n, "/in-process"), func(b *testing.B) {
			for b.Loop() {
				if list, ok := r.listWorktreesLocal(); !ok || len(list) != n+1 {
					b.Fatalf("listed %d, %v", len(list), ok)
				}
			}
		})
		b.Run(fmt.Sprint(n, "/git"), func(b *testing.B) {
			for b.Loop() {
				out, err := r.runWorktree(context.Background(), cmd{dir: r.CommonDir, args: []string{"worktree", "list", "--porcelain", "-z"}})
				if err != nil || len(parseWorktrees(string(out))) != n+1 {
					b.Fatal(err)
				}
			}
		})
	}
}
