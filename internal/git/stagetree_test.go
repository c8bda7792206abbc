package git

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestStageTreeAgreesWithGit: the tree StageTree writes in process, staging the paths
// status names into a copy of the index, is the tree `git update-index --add --remove
// --replace` of the same paths and `git write-tree` give, through changes, additions,
// deletions, modes, links, names that sort around a directory's, and new nested
// directories; git's `ls-tree -r` reads every tree it wrote; and every case it is not
// sure of is left to git (ok false), with no error.
func TestStageTreeAgreesWithGit(t *testing.T) {
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	dir := r.TopLevel
	write := func(name, body string) { writeUnder(t, dir, name, body) }
	commitFiles(t, dir, g, "files", "a.txt", "a.b", "a0", "dir/b.txt", "dir/sub/c.txt", "e/f.txt", "x.sh", "sp ace.txt", "ünï.txt", "keep/k.txt")
	head := g("", "rev-parse", "HEAD")
	g("", "update-index", "--add", "--cacheinfo", "160000,"+head+",mod") // a gitlink, not on disk
	g("", "commit", "-q", "-m", "gitlink")

	// stageBoth stages what status names both ways and compares the trees.
	stageBoth := func(t *testing.T, want bool) {
		t.Helper()
		paths, idx := statusAndIndex(t, r.Worktree(dir))
		defer idx.Close()
		viaGit, err := idx.Clone()
		if err != nil {
			t.Fatal(err)
		}
		defer viaGit.Close()
		tree, ok, err := idx.StageTree(ctx, paths)
		if err != nil {
			t.Fatal(err)
		}
		if ok != want {
			t.Fatalf("StageTree of %q: ok %v, want %v", paths, ok, want)
		}
		if !ok {
			return
		}
		if err := viaGit.StagePaths(ctx, paths); err != nil {
			t.Fatal(err)
		}
		gitTree, err := viaGit.WriteTree(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if tree != gitTree {
			t.Fatalf("StageTree of %q: tree %s, git's %s:\n%s\ngit's:\n%s", paths, tree, gitTree,
				g("", "ls-tree", "-r", tree.String()), g("", "ls-tree", "-r", gitTree.String()))
		}
		g("", "ls-tree", "-r", "-t", tree.String())
		g("", "fsck", "--no-dangling", "--no-progress")
	}

	steps := []struct {
		name string
		do   func()
		ok   bool // StageTree stages it itself
	}{
		{name: "clean", do: func() {}, ok: true},
		{name: "changed, added, removed", ok: true, do: func() {
			write("a.txt", "changed\n")
			write("dir/sub/c.txt", "")
			write("new.txt", "new\n")
			write("a/inner.txt", "a directory named like a.txt's prefix\n")
			write("a-b", "between a.b and a/ in a tree\n")
			write("n1/n2/n3/deep.txt", "deep\n")
			if err := os.Remove(filepath.Join(dir, "e", "f.txt")); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(dir, "e")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "modes and links", ok: true, do: func() {
			if err := os.Chmod(filepath.Join(dir, "x.sh"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(filepath.Join(dir, "a0"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(dir, "link")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("dir/b.txt", filepath.Join(dir, "link")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../nowhere", filepath.Join(dir, "dir", "dangling")); err != nil {
				t.Fatal(err)
			}
			write("sp ace.txt", "spaced\n")
			write("ünï.txt", "unicode\n")
		}},
		{name: "a file where a directory was", do: func() {
			if err := os.RemoveAll(filepath.Join(dir, "keep")); err != nil {
				t.Fatal(err)
			}
			write("keep", "now a file\n")
		}},
		{name: "a directory where a file was", do: func() {
			if err := os.Remove(filepath.Join(dir, "keep")); err != nil {
				t.Fatal(err)
			}
			write("keep/k.txt", "keep/k.txt\n")
			if err := os.Remove(filepath.Join(dir, "a.b")); err != nil {
				t.Fatal(err)
			}
			write("a.b/x", "a directory now\n")
		}},
		{name: "back to files", ok: true, do: func() {
			if err := os.RemoveAll(filepath.Join(dir, "a.b")); err != nil {
				t.Fatal(err)
			}
			write("a.b", "a.b\n")
		}},
		{name: "an attributes file", do: func() { write("dir/.gitattributes", "*.txt text eol=crlf\n") }},
		{name: "a nested repository", do: func() {
			if err := os.Remove(filepath.Join(dir, "dir", ".gitattributes")); err != nil {
				t.Fatal(err)
			}
			mustGit(t, dir, nil, "", "init", "-q", "nested")
			mustGit(t, filepath.Join(dir, "nested"), nil, "", "commit", "-q", "--allow-empty", "-m", "n")
		}},
		{name: "a link where a directory was", ok: true, do: func() {
			if err := os.RemoveAll(filepath.Join(dir, "nested")); err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(filepath.Join(dir, "n1")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("dir", filepath.Join(dir, "n1")); err != nil {
				t.Fatal(err)
			}
			// A path beyond the link (no status names one) is git's to refuse.
			idx, err := r.Worktree(dir).CopyIndex(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer idx.Close()
			if _, ok, err := idx.StageTree(ctx, []string{"n1/b.txt"}); ok || err != nil {
				t.Fatalf("StageTree beyond a link: ok %v, %v; want git's", ok, err)
			}
		}},
		{name: "core.fileMode false", do: func() {
			if err := os.Remove(filepath.Join(dir, "n1")); err != nil {
				t.Fatal(err)
			}
			g("", "config", "core.fileMode", "false")
		}},
		{name: "core.fileMode true again", ok: true, do: func() { g("", "config", "core.fileMode", "true") }},
		{name: "unmerged", do: func() {
			blob := g("", "rev-parse", "HEAD:a.txt")
			g("100644 "+blob+" 1\ta0\x00100644 "+blob+" 2\ta0\x00", "update-index", "-z", "--index-info")
		}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			s.do()
			r.ReloadConfig()
			stageBoth(t, s.ok)
		})
	}

	for _, k := range []kind{kinds[1], kinds[2]} {
		t.Run(k.name+" is git's", func(t *testing.T) {
			r, _ := testRepo(t, k)
			writeUnder(t, r.TopLevel, "f.txt", "f\n")
			idx, err := r.Worktree(r.TopLevel).CopyIndex(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer idx.Close()
			if _, ok, err := idx.StageTree(ctx, []string{"f.txt"}); ok || err != nil {
				t.Fatalf("StageTree in a %s repository: ok %v, %v; want git's", k.name, ok, err)
			}
		})
	}
}

// TestParsedIndexKeptOnlyForTheSameBytes: the index parsed last is reused only for the
// very same bytes, even when the caller's buffer is changed in place after the parse,
// and the whole-file judgment (checksum, extensions) is made again for other bytes.
func TestParsedIndexKeptOnlyForTheSameBytes(t *testing.T) {
	r, g := testRepo(t, kinds[0])
	writeUnder(t, r.TopLevel, "aaa.txt", "a\n")
	g("", "add", "-A")
	data, err := os.ReadFile(filepath.Join(r.TopLevel, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	entries, _, _, ok := entriesFlagged(data, false)
	if !ok || len(entries) != 1 || entries[0].Path != "aaa.txt" {
		t.Fatalf("entries %+v, %v", entries, ok)
	}
	// The same buffer, a name changed in place: a new parse, which the checksum
	// refuses as a whole file, and whose entry has the new name.
	i := bytes.Index(data, []byte("aaa.txt"))
	data[i] = 'b'
	if _, _, _, ok := entriesFlagged(data, false); ok {
		t.Fatal("an index whose checksum does not match was read as whole")
	}
	ix, err := parseIndex(data, false)
	if err != nil || ix.entries[0].path != "baa.txt" {
		t.Fatalf("parse after the change: %v, %v", ix, err)
	}
	data[i] = 'a'
	if entries, _, _, ok := entriesFlagged(data, false); !ok || entries[0].Path != "aaa.txt" {
		t.Fatalf("the index restored: %+v, %v", entries, ok)
	}
}

// TestNothingIgnoredAgreesWithGit: NothingIgnored is true only where `git ls-files
// --others --ignored --exclude-standard --directory` lists nothing, and false
// wherever an ignore rule could exist: a tracked or a named .gitignore, a pattern in
// info/exclude, core.excludesFile, the default excludes file.
func TestNothingIgnoredAgreesWithGit(t *testing.T) {
	ctx := context.Background()
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	r, g := testRepo(t, kinds[0])
	dir := r.TopLevel
	writeUnder(t, dir, "a.txt", "a\n")
	writeUnder(t, dir, "build/out.o", "o\n")
	exclude := filepath.Join(r.CommonDir, "info", "exclude")
	check := func(name string, named []string, want bool) {
		t.Helper()
		r.ReloadConfig()
		idx, err := r.Worktree(dir).CopyIndex(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer idx.Close()
		got := idx.NothingIgnored(ctx, named)
		if got != want {
			t.Fatalf("%s: NothingIgnored %v, want %v", name, got, want)
		}
		listed, err := idx.Ignored(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got && len(listed) > 0 {
			t.Fatalf("%s: NothingIgnored, and git lists %q", name, listed)
		}
	}
	if err := os.WriteFile(exclude, []byte("# comments\n\n   \n#*.o\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check("no rule anywhere", []string{"a.txt", "build/out.o"}, true)

	if err := os.WriteFile(exclude, []byte("# comments\n*.o\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check("a pattern in info/exclude", []string{"a.txt"}, false)
	if err := os.Remove(exclude); err != nil {
		t.Fatal(err)
	}
	check("no info/exclude", []string{"a.txt", "build/out.o"}, true)

	writeUnder(t, dir, "build/.gitignore", "*.o\n")
	check("an untracked .gitignore, named", []string{"a.txt", "build/.gitignore"}, false)
	g("", "add", "build/.gitignore")
	check("a tracked .gitignore", []string{"a.txt"}, false)
	g("", "rm", "-q", "--cached", "build/.gitignore")
	if err := os.Remove(filepath.Join(dir, "build", ".gitignore")); err != nil {
		t.Fatal(err)
	}

	writeUnder(t, xdg, "git/ignore", "*.o\n")
	check("the default excludes file", []string{"a.txt"}, false)
	if err := os.Remove(filepath.Join(xdg, "git", "ignore")); err != nil {
		t.Fatal(err)
	}
	check("no excludes file", []string{"a.txt", "build/out.o"}, true)

	g("", "config", "core.excludesFile", filepath.Join(xdg, "elsewhere"))
	check("core.excludesFile", []string{"a.txt"}, false)
}

// TestStageTreeWritesOnlyMissingTrees: in a packed repository StageTree writes, as
// loose objects, only what the pack does not hold (the changed file's blob, its
// directory's tree, the root), as git's write-tree does, not every tree of the
// worktree again; the tree is git's all the same.
func TestStageTreeWritesOnlyMissingTrees(t *testing.T) {
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	dir := r.TopLevel
	for d := range 10 {
		for f := range 3 {
			name := filepath.Join("d"+string(rune('0'+d)), "f"+string(rune('0'+f))+".txt")
			writeUnder(t, dir, name, name+"\n")
		}
	}
	g("", "add", "-A")
	g("", "commit", "-q", "-m", "files")
	g("", "repack", "-adq")
	g("", "prune-packed")
	loose := func() []string {
		var found []string
		matches, _ := filepath.Glob(filepath.Join(r.CommonDir, "objects", "??", "*"))
		for _, m := range matches {
			found = append(found, filepath.Base(filepath.Dir(m))+filepath.Base(m))
		}
		return found
	}
	if l := loose(); len(l) != 0 {
		t.Fatalf("loose objects after repack and prune-packed: %v", l)
	}
	writeUnder(t, dir, "d3/f1.txt", "changed\n")
	paths, idx := statusAndIndex(t, r.Worktree(dir))
	defer idx.Close()
	tree, ok, err := idx.StageTree(ctx, paths)
	if err != nil || !ok {
		t.Fatalf("StageTree of %q: ok %v, %v", paths, ok, err)
	}
	blob := g("", "hash-object", "d3/f1.txt")
	sub := g("", "rev-parse", tree.String()+":d3")
	want := map[string]bool{blob: true, sub: true, tree.String(): true}
	got := loose()
	for _, id := range got {
		if !want[id] {
			t.Errorf("loose object %s written (%s): the pack holds it", id, g("", "cat-file", "-t", id))
		}
	}
	if len(got) != len(want) {
		t.Errorf("loose objects %v, want the blob, d3's tree and the root: %v", got, want)
	}
	g("", "update-index", "--add", "d3/f1.txt")
	if gitTree := g("", "write-tree"); gitTree != tree.String() {
		t.Errorf("StageTree's tree %s, git's %s", tree, gitTree)
	}
}

// statusAndIndex is what a snapshot stages from: the paths w's status names, and a
// copy of w's index (the caller closes it).
func statusAndIndex(t *testing.T, w *Worktree) ([]string, *TempIndex) {
	t.Helper()
	ctx := context.Background()
	status, err := w.StatusNow(ctx)
	if err != nil {
		t.Fatal(err)
	}
	paths, ok := ChangedPaths(status)
	if !ok {
		t.Fatalf("status does not parse: %q", status)
	}
	idx, err := w.CopyIndex(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return paths, idx
}
