package recovery_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/recovery"
)

// conversion is a way git converts bytes between the index and the files.
type conversion struct {
	name string
	// base configures the repository (and adds files to the baseline) before the
	// baseline commit, so the managed worktree is checked out through it.
	base func(t testing.TB, dir string)
	// config is set in a copy of the shared fixture instead (key, value, ...), before
	// the managed worktree is checked out: for a conversion that would commit the
	// baseline's files (LF text, binary) as they are, the copy is the repository base
	// would have made, without building it.
	config []string
	// later configures it once the worktree is dirty, before the snapshot.
	later func(t testing.TB, f *fixture, wt string)
	trip  trip
}

func gitConfig(t testing.TB, dir string, kv ...string) {
	t.Helper()
	for i := 0; i+1 < len(kv); i += 2 {
		run(t, dir, "config", kv[i], kv[i+1])
	}
}

var conversions = []conversion{
	{name: "autocrlf-true", config: []string{"core.autocrlf", "true"}},
	{name: "autocrlf-true-safecrlf", config: []string{"core.autocrlf", "true"}, later: func(t testing.TB, f *fixture, wt string) {
		// git refuses to add a file whose line endings a checkout would not give back.
		f.config(t, "core.safecrlf", "true")
	}},
	{name: "autocrlf-input", config: []string{"core.autocrlf", "input"}},
	{name: "text-auto-eol-crlf", base: func(t testing.TB, dir string) {
		write(t, filepath.Join(dir, ".gitattributes"), "* text=auto eol=crlf\n")
	}},
	{name: "clean-smudge-filter", base: func(t testing.TB, dir string) {
		upperFilter(t, dir)
		write(t, filepath.Join(dir, ".gitattributes"), "*.txt filter=upper\n")
	}},
	{name: "filter-added-later", later: func(t testing.TB, f *fixture, wt string) {
		// Files committed and checked out without it: even the untouched ones would
		// be cleaned differently now.
		upperFilter(t, f.dir)
		write(t, filepath.Join(wt, ".gitattributes"), "*.txt filter=upper\n")
	}, trip: trip{statusVaries: true}},
	{name: "ident", base: func(t testing.TB, dir string) {
		write(t, filepath.Join(dir, ".gitattributes"), "*.txt ident\n")
		write(t, filepath.Join(dir, "ident.txt"), "id: $Id$\n")
	}},
	{name: "working-tree-encoding", base: func(t testing.TB, dir string) {
		write(t, filepath.Join(dir, ".gitattributes"), "*.utf16 working-tree-encoding=UTF-16\n")
		write(t, filepath.Join(dir, "enc.utf16"), "\xfe\xff\x00h\x00i\x00\n")
	}},
}

// convertible writes files every conversion has an opinion on: mixed line endings,
// CRLF, LF, letters, an ident keyword already expanded, and text that is not valid
// in its declared encoding.
func convertible(t testing.TB, wt string) {
	write(t, filepath.Join(wt, "mix.txt"), "mix\r\nlf\n")
	write(t, filepath.Join(wt, "crlf.txt"), "one\r\ntwo\r\n")
	write(t, filepath.Join(wt, "lf.txt"), "one\ntwo\n")
	write(t, filepath.Join(wt, "lone-cr.txt"), "a\rb\r\n")
	write(t, filepath.Join(wt, "Mixed Case.txt"), "Hello World\n")
	write(t, filepath.Join(wt, "ident-new.txt"), "$Id: 0123456789abcdef $\n")
	write(t, filepath.Join(wt, "bad.utf16"), "odd")
	write(t, filepath.Join(wt, "good.utf16"), "\xff\xfeo\x00k\x00\r\x00\n\x00")
	// A committed file edited by hand: its CRLF must stay.
	write(t, filepath.Join(wt, "unstaged.txt"), "unstaged\r\nchanged\n")
}

