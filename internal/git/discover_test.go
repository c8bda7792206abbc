package git

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// layoutGit runs git in dir for building a layout, with no user or system config.
func layoutGit(t *testing.T, home, dir string, args ...string) {
	t.Helper()
	mustGit(t, dir, append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "x"), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=C", "GIT_COMMITTER_EMAIL=c@x"), "", args...)
}

// TestDiscoverAgreesWithGit opens every layout both ways: discover must answer alone
// exactly in the layouts it is meant to (each one a reason it exists), and what it
// answers must be what `git rev-parse` says; in every other layout it must leave the
// answer to git, and Open must say what git says (a repository or the same kind of
// error).
func TestDiscoverAgreesWithGit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	base := t.TempDir()
	g := func(dir string, args ...string) { t.Helper(); layoutGit(t, home, dir, args...) }
	mk := func(rel string) string {
		t.Helper()
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	repo := func(name string, initArgs ...string) string {
		t.Helper()
		g(base, append([]string{"init", "-q", "-b", "main"}, append(initArgs, name)...)...)
		p := filepath.Join(base, name)
		g(p, "commit", "-q", "--allow-empty", "-m", "first")
		return p
	}

	main := repo("main")
	mk("main/a/b")
	if err := os.Symlink(filepath.Join(main, "a"), filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	g(main, "worktree", "add", "-q", "--detach", filepath.Join(base, "wt"))
	mk("wt/sub")
	g(base, "init", "-q", "-b", "main", "--separate-git-dir", filepath.Join(base, "sep.git"), filepath.Join(base, "sepwt"))
	linked := repo("dotgitlink")
	if err := os.Rename(filepath.Join(linked, ".git"), filepath.Join(base, "elsewhere.git")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "elsewhere.git"), filepath.Join(linked, ".git")); err != nil {
		t.Fatal(err)
	}
	repo("sha256", "--object-format=sha256")
	g(base, "init", "-q", "--bare", filepath.Join(base, "bare.git"))
	g(repo("corewt"), "config", "core.worktree", filepath.Join(base, "corewt"))
	g(repo("wtconfig"), "config", "extensions.worktreeConfig", "true")
	g(repo("include"), "config", "include.path", filepath.Join(base, "none"))
	g(repo("bareconf"), "config", "core.bare", "true")
	unknown := repo("unknownext")
	g(unknown, "config", "core.repositoryformatversion", "1")
	g(unknown, "config", "extensions.somethingnew", "true")
	compat := repo("compat") // an extension this code does not know, with a format's name for a value
	g(compat, "config", "core.repositoryformatversion", "1")
	g(compat, "config", "extensions.compatObjectFormat", "sha256")
	repo("refsv0")
	g(filepath.Join(base, "refsv0"), "config", "extensions.noop", "true")
	mk("plain/dir")

	cases := []struct {
		path string
		fast bool
	}{
		{"main", true},
		{"main/a/b", true},
		{"link", true}, // a path through a symlink: git answers with physical paths
		{"wt", true},   // a linked worktree: .git is a file, commondir names the repository
		{"wt/sub", true},
		{"sepwt", true},      // --separate-git-dir: .git is a file, no commondir
		{"dotgitlink", true}, // .git is a link to the git dir
		{"sha256", true},
		{"bare.git", false},
		{"main/.git/refs", false}, // inside a git dir
		{"corewt", false},
		{"wtconfig", false},
		{"include", false},
		{"bareconf", false},
		{"unknownext", false},
		{"compat", false},
		{"refsv0", false}, // an extension in a version 0 repository
		{"plain/dir", false},
	}
	if os.Geteuid() == 0 {
		other := repo("otherowner")
		if err := os.Chown(other, 12345, 12345); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			path string
			fast bool
		}{"otherowner", false})
	}
	for _, c := range cases {
		abs := filepath.Join(base, c.path)
		fast, goGit, ok := discover(abs)
		if ok != c.fast {
			t.Errorf("%s: discover answered alone = %v, want %v", c.path, ok, c.fast)
		}
		if ok && goGit != goGitCanOpen(fast.CommonDir) {
			t.Errorf("%s: discover says go-git can open it: %v, goGitCanOpen: %v", c.path, goGit, !goGit)
		}
		want, wantErr := openWithGit(ctx, abs)
		if ok {
			if wantErr != nil {
				t.Errorf("%s: discover found %+v, git: %v", c.path, *fast, wantErr)
				continue
			}
			if d := repoDiff(fast, want); d != "" {
				t.Errorf("%s: discover and git differ: %s", c.path, d)
			}
		}
		got, gotErr := Open(ctx, abs)
		switch {
		case (gotErr == nil) != (wantErr == nil):
			t.Errorf("%s: Open error %v, git's %v", c.path, gotErr, wantErr)
		case gotErr != nil:
			if errors.Is(wantErr, ErrNotRepository) != errors.Is(gotErr, ErrNotRepository) {
				t.Errorf("%s: Open error %v, git's %v", c.path, gotErr, wantErr)
			}
		default:
			if d := repoDiff(got, want); d != "" {
				t.Errorf("%s: Open and git differ: %s", c.path, d)
			}
		}
	}
}

func repoDiff(a, b *Repository) string {
	var d []string
	for _, f := range []struct{ name, a, b string }{
		{"GitDir", a.GitDir, b.GitDir}, {"CommonDir", a.CommonDir, b.CommonDir},
		{"TopLevel", a.TopLevel, b.TopLevel}, {"ObjectFormat", a.ObjectFormat, b.ObjectFormat},
	} {
		if f.a != f.b {
			d = append(d, f.name+" "+f.a+" vs "+f.b)
		}
	}
	return strings.Join(d, "; ")
}

// TestDiscoverLeavesEnvToGit: every variable that changes git's discovery or reads
// config from the command line sends Open to git. (It sets the process's environment,
// so it does not run in parallel.)
func TestDiscoverLeavesEnvToGit(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(t.TempDir(), "r")
	layoutGit(t, home, filepath.Dir(dir), "init", "-q", dir)
	if _, _, ok := discover(dir); !ok {
		t.Fatal("discover did not answer alone in a plain repository")
	}
	for _, kv := range []string{
		"GIT_DIR=" + filepath.Join(dir, ".git"), "GIT_WORK_TREE=" + dir, "GIT_CEILING_DIRECTORIES=" + filepath.Dir(dir),
		"GIT_DISCOVERY_ACROSS_FILESYSTEM=1", "GIT_CONFIG_PARAMETERS='core.bare'='true'", "GIT_CONFIG_COUNT=1",
		"GIT_CONFIG=" + filepath.Join(home, "cfg"),
	} {
		name, value, _ := strings.Cut(kv, "=")
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, value)
			if _, _, ok := discover(dir); ok {
				t.Errorf("discover answered alone with %s set", name)
			}
		})
	}
}
