package git

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// packedType agrees with git on every object of a repacked repository: commits,
// trees, blobs and an annotated tag by their type, deltas (their type is their
// base's) found with no type, in two packs, and an id no pack has, or any id once the
// store has alternates, not found.
func TestPackedTypeAgreesWithGit(t *testing.T) {
	t.Parallel()
	r, g := testRepo(t, kinds[0])
	dir := r.TopLevel
	// Files that change a little each commit, so that repack makes deltas.
	var body strings.Builder
	for i := range 200 {
		fmt.Fprintf(&body, "line %d of a file that changes a little each time\n", i)
	}
	for i := range 6 {
		if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(body.String()+fmt.Sprintf("change %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		g("", "add", "f.txt")
		g("", "commit", "-q", "-m", fmt.Sprintf("commit %d", i))
		if i == 2 {
			g("", "tag", "-a", "-m", "a tag", "v1")
			g("", "repack", "-q", "-a", "-d", "-f") // a first pack; later objects go in a second
		}
	}
	// And 800 small files, so that each fan-out bucket holds several names to search.
	if err := os.MkdirAll(filepath.Join(dir, "many"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 800 {
		if err := os.WriteFile(filepath.Join(dir, "many", fmt.Sprint(i)), []byte(fmt.Sprintf("blob %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g("", "add", "many")
	g("", "commit", "-q", "-m", "many")
	g("", "repack", "-q", "-d")
	if loose := g("", "count-objects"); !strings.HasPrefix(loose, "0 objects") {
		t.Fatalf("objects left loose: %s", loose)
	}
	l := r.objects.(*goGitStore).loose()
	deltas := map[string]bool{}
	for _, idx := range mustGlob(t, filepath.Join(r.CommonDir, "objects", "pack", "*.idx")) {
		for line := range strings.SplitSeq(g("", "verify-pack", "-v", idx), "\n") {
			// "<id> <type> <size> <size-in-pack> <offset> [<depth> <base>]"
			if f := strings.Fields(line); len(f) == 7 && isHexID(f[0]) {
				deltas[f[0]] = true
			}
		}
	}
	if len(deltas) == 0 {
		t.Fatal("the fixture has no delta: the test would not cover one")
	}
	all := g("", "cat-file", "--batch-check", "--batch-all-objects")
	types := map[string]int{}
	for line := range strings.SplitSeq(all, "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		typ, found := l.packedType(f[0])
		switch {
		case !found:
			t.Errorf("%s (%s): not found", f[0], f[1])
		case deltas[f[0]] && typ != "":
			t.Errorf("%s: a delta, given the type %q", f[0], typ)
		case !deltas[f[0]] && typ != f[1]:
			t.Errorf("%s: type %q, git says %q", f[0], typ, f[1])
		}
		types[f[1]]++
	}
	if types["commit"] == 0 || types["tree"] == 0 || types["blob"] == 0 || types["tag"] == 0 {
		t.Fatalf("the fixture lacks a type: %v", types)
	}
	if _, found := l.packedType(strings.Repeat("ab", 20)); found {
		t.Error("an id no pack has was found")
	}
	head := g("", "rev-parse", "HEAD")
	if err := WriteFile(filepath.Join(r.CommonDir, "objects", "info", "alternates"), []byte("/nonexistent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, found := l.packedType(head); found {
		t.Error("found with alternates, which git would search too")
	}
}

func mustGlob(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil || len(m) == 0 {
		t.Fatalf("%s: %v %v", pattern, m, err)
	}
	return m
}