// TestCorpusConversions takes the dirty states through snapshot, remove and restore
// under each conversion git can apply: the restored files are the bytes that were on
// disk, untouched (checked-out, smudged) files included. By default every state
// together under each conversion; the sweeps build tag adds every state alone (but the
// heavy ones, which only add size), each under one conversion in turn, so that every
// state meets every conversion together and each conversion meets states alone.
func TestCorpusConversions(t *testing.T) {
	t.Parallel() // its own repository; no package globals, no Setenv
	long := testenv.Long()
	for ci, c := range conversions {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // a fixture each
			t.Run("all-together", func(t *testing.T) {
				t.Parallel()
				f := c.fixture(t)
				wt := f.worktree("n")
				for _, first := range []bool{true, false} {
					for _, m := range corpus {
						if m.first == first && !m.heavy {
							m.apply(t, f, wt)
						}
					}
				}
				convertible(t, wt)
				if c.later != nil {
					c.later(t, f, wt)
				}
				roundTripWith(t, f, "n", wt, recovery.Options{}, c.trip)
			})
			if !long {
				return
			}
			for mi, m := range corpus {
				if m.heavy {
					continue // size, not conversion: TestCorpus has them
				}
				if mi%len(conversions) != ci {
					continue // this state alone meets another conversion
				}
				t.Run(m.name, func(t *testing.T) {
					t.Parallel()
					f := c.fixture(t)
					wt := f.worktree("n")
					m.apply(t, f, wt)
					if c.later != nil {
						c.later(t, f, wt)
					}
					roundTripWith(t, f, "n", wt, recovery.Options{}, c.trip)
				})
			}
		})
	}
}

// fixture makes c's repository: built with c.base run before the baseline commit, or
// a copy of the shared fixture with c.config set.
func (c conversion) fixture(t testing.TB) *fixture {
	t.Helper()
	if c.base == nil {
		f := newFixture(t, 0)
		f.config(t, c.config...)
		return f
	}
	return newFixtureWith(t, 0, func(dir string) { c.base(t, dir) })
}

// TestCheckedOutThroughFilter is the trap of untouched files: a worktree whose only
// change is a new file still has every checked-out file in its smudged form on disk,
// which is not the blob in the index; each must come back as it was on disk.
func TestCheckedOutThroughFilter(t *testing.T) {
	t.Parallel() // its own repository; no package globals, no Setenv
	f := newFixtureWith(t, 0, func(dir string) {
		upperFilter(t, dir)
		write(t, filepath.Join(dir, ".gitattributes"), "*.txt filter=upper\n")
		write(t, filepath.Join(dir, "MiXeD.txt"), "MiXeD case\n")
	})
	wt := f.worktree("n")
	write(t, filepath.Join(wt, "new.txt"), "Fresh\n")
	res := roundTrip(t, f, "n", wt, recovery.Options{})
	restored := filepath.Join(t.TempDir(), "out")
	if _, err := recovery.Restore(context.Background(), f.repo, res.Rec.Commit, restored, false); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"MiXeD.txt": "mixed case\n", "new.txt": "Fresh\n"} {
		got, err := os.ReadFile(filepath.Join(restored, name))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q (the bytes that were on disk)", name, got, err, want)
		}
	}
}

