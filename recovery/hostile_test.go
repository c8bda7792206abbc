package recovery_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/recovery"
)

// A user's diff and apply settings change nothing: two identical repositories, one
// with hostile config, give the same snapshot, the same patch bytes, and the same
// restored and applied files.
func TestHostileConfigChangesNothing(t *testing.T) {
	t.Parallel() // its own repository; no package globals, no Setenv
	ctx := context.Background()
	var results [2]*recovery.Result
	var states [2]state
	var fixtures [2]*fixture
	for i := range fixtures {
		f := newFixture(t, 0)
		fixtures[i] = f
		if i == 1 {
			ext := filepath.Join(t.TempDir(), "ext-diff")
			write(t, ext, "#!/bin/sh\necho external diff ran\n")
			if err := os.Chmod(ext, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, kv := range [][2]string{
				{"diff.external", ext}, {"diff.noprefix", "true"}, {"color.ui", "always"}, {"color.diff", "always"},
				{"apply.whitespace", "fix"}, {"diff.mnemonicPrefix", "true"}, {"diff.relative", "true"},
				{"core.quotePath", "false"}, {"diff.suppressBlankEmpty", "true"}, {"diff.ignoreSubmodules", "all"}, {"diff.renames", "copies"}, {"status.showUntrackedFiles", "no"},
			} {
				run(t, f.dir, "config", kv[0], kv[1])
			}
		}
		wt := f.worktree("n")
		for _, first := range []bool{true, false} {
			for _, m := range corpus {
				if m.first == first && !m.heavy {
					m.apply(t, f, wt)
				}
			}
		}
		// Whitespace that apply.whitespace=fix would "fix".
		write(t, filepath.Join(wt, "trailing.txt"), "trailing spaces   \n\t \nend\t\n")
		write(t, filepath.Join(wt, "unstaged.txt"), "unstaged   \n")
		states[i] = capture(t, wt)
		res, err := recovery.Snapshot(ctx, f.store, recovery.Target{Run: f.run, Node: "n", Stage: "code", Path: wt, Baseline: testenv.HexOID(f.base), Source: recovery.SourceWorktree}, recovery.Options{})
		if err != nil {
			t.Fatal(err)
		}
		results[i] = res
	}
	plain, hostile := results[0], results[1]
	if plain.Rec.ID != hostile.Rec.ID || plain.Manifest.Tree != hostile.Manifest.Tree || plain.Manifest.IndexTree != hostile.Manifest.IndexTree {
		t.Fatalf("snapshots differ: %s %s vs %s %s", plain.Rec.ID, plain.Manifest.Tree, hostile.Rec.ID, hostile.Manifest.Tree)
	}
	p0, err := os.ReadFile(plain.Rec.Patch)
	if err != nil {
		t.Fatal(err)
	}
	p1, err := os.ReadFile(hostile.Rec.Patch)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(p0, p1) {
		l0, l1 := bytes.Split(p0, []byte("\n")), bytes.Split(p1, []byte("\n"))
		for i := 0; i < len(l0) && i < len(l1); i++ {
			if !bytes.Equal(l0[i], l1[i]) {
				t.Fatalf("patches differ at line %d:\n%q\n%q", i+1, l0[i], l1[i])
			}
		}
		t.Fatalf("patches differ in length: %d and %d lines", len(l0), len(l1))
	}
	if bytes.Contains(p1, []byte("external diff ran")) || bytes.Contains(p1, []byte("\x1b[")) {
		t.Fatal("the patch went through the user's diff settings")
	}

	// In the hostile repository: the patch applies (as a consumer applies it), and a
	// replay worktree with the snapshot applied has the very files and index.
	f := fixtures[1]
	checkPatch(t, f, hostile)
	rec, err := recovery.Recover(ctx, f.store, f.run, recovery.RecoverRequest{Stage: "code", Node: "n", Apply: true})
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Applied || rec.Snapshot == nil || rec.Snapshot.Rec.ID != hostile.Rec.ID {
		t.Fatalf("recover: %+v", rec)
	}
	got := capture(t, rec.Replay.Worktree)
	if d := diffMaps(states[1].withoutIgnored(), got.Files); d != "" {
		t.Fatalf("applied files differ:\n%s", d)
	}
	if got.Index != states[1].Index {
		t.Fatalf("applied index differs:\nwant %q\ngot  %q", trunc(states[1].Index), trunc(got.Index))
	}
}
