package git

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The configuration record stands for `git config --list` only while nothing git's
// answer depends on has changed: a command that reads configuration starts no git
// process while it holds, and every kind of change is seen at the next read. Not
// parallel: it counts processes (Started) and sets the environment.
func TestConfigRecord(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the record is kept on Linux only (statFile)")
	}
	ctx := context.Background()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "xdg"))
	dir := t.TempDir()
	gitIn := func(t *testing.T, args ...string) {
		t.Helper()
		mustGit(t, dir, nil, "", args...)
	}
	gitIn(t, "init", "-q", "-b", "main")
	gitIn(t, "commit", "-q", "--allow-empty", "-m", "a")
	gitIn(t, "config", "t.local", "aaaa")
	gitDir := filepath.Join(dir, ".git")
	// get is key's value as a new command reads it, and how many git processes that
	// started.
	get := func(t *testing.T, key string) (string, int64) {
		t.Helper()
		r, err := Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		before := Started()
		v := r.Config(ctx, key)
		return v, Started() - before
	}
	// want reads key twice, once the file clock has moved past every change: the
	// first sees want (asking git, the record stale), the second the same from the
	// record, with no process.
	want := func(t *testing.T, key, want string) {
		t.Helper()
		if v, _ := get(t, key); v != want {
			t.Fatalf("after the change %s = %q, want %q", key, v, want)
		}
		settleClock(t)
		if v, _ := get(t, key); v != want {
			t.Fatalf("%s = %q, want %q", key, v, want)
		}
		if v, n := get(t, key); v != want || n != 0 {
			t.Fatalf("unchanged: %s = %q with %d git processes, want %q with none", key, v, n, want)
		}
	}
	write := func(t *testing.T, path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	want(t, "t.local", "aaaa")

	t.Run("local config edited in place, same size, time set back", func(t *testing.T) {
		cfg := filepath.Join(gitDir, "config")
		fi, _ := os.Stat(cfg)
		data, _ := os.ReadFile(cfg)
		write(t, cfg, strings.Replace(string(data), "aaaa", "bbbb", 1))
		if err := os.Chtimes(cfg, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
		want(t, "t.local", "bbbb")
	})
	t.Run("local config by git config", func(t *testing.T) {
		gitIn(t, "config", "t.local", "cccc")
		want(t, "t.local", "cccc")
	})
	t.Run("a global file appears", func(t *testing.T) {
		write(t, filepath.Join(home, "xdg", "git", "config"), "[t]\n\txdg = x\n")
		want(t, "t.xdg", "x")
		write(t, filepath.Join(home, ".gitconfig"), "[t]\n\thome = h\n")
		want(t, "t.home", "h")
	})
	t.Run("include target created, then edited", func(t *testing.T) {
		gitIn(t, "config", "include.path", "inc")
		want(t, "t.inc", "")
		write(t, filepath.Join(gitDir, "inc"), "[t]\n\tinc = 1\n")
		want(t, "t.inc", "1")
		write(t, filepath.Join(gitDir, "inc"), "[t]\n\tinc = 2\n")
		want(t, "t.inc", "2")
		gitIn(t, "config", "include.path", "~/inc2") // from HOME
		write(t, filepath.Join(home, "inc2"), "[t]\n\tinc = 3\n")
		want(t, "t.inc", "3")
	})
	t.Run("environment", func(t *testing.T) {
		t.Setenv("GIT_CONFIG_COUNT", "1")
		t.Setenv("GIT_CONFIG_KEY_0", "t.env")
		t.Setenv("GIT_CONFIG_VALUE_0", "e")
		want(t, "t.env", "e")
		t.Setenv("GIT_CONFIG_VALUE_0", "f")
		want(t, "t.env", "f")
	})
	t.Run("HOME changed", func(t *testing.T) {
		other := t.TempDir()
		write(t, filepath.Join(other, ".gitconfig"), "[t]\n\thome = other\n")
		t.Setenv("HOME", other)
		want(t, "t.home", "other")
	})
	t.Run("includeIf onbranch, HEAD moved", func(t *testing.T) {
		write(t, filepath.Join(gitDir, "br"), "[t]\n\tbranch = b\n")
		gitIn(t, "config", "includeIf.onbranch:b.path", "br")
		want(t, "t.branch", "")
		gitIn(t, "checkout", "-q", "-b", "b")
		want(t, "t.branch", "b")
		gitIn(t, "checkout", "-q", "main")
		want(t, "t.branch", "")
	})
	t.Run("a condition the record cannot follow", func(t *testing.T) {
		gitIn(t, "config", "includeIf.unknown:x.path", "br")
		settleClock(t)
		for range 2 {
			if _, n := get(t, "t.local"); n == 0 {
				t.Fatal("read from a record with an unknown includeIf condition")
			}
		}
		gitIn(t, "config", "--unset", "includeIf.unknown:x.path")
		want(t, "t.local", "cccc")
	})
	t.Run("corrupt, torn or altered record", func(t *testing.T) {
		path := (&Repository{CommonDir: gitDir}).Layout().Cache(configRecordName)
		good, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		altered := strings.Replace(string(good), "\nlist ", "\nlist "+strings.Repeat("0", 8), 1)
		for _, bad := range []string{"garbage", string(good[:len(good)/2]), altered, ""} {
			write(t, path, bad)
			if v, n := get(t, "t.local"); v != "cccc" || n == 0 {
				t.Fatalf("record %.20q: t.local = %q with %d processes, want git's cccc", bad, v, n)
			}
		}
		want(t, "t.local", "cccc")
	})
	t.Run("owner", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("changing a directory's owner needs root")
		}
		r, err := Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(gitDir, 12345, 12345); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = os.Chown(gitDir, 0, 0) }()
		before := Started()
		v := r.Config(ctx, "t.local")
		if Started() == before {
			t.Fatal("read from the record in a git dir of another owner (safe.directory is git's)")
		}
		if gitSays := readConfigList(ctx, gitDir).str("t.local"); v != gitSays {
			t.Fatalf("t.local = %q, git says %q", v, gitSays)
		}
	})
}