// TestSnapshotRunsNoUserProgram: neither the user's filters nor core.fsmonitor run
// during snapshot and restore (they may be slow, fail, or have side
// effects); a filter whose command fails or is missing changes nothing.
func TestSnapshotRunsNoUserProgram(t *testing.T) {
	t.Parallel() // its own repository; no package globals, no Setenv
	calls := filepath.Join(t.TempDir(), "calls")
	monitored := filepath.Join(t.TempDir(), "fsmonitor-calls")
	hook := filepath.Join(t.TempDir(), "fsmonitor")
	write(t, hook, "#!/bin/sh\necho fsmonitor >>'"+monitored+"'\nexit 1\n")
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		data, _ := os.ReadFile(calls)
		return strings.Count(string(data), "\n")
	}
	for _, tc := range []struct{ name, clean, smudge string }{
		{"counting", "echo clean >>'" + calls + "'; tr a-z A-Z", "echo smudge >>'" + calls + "'; tr A-Z a-z"},
		{"failing", "echo clean >>'" + calls + "'; exit 1", "echo smudge >>'" + calls + "'; exit 1"},
		{"missing", "/nonexistent/clean-filter", "/nonexistent/smudge-filter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t, 0)
			wt := f.worktree("n")
			for _, m := range corpus {
				if m.name == "staged" || m.name == "unstaged" || m.name == "untracked" {
					m.apply(t, f, wt)
				}
			}
			convertible(t, wt)
			f.config(t, "filter.f.clean", tc.clean, "filter.f.smudge", tc.smudge, "core.fsmonitor", hook)
			write(t, filepath.Join(wt, ".gitattributes"), "*.txt filter=f\n")
			want := fileMap(t, wt, false)
			for _, p := range []string{calls, monitored} {
				if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
			}

			res, err := recovery.Snapshot(ctx, f.store, recovery.Target{Run: f.run, Node: "n", Stage: "code", Path: wt, Baseline: testenv.HexOID(f.base), Source: recovery.SourceWorktree}, recovery.Options{})
			if err != nil {
				t.Fatal(err)
			}
			ran := count()
			// Removal asks status whether anything is dirty, which cleans files the way
			// the user's git does; only the snapshot and restores are counted.
			if _, err := recovery.PreserveAndRemove(ctx, f.store, f.run, "n", recovery.Options{}); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(calls); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			files := filepath.Join(t.TempDir(), "files")
			if _, err := recovery.Restore(ctx, f.repo, res.Rec.Commit, files, false); err != nil {
				t.Fatal(err)
			}
			again := filepath.Join(t.TempDir(), "worktree")
			if _, err := recovery.Restore(ctx, f.repo, res.Rec.Commit, again, true); err != nil {
				t.Fatal(err)
			}
			if n := ran + count(); n != 0 {
				data, _ := os.ReadFile(calls)
				t.Errorf("the user's filters ran %d times:\n%s", n, data)
			}
			if data, _ := os.ReadFile(monitored); len(data) > 0 {
				t.Errorf("the user's core.fsmonitor ran %d times (snapshot, remove, restore)", strings.Count(string(data), "\n"))
			}
			if d := diffMaps(want, fileMap(t, files, false)); d != "" {
				t.Errorf("restored files differ:\n%s", d)
			}
			if d := diffMaps(want, fileMap(t, again, false)); d != "" {
				t.Errorf("restored worktree differs:\n%s", d)
			}
		})
	}
}

// TestStatDataRefusedUnderConversionAttributes: a file checked out through a filter
// that an untracked .gitattributes names, the filter's configuration removed since, is
// the same size as its blob and stat-clean (git's status calls it unchanged), but not
// its blob's bytes: the snapshot holds the bytes on disk, since a file any attribute
// marks for a conversion is never taken by its stat data.
func TestStatDataRefusedUnderConversionAttributes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 0)
	wt := f.worktree("n")
	write(t, filepath.Join(wt, ".gitattributes"), "staged.txt filter=upper\n")
	f.config(t, "filter.upper.smudge", "tr a-z A-Z")
	remove(t, filepath.Join(wt, "staged.txt"))
	run(t, wt, "checkout", "--", "staged.txt")
	run(t, f.dir, "config", "--remove-section", "filter.upper")
	// The index written a second after the file: its entry is not racily clean.
	index := strings.TrimSpace(run(t, wt, "rev-parse", "--path-format=absolute", "--git-path", "index"))
	later := time.Now().Add(time.Second)
	if err := os.Chtimes(index, later, later); err != nil {
		t.Fatal(err)
	}
	if status := run(t, wt, "status", "--porcelain", "--", "staged.txt"); status != "" {
		t.Fatalf("git calls staged.txt changed (%q): the case is not the one meant", status)
	}
	f.repo.KeepWorktrees()
	res, err := recovery.PreserveAndRemove(ctx, f.store, f.run, "n", recovery.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := run(t, f.dir, "cat-file", "blob", res.Snapshot.Rec.Commit.String()+":staged.txt"); got != "STAGED\n" {
		t.Fatalf("snapshot holds %q, the disk held %q", got, "STAGED\n")
	}
}

