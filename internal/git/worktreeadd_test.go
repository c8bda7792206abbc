package git

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/confine"
)

// twinRepos makes the same repositories twice, under base/git and base/local, with
// the same commits (dates pinned): a plain one, one with a separate git dir, and a
// bare one. It returns each twin's repositories by name.
func twinRepos(t *testing.T, base string) map[string][2]*Repository {
	t.Helper()
	env := append(os.Environ(), "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
	out := map[string][2]*Repository{}
	for i, twin := range []string{"git", "local"} {
		dir := filepath.Join(base, twin)
		g := func(dir string, args ...string) { mustGit(t, dir, env, "", args...) }
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		g(dir, "init", "-q", "-b", "main", "plain")
		plain := filepath.Join(dir, "plain")
		if err := os.WriteFile(filepath.Join(plain, "f.txt"), []byte("one\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		g(plain, "add", "f.txt")
		g(plain, "commit", "-q", "-m", "first")
		g(dir, "init", "-q", "-b", "main", "--separate-git-dir", filepath.Join(dir, "sep.git"), "sep")
		g(filepath.Join(dir, "sep"), "fetch", "-q", plain, "main:side")
		g(dir, "init", "-q", "--bare", "-b", "main", "bare.git")
		g(filepath.Join(dir, "bare.git"), "fetch", "-q", plain, "main:main")
		for _, name := range []string{"plain", "sep", "bare.git"} {
			r, err := Open(context.Background(), filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			pair := out[name]
			pair[i] = r
			out[name] = pair
		}
	}
	return out
}

// adminPicture is every file of a worktree's registration and of its directory's .git
// file: name, mode and content, the twin's base directory replaced and the reflog's
// time (not its zone) blanked. The index is left to indexPicture.
func adminPicture(t *testing.T, r *Repository, wt, base string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(wt, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	admin := strings.TrimSpace(strings.TrimPrefix(string(data), "gitdir:"))
	var lines []string
	fi, err := os.Stat(filepath.Join(wt, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	lines = append(lines, fmt.Sprintf(".git (worktree) %v %q", fi.Mode(), data))
	when := regexp.MustCompile(`> [0-9]+ ([-+][0-9]{4})([\t\n])`)
	err = filepath.WalkDir(admin, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(admin, p)
		if d.IsDir() || rel == "index" {
			lines = append(lines, fmt.Sprintf("%s %v", rel, info.Mode()))
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b = when.ReplaceAll(b, []byte("> TIME $1$2"))
		lines = append(lines, fmt.Sprintf("%s %v %q", rel, info.Mode(), b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.ReplaceAll(strings.Join(lines, "\n"), base, "BASE")
}

// indexPicture is the worktree's index as ls-files shows it, with every entry's stat
// data checked filled (a checkout's, so that the first status is cheap).
func indexPicture(t *testing.T, wt string) string {
	t.Helper()
	debug := mustGit(t, wt, nil, "", "ls-files", "-s", "--debug")
	if strings.Contains(debug, "mtime: 0:0") || strings.Contains(debug, "size: 0\t") {
		t.Errorf("index of %s has entries without stat data:\n%s", wt, debug)
	}
	return mustGit(t, wt, nil, "", "ls-files", "-s")
}

// The in-process registration leaves exactly what `git worktree add` leaves: for
// each case one worktree is added by git in one twin and by AddWorktree (or
// AddWorktreeNoCheckout) in the other, which must start one git process (the
// checkout) or none, and then every file of both registrations, the worktree list,
// a clean status, the index and fsck agree. Not parallel: it counts the processes
// this package starts.
func TestAddWorktreeAgreesWithGit(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	repos := twinRepos(t, base)
	cases := []struct {
		name, repo, path, reason string
		noCheckout               bool
	}{
		{name: "plain, lock reason", repo: "plain", path: "wt/n1", reason: "atlas run r node n1"},
		{name: "same base name: id with a suffix", repo: "plain", path: "other/n1", reason: "atlas run r node n1"},
		{name: "no lock reason", repo: "plain", path: "wt/free"},
		{name: "no checkout", repo: "plain", path: "wt/bare-files", noCheckout: true},
		{name: "separate git dir", repo: "sep", path: "wt/s.1", reason: "r"},
		{name: "bare common repository", repo: "bare.git", path: "wt/b_2", reason: "r"},
	}
	for _, c := range cases {
		pair := repos[c.repo]
		rev := "main"
		if c.repo == "sep" {
			rev = "side"
		}
		commit := mustOID(t, mustGit(t, pair[0].CommonDir, nil, "", "rev-parse", rev))
		viaGit := filepath.Join(base, "git", filepath.FromSlash(c.path))
		args := append(append([]string{}, globalArgs...), "worktree", "add", "--quiet", "--detach")
		switch {
		case c.noCheckout:
			args = append(args, "--no-checkout")
		case c.reason != "":
			args = append(args, "--lock", "--reason", c.reason)
		}
		mustGit(t, pair[0].CommonDir, nil, "", append(args, "--end-of-options", viaGit, commit.String())...)

		local := filepath.Join(base, "local", filepath.FromSlash(c.path))
		_ = pair[1].configIn(ctx, pair[1].CommonDir) // read once per command, outside the count
		before, adds := Started(), localAdds.Load()
		var err error
		if c.noCheckout {
			err = pair[1].AddWorktreeNoCheckout(ctx, local, commit)
		} else {
			err = pair[1].AddWorktree(ctx, local, commit, c.reason, nil)
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := int64(1)
		if c.noCheckout {
			want = 0
		}
		if localAdds.Load() != adds+1 {
			t.Errorf("%s: not registered in process", c.name)
		}
		if n := Started() - before; n != want {
			t.Errorf("%s: started %d git processes, want %d (the checkout)", c.name, n, want)
		}

		if g, l := adminPicture(t, pair[0], viaGit, filepath.Join(base, "git")), adminPicture(t, pair[1], local, filepath.Join(base, "local")); g != l {
			t.Errorf("%s: registrations differ\ngit:\n%s\nlocal:\n%s", c.name, g, l)
		}
		list := func(r *Repository, twin string) string {
			out := mustGit(t, r.CommonDir, nil, "", "worktree", "list", "--porcelain")
			return strings.ReplaceAll(out, filepath.Join(base, twin), "BASE")
		}
		if g, l := list(pair[0], "git"), list(pair[1], "local"); g != l {
			t.Errorf("%s: worktree lists differ\ngit:\n%s\nlocal:\n%s", c.name, g, l)
		}
		if !c.noCheckout {
			if g, l := indexPicture(t, viaGit), indexPicture(t, local); g != l {
				t.Errorf("%s: indexes differ\ngit:\n%s\nlocal:\n%s", c.name, g, l)
			}
			for _, wt := range []string{viaGit, local} {
				if st := mustGit(t, wt, nil, "", "status", "--porcelain"); st != "" {
					t.Errorf("%s: %s not clean:\n%s", c.name, wt, st)
				}
			}
		}
		if !c.noCheckout {
			// A worktree of a bare repository is git's to attach (localGitDir).
			attachBoth(t, pair, viaGit, local, c.name, c.repo != "bare.git")
			if g, l := adminPicture(t, pair[0], viaGit, filepath.Join(base, "git")), adminPicture(t, pair[1], local, filepath.Join(base, "local")); g != l {
				t.Errorf("%s: attached, registrations differ\ngit:\n%s\nlocal:\n%s", c.name, g, l)
			}
			if g, l := list(pair[0], "git"), list(pair[1], "local"); g != l {
				t.Errorf("%s: attached, worktree lists differ\ngit:\n%s\nlocal:\n%s", c.name, g, l)
			}
		}
		for _, r := range pair {
			mustGit(t, r.CommonDir, nil, "", "fsck", "--no-progress")
		}
	}
}

// attachBoth makes a branch at each twin worktree's HEAD and attaches the worktree to
// it: `git symbolic-ref` in the git twin, AttachBranch in the local one, which must
// attach in process and start no git process when inProcess is set.
func attachBoth(t *testing.T, pair [2]*Repository, viaGit, local, name string, inProcess bool) {
	t.Helper()
	ctx := context.Background()
	branch := "refs/heads/atlas/r/node/" + filepath.Base(local)
	msg := "git-atlas: attach " + strings.TrimPrefix(branch, "refs/heads/")
	for i, wt := range []string{viaGit, local} {
		head := strings.TrimSpace(mustGit(t, wt, nil, "", "rev-parse", "HEAD"))
		mustGit(t, pair[i].CommonDir, nil, "", "update-ref", branch, head)
	}
	mustGit(t, viaGit, nil, "", append(append([]string{}, globalArgs...), "symbolic-ref", "-m", msg, "--end-of-options", "HEAD", branch)...)
	m, err := pair[1].Managed(local, []confine.Root{mustRoot(t, filepath.Dir(local))}, "")
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	attach := func(branch, msg string) {
		t.Helper()
		before, attaches := Started(), localAttaches.Load()
		if err := m.AttachBranch(ctx, branch, msg); err != nil {
			t.Fatalf("%s: AttachBranch: %v", name, err)
		}
		if !inProcess {
			return
		}
		if localAttaches.Load() != attaches+1 {
			t.Errorf("%s: not attached in process", name)
		}
		if n := Started() - before; n != 0 {
			t.Errorf("%s: AttachBranch started %d git processes, want none", name, n)
		}
	}
	attach(branch, msg)
	// Attached again, from a branch (a resume does it): git's reflog line has the
	// branch's tip as the old value. Then to a second branch at another commit.
	mustGit(t, viaGit, nil, "", append(append([]string{}, globalArgs...), "symbolic-ref", "-m", msg+" again", "--end-of-options", "HEAD", branch)...)
	attach(branch, msg+" again")
	other := branch + "-other"
	for i, wt := range []string{viaGit, local} {
		tree := strings.TrimSpace(mustGit(t, wt, nil, "", "rev-parse", "HEAD^{tree}"))
		env := append(os.Environ(), "GIT_AUTHOR_DATE=2026-01-02T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-02T00:00:00Z")
		next := strings.TrimSpace(mustGit(t, wt, env, "", "commit-tree", "-p", "HEAD", "-m", "next", tree))
		mustGit(t, pair[i].CommonDir, nil, "", "update-ref", other, next)
	}
	mustGit(t, viaGit, nil, "", append(append([]string{}, globalArgs...), "symbolic-ref", "-m", msg+" other", "--end-of-options", "HEAD", other)...)
	attach(other, msg+" other")
}

// Each condition the in-process registration is not certain of leaves the add to
// git: `git worktree add` runs (processes counted) and the worktree is made. Not
// parallel: it counts processes and sets environment variables.
func TestAddWorktreeFallsBackToGit(t *testing.T) {
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	base := t.TempDir()
	commit := mustOID(t, g("", "rev-parse", "HEAD"))
	config := filepath.Join(r.CommonDir, "config")
	saved, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	cfg := func(args ...string) func() {
		return func() {
			g("", append([]string{"config"}, args...)...)
			r.ReloadConfig()
		}
	}
	restore := func() {
		if err := os.WriteFile(config, saved, 0o644); err != nil {
			t.Fatal(err)
		}
		r.ReloadConfig()
	}
	cases := []struct {
		name       string
		path       string // under base
		set, reset func()
	}{
		{name: "a base name git sanitises", path: "a:b"},
		{name: "a base name starting with a dot", path: ".hidden"},
		{name: "a path outside ASCII", path: "caf\u00e9"},
		{name: "a file where the worktree goes", path: "file-there",
			set: func() { _ = os.WriteFile(filepath.Join(base, "file-there"), nil, 0o644) }},
		{name: "git -c in the environment", path: "env-c",
			set:   func() { t.Setenv("GIT_CONFIG_PARAMETERS", "'core.x=1'") },
			reset: func() { t.Setenv("GIT_CONFIG_PARAMETERS", "") }},
		{name: "GIT_CONFIG_COUNT", path: "env-count",
			set: func() { t.Setenv("GIT_CONFIG_COUNT", "0") }, reset: func() { t.Setenv("GIT_CONFIG_COUNT", "") }},
		{name: "core.sparseCheckout", path: "sparse", set: cfg("core.sparseCheckout", "false"), reset: restore},
		{name: "core.sharedRepository", path: "shared", set: cfg("core.sharedRepository", "umask"), reset: restore},
		{name: "an include", path: "include", set: cfg("include.path", "/nonexistent"), reset: restore},
		{name: "an extension", path: "ext", set: cfg("extensions.noop", "x"), reset: restore},
		{name: "a committer date in another form", path: "date",
			set: func() { t.Setenv("GIT_COMMITTER_DATE", "@1767225600 +0100") }, reset: func() { t.Setenv("GIT_COMMITTER_DATE", "") }},
		{name: "a committer name git takes from the account", path: "noname",
			set: func() { t.Setenv("GIT_COMMITTER_NAME", "") }, reset: func() { t.Setenv("GIT_COMMITTER_NAME", "C O Mitter") }},
		{name: "info/sparse-checkout", path: "sparsefile",
			set:   func() { _ = WriteFile(filepath.Join(r.CommonDir, "info", "sparse-checkout"), []byte("/*\n"), 0o644) },
			reset: func() { _ = os.Remove(filepath.Join(r.CommonDir, "info", "sparse-checkout")) }},
	}
	for _, c := range cases {
		if c.set != nil {
			c.set()
		}
		path := filepath.Join(base, c.path)
		if c.name == "a file where the worktree goes" {
			before := Started()
			if err := r.AddWorktree(ctx, path, commit, "r", nil); err == nil {
				t.Errorf("%s: added over a file", c.name)
			}
			if Started()-before == 0 {
				t.Errorf("%s: git was not asked", c.name)
			}
			continue
		}
		_ = r.configIn(ctx, r.CommonDir) // the configuration is read outside the count
		before, adds := Started(), localAdds.Load()
		if err := r.AddWorktree(ctx, path, commit, "r", nil); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if n := Started() - before; n < 1 || localAdds.Load() != adds || !hasWorktreeAdd(t, r, path) {
			t.Errorf("%s: started %d processes", c.name, n)
		}
		if _, local := r.localAddPlan(ctx, filepath.Join(base, c.path+"-again"), commit); local {
			t.Errorf("%s: the local registration would be taken", c.name)
		}
		if c.reset != nil {
			c.reset()
		}
	}
	// And with every condition back as it was, the local registration is taken.
	if _, local := r.localAddPlan(ctx, filepath.Join(base, "fine"), commit); !local {
		t.Error("the local registration is not taken for a plain repository")
	}
}

// hasWorktreeAdd reports whether path is listed as a worktree of r by git.
func hasWorktreeAdd(t *testing.T, r *Repository, path string) bool {
	out := mustGit(t, r.CommonDir, nil, "", "worktree", "list", "--porcelain")
	return strings.Contains(out, "worktree "+path+"\n")
}

func TestWithoutCrud(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		" .C O <x> Mitter.": "C O x Mitter",
		"plain":             "plain",
		"a\nb":              "ab",
		"'\"quoted\"'":      "quoted",
		";;":                "",
	} {
		if got := withoutCrud(in); got != want {
			t.Errorf("withoutCrud(%q) = %q, want %q", in, got, want)
		}
	}
}

// A checkout that fails leaves what a failed `git worktree add` leaves: nothing (git's
// remove_junk), neither the registration nor the directory. Not parallel: it counts.
func TestAddWorktreeFailedCheckoutLeavesNothing(t *testing.T) {
	ctx := context.Background()
	r, _ := testRepo(t, kinds[0])
	path := filepath.Join(t.TempDir(), "w")
	missing := mustOID(t, strings.Repeat("1", len(r.NullID())))
	if _, ok := r.localAddPlan(ctx, path, missing); !ok {
		t.Fatal("the local registration is not taken")
	}
	if err := r.AddWorktree(ctx, path, missing, "r", nil); err == nil {
		t.Fatal("a worktree was added at a missing commit")
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("the worktree directory is left: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(r.CommonDir, "worktrees")); len(entries) != 0 {
		t.Errorf("registrations are left: %v", entries)
	}
}

// The reflog's identity is git's (`git var GIT_COMMITTER_IDENT`) where it is computed
// in process: from the configuration (committer.* over user.*, crud trimmed) or the
// environment, dated by GIT_COMMITTER_DATE in the form read here or now in the local
// zone; anything else declines. Not parallel: it changes the environment.
func TestCommitterIdentAgreesWithGit(t *testing.T) {
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	for _, name := range []string{"GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"} {
		t.Setenv(name, "") // restored after the test
		_ = os.Unsetenv(name)
	}
	g("", "config", "user.name", "U Ser")
	g("", "config", "user.email", "user@example.com")
	g("", "config", "committer.name", " .Com <m> itter.")
	ident := func() (string, bool) {
		t.Helper()
		r.ReloadConfig()
		return committerIdent(r.configIn(ctx, r.CommonDir), time.Now())
	}
	t.Setenv("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
	want := g("", "var", "GIT_COMMITTER_IDENT")
	if got, ok := ident(); !ok || got != want {
		t.Errorf("from the configuration: %q, %v; git: %q", got, ok, want)
	}
	t.Setenv("GIT_COMMITTER_NAME", "Env Name")
	want = g("", "var", "GIT_COMMITTER_IDENT")
	if got, ok := ident(); !ok || got != want {
		t.Errorf("from the environment: %q, %v; git: %q", got, ok, want)
	}
	t.Setenv("GIT_COMMITTER_DATE", "")
	want = g("", "var", "GIT_COMMITTER_IDENT")
	got, ok := ident()
	stamp := regexp.MustCompile(`> [0-9]+ `)
	if !ok || stamp.ReplaceAllString(got, "> T ") != stamp.ReplaceAllString(want, "> T ") {
		t.Errorf("now: %q, %v; git: %q", got, ok, want)
	}
	t.Setenv("GIT_COMMITTER_DATE", "@1767225600 +0100")
	if got, ok := ident(); ok {
		t.Errorf("a date in another form read as %q", got)
	}
	t.Setenv("GIT_COMMITTER_DATE", "")
	t.Setenv("TZ", "Asia/Kolkata") // not the zone Go loaded at start
	if got, ok := ident(); ok && time.Local.String() != "Asia/Kolkata" {
		t.Errorf("a zone Go did not load read as %q", got)
	}
	t.Setenv("GIT_COMMITTER_NAME", "") // git takes the account's name
	if got, ok := ident(); ok {
		t.Errorf("an empty name read as %q", got)
	}
}

// A repository whose refs or objects go through git, or with reftable, and a path git
// refuses or a registration names already are git's to add.
func TestAddWorktreeLocalDeclines(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, k := range kinds[1:] {
		r, g := testRepo(t, k)
		commit := mustOID(t, g("", "rev-parse", "HEAD"))
		if _, ok := r.localAddPlan(ctx, filepath.Join(t.TempDir(), "w"), commit); ok {
			t.Errorf("%s: the local registration would be taken", k.name)
		}
	}
	r, g := testRepo(t, kinds[0])
	commit := mustOID(t, g("", "rev-parse", "HEAD"))
	base := t.TempDir()
	if _, ok := r.localAddPlan(ctx, filepath.Join(base, "fine"), commit); !ok {
		t.Fatal("the local registration is not taken for a plain repository")
	}
	full := filepath.Join(base, "full")
	if err := os.MkdirAll(filepath.Join(full, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(base, "gone")
	g("", "worktree", "add", "-q", "--detach", gone)
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{
		"a non-empty directory": full, "a registered missing worktree": gone,
		"a relative path": "rel/w", "an unclean path": base + "/a/../w",
	} {
		if _, ok := r.localAddPlan(ctx, path, commit); ok {
			t.Errorf("%s: the local registration would be taken", name)
		}
	}
	if err := os.Mkdir(filepath.Join(r.CommonDir, "reftable"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.localAddPlan(ctx, filepath.Join(base, "fine"), commit); ok {
		t.Error("reftable: the local registration would be taken")
	}
}
