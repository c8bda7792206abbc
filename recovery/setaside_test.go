package recovery_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/recovery"
)

// A directory set aside whole (a checkout git could not read) is snapshotted from its
// bytes: odd names, modes, symlinks and binary bytes come back byte for byte; the
// top-level .git file is not among the files; a nested repository is a gitlink at its
// HEAD, listed as embedded; a fifo is passed over. The directory is left as it was.
func TestSnapshotSetAside(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 0)
	dir := filepath.Join(t.TempDir(), "code.atlas-broken-0000")
	write(t, filepath.Join(dir, ".git"), "gitdir: /nowhere\n")
	write(t, filepath.Join(dir, "work.txt"), "work in the broken checkout\n")
	write(t, filepath.Join(dir, "deep", "bin.dat"), "\x00\xff\r\n\x01")
	write(t, filepath.Join(dir, nameBytes), "latin\n")
	write(t, filepath.Join(dir, nameNewline), "newline\n")
	write(t, filepath.Join(dir, "run.sh"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("work.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	nested := filepath.Join(dir, "vendor", "lib")
	run(t, "", "init", "-q", "-b", "main", nested)
	write(t, filepath.Join(nested, "lib.go"), "package lib\n")
	run(t, nested, "add", "-A")
	run(t, nested, "-c", "user.name=n", "-c", "user.email=n@x", "commit", "-q", "-m", "lib")
	before := fileMap(t, dir, false) // before the fifo: reading one blocks
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}

	res, err := recovery.SnapshotSetAside(ctx, f.store, recovery.Target{Run: f.run, Node: "code", Path: dir, Baseline: testenv.HexOID(f.base)}, recovery.Options{Reason: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rec.Source != recovery.SourceSetAside {
		t.Errorf("source %q, want %q", res.Rec.Source, recovery.SourceSetAside)
	}
	if len(res.Manifest.Embedded) != 1 || res.Manifest.Embedded[0].String() != "vendor/lib" {
		t.Errorf("embedded %+v, want vendor/lib", res.Manifest.Embedded)
	}
	if err := os.Remove(filepath.Join(dir, "fifo")); err != nil {
		t.Fatalf("the fifo: %v", err)
	}
	if after := fileMap(t, dir, false); diffMaps(before, after) != "" {
		t.Fatalf("the snapshot changed the directory:\n%s", diffMaps(before, after))
	}

	out := filepath.Join(t.TempDir(), "out")
	if _, err := recovery.Restore(ctx, f.repo, res.Rec.Commit, out, false); err != nil {
		t.Fatal(err)
	}
	want := fileMap(t, dir, false)
	for p := range want {
		if p == ".git" || strings.HasPrefix(p, "vendor/lib/") {
			delete(want, p)
		}
	}
	got := fileMap(t, out, false)
	delete(got, "vendor/lib")
	if d := diffMaps(want, got); d != "" {
		t.Fatalf("restored files differ:\n%s", d)
	}

	again, err := recovery.SnapshotSetAside(ctx, f.store, recovery.Target{Run: f.run, Node: "code", Path: dir, Baseline: testenv.HexOID(f.base)}, recovery.Options{Reason: "test"})
	if err != nil || again.Rec.ID != res.Rec.ID || !again.Reused {
		t.Fatalf("the same directory again: %+v, %v; want the same snapshot, reused", again, err)
	}
}

// A set-aside directory's ignored files (the repository's rules: the fixture ignores
// build/ and *.log) stay out of its snapshot, which may be pushed, and are listed in
// its manifest; with IncludeIgnored they are kept. The directory keeps them either way.
func TestSnapshotSetAsideLeavesIgnoredOut(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 0)
	dir := filepath.Join(t.TempDir(), "code.atlas-broken-0001")
	write(t, filepath.Join(dir, ".git"), "gitdir: /nowhere\n")
	write(t, filepath.Join(dir, ".gitignore"), "build/\n*.log\n")
	write(t, filepath.Join(dir, "work.txt"), "work\n")
	write(t, filepath.Join(dir, "secret.log"), "token=hunter2\n")
	write(t, filepath.Join(dir, "build", "out.bin"), "12345")
	for _, include := range []bool{false, true} {
		res, err := recovery.SnapshotSetAside(ctx, f.store, recovery.Target{Run: f.run, Node: "code", Path: dir, Baseline: testenv.HexOID(f.base)}, recovery.Options{IncludeIgnored: include})
		if err != nil {
			t.Fatal(err)
		}
		tree := run(t, f.dir, "ls-tree", "-r", "--name-only", res.Rec.Commit.String())
		if !strings.Contains(tree, "work.txt\n") {
			t.Fatalf("the snapshot lacks work.txt:\n%s", tree)
		}
		if got := strings.Contains(tree, "secret.log\n") || strings.Contains(tree, "build/out.bin\n"); got != include {
			t.Fatalf("include %v: ignored files in the snapshot: %v\n%s", include, got, tree)
		}
		var names []string
		for _, e := range res.Manifest.Ignored {
			names = append(names, e.String())
		}
		if got := strings.Join(names, ","); got != "build,secret.log" {
			t.Fatalf("include %v: ignored listed %q", include, got)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "secret.log")); err != nil {
		t.Fatalf("the directory lost its ignored file: %v", err)
	}
}