// TestConvertedCleanWorktreeKept: a worktree whose only difference from its index is a
// file checked out through a conversion (CRLF line endings here) that the repository
// configures no more, or that only a global attributes file asked for, is clean to
// git's status (its stat data match), yet its bytes on disk are no blob's: removal
// snapshots it and the snapshot holds those bytes. A conversion the repository still
// configures gives them back at any checkout: no snapshot then.
func TestConvertedCleanWorktreeKept(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		on, off    func(t testing.TB, f *fixture)
		wantKeeper bool
	}{
		{name: "info-attributes-removed", wantKeeper: true,
			on: func(t testing.TB, f *fixture) {
				write(t, filepath.Join(f.repo.CommonDir, "info", "attributes"), "staged.txt eol=crlf\n")
			},
			off: func(t testing.TB, f *fixture) { remove(t, filepath.Join(f.repo.CommonDir, "info", "attributes")) }},
		{name: "autocrlf-unset", wantKeeper: true,
			on:  func(t testing.TB, f *fixture) { f.config(t, "core.autocrlf", "true") },
			off: func(t testing.TB, f *fixture) { run(t, f.dir, "config", "--unset", "core.autocrlf") }},
		{name: "global-attributes-only", wantKeeper: true,
			on: func(t testing.TB, f *fixture) {
				global := filepath.Join(t.TempDir(), "attributes")
				write(t, global, "staged.txt eol=crlf\n")
				f.config(t, "core.attributesFile", global)
			}},
		{name: "info-attributes-kept", wantKeeper: false,
			on: func(t testing.TB, f *fixture) {
				write(t, filepath.Join(f.repo.CommonDir, "info", "attributes"), "staged.txt eol=crlf\n")
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFixture(t, 0)
			wt := f.worktree("n")
			tc.on(t, f)
			remove(t, filepath.Join(wt, "staged.txt"))
			run(t, wt, "checkout", "--", "staged.txt")
			if tc.off != nil {
				tc.off(t, f)
			}
			if data, err := os.ReadFile(filepath.Join(wt, "staged.txt")); err != nil || string(data) != "staged\r\n" {
				t.Fatalf("staged.txt holds %q, %v: the checkout converted nothing", data, err)
			}
			// The index written a second after the file: its entry is not racily clean.
			index := strings.TrimSpace(run(t, wt, "rev-parse", "--path-format=absolute", "--git-path", "index"))
			later := time.Now().Add(time.Second)
			if err := os.Chtimes(index, later, later); err != nil {
				t.Fatal(err)
			}
			if status := run(t, wt, "status", "--porcelain"); status != "" {
				t.Fatalf("git calls the worktree changed (%q): the case is not the one meant", status)
			}
			f.repo.KeepWorktrees()
			res, err := recovery.PreserveAndRemove(ctx, f.store, f.run, "n", recovery.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !tc.wantKeeper {
				if res.Snapshot != nil {
					t.Fatalf("a snapshot (%v) of a worktree any checkout gives back", res.Risk.Reasons)
				}
				return
			}
			if res.Snapshot == nil {
				t.Fatalf("removed without a snapshot: staged.txt's bytes on disk (%q) are lost", "staged\r\n")
			}
			if got := run(t, f.dir, "cat-file", "blob", res.Snapshot.Rec.Commit.String()+":staged.txt"); got != "staged\r\n" {
				t.Fatalf("snapshot holds %q, the disk held %q", got, "staged\r\n")
			}
		})
	}
}

// TestConvertedFileGoesRawAtOnce: a file checked out through a conversion configured
// no more (CRLF line endings, core.autocrlf unset since) is staged by git by its stat
// data as its blob, whatever the fast capture stages; the read-back sees its size is
// not its blob's and says so (errConverted), so the next try is the raw capture, not
// another add -A that would do the same.
func TestConvertedFileGoesRawAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 0)
	wt := f.worktree("n")
	f.config(t, "core.autocrlf", "true")
	remove(t, filepath.Join(wt, "staged.txt"))
	run(t, wt, "checkout", "--", "staged.txt")
	run(t, f.dir, "config", "--unset", "core.autocrlf")
	index := strings.TrimSpace(run(t, wt, "rev-parse", "--path-format=absolute", "--git-path", "index"))
	later := time.Now().Add(time.Second)
	if err := os.Chtimes(index, later, later); err != nil {
		t.Fatal(err)
	}
	if _, err := recovery.CaptureOnce(ctx, f.repo, wt, nil); !errors.Is(err, recovery.ErrConverted) || !errors.Is(err, recovery.ErrChanged) {
		t.Fatalf("the fast capture of a converted file: %v, want a changed worktree for a conversion", err)
	}
}