// settleClock waits until the file clock has moved on from every change made so far by
// more than their racy margin (a millisecond: nanosecond times have a margin of a few
// nanoseconds), so that the next record is not racy. It polls the file clock; nothing
// else runs meanwhile.
func settleClock(t *testing.T) {
	t.Helper()
	probe := filepath.Join(t.TempDir(), "probe")
	clock := func() fileID {
		t.Helper()
		if err := os.WriteFile(probe, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		id, _ := statID(probe)
		return id
	}
	first := clock()
	if first.mtime[1] == 0 {
		t.Skip("the temporary directory's file system keeps whole seconds: records are racy for 2 s")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if id := clock(); id.mtime[0]*1e9+id.mtime[1] > first.mtime[0]*1e9+first.mtime[1]+int64(time.Millisecond) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the file clock did not move")
		}
		time.Sleep(time.Millisecond)
	}
}

// A file whose times are not older than the stamp by the file system's granularity
// is racy; the margin follows the granularity the times show.
func TestRacyMargin(t *testing.T) {
	t.Parallel()
	stamp := time.Unix(1000, 500_000_000)
	at := func(sec, nsec int64) fileID {
		return fileID{exists: true, mtime: [2]int64{sec, nsec}, ctime: [2]int64{sec, nsec}}
	}
	for _, c := range []struct {
		id     fileID
		margin time.Duration
		racy   bool
	}{
		{at(1000, 500_000_000), 200 * time.Millisecond, true}, // the stamp's own tick
		{at(1000, 123_456_789), 2 * time.Nanosecond, false},   // nanoseconds: long before
		{at(1000, 499_999_997), 2 * time.Nanosecond, false},   // three nanoseconds before
		{at(999, 0), 2 * time.Second, true},                   // whole seconds (FAT, ext3): within 2 s
		{at(998, 0), 2 * time.Second, false},                  // older than 2 s
		{at(1000, 480_000_000), 20 * time.Millisecond, true},  // exFAT's 10 ms: within 20 ms
		{fileID{}, 2 * time.Second, false},                    // absent
		{at(1001, 0), 2 * time.Second, true},                  // after the stamp
		{fileID{exists: true, mtime: [2]int64{1, 0}, ctime: [2]int64{1000, 400_000_001}}, 2 * time.Nanosecond, false},
		{fileID{exists: true, mtime: [2]int64{1, 0}, ctime: [2]int64{1000, 500_000_001}}, 2 * time.Nanosecond, true}, // changed after
	} {
		if m := racyMargin(c.id); m != c.margin {
			t.Errorf("racyMargin(%v) = %v, want %v", c.id, m, c.margin)
		}
		if r := c.id.racy(stamp); r != c.racy {
			t.Errorf("racy(%v) = %v, want %v", c.id, r, c.racy)
		}
	}
}

// Without GIT_CONFIG_NOSYSTEM and with no system entry to name it, the system file is
// the one git itself names, the file its system entries come from.
func TestSystemConfigFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	mustGit(t, dir, nil, "", "init", "-q", dir)
	r, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_CONFIG_NOSYSTEM=") && !strings.HasPrefix(kv, "GIT_CONFIG_SYSTEM=") {
			env = append(env, kv)
		}
	}
	c, ok := newConfigContext(r.CommonDir, env)
	if !ok {
		t.Fatal("no context")
	}
	system, ok := r.systemConfig(ctx, c, nil, nil)
	if !ok || !filepath.IsAbs(system) {
		t.Fatalf("system file %q, %v", system, ok)
	}
	c2, _ := newConfigContext(r.CommonDir, append(env, "GIT_CONFIG_SYSTEM="+filepath.Join(dir, "sys")))
	if s, ok := r.systemConfig(ctx, c2, nil, nil); !ok || s != filepath.Join(dir, "sys") {
		t.Errorf("GIT_CONFIG_SYSTEM: %q, %v", s, ok)
	}
	c3, _ := newConfigContext(r.CommonDir, append(env, "GIT_CONFIG_NOSYSTEM=1"))
	if s, ok := r.systemConfig(ctx, c3, nil, nil); !ok || s != "" {
		t.Errorf("GIT_CONFIG_NOSYSTEM: %q, %v", s, ok)
	}
	// git's own words for the file, where it has entries.
	if out, err := runGit(dir, env, "", "config", "--system", "--show-origin", "-z", "--list"); err == nil && len(out) > 0 {
		if from, _, _ := strings.Cut(string(out), "\x00"); from != "file:"+system {
			t.Errorf("system file %q, git lists entries from %q", system, from)
		}
	}
}
