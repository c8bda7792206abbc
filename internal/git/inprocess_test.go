package git

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestConfigReadOnceAgreesWithGit: every config read of a command comes from one
// `git config --list` (later reads start no process), and says what `git config` says
// key by key: last value wins, path values expanded, booleans read as git reads
// them, includes followed, subsections kept in their case.
func TestConfigReadOnceAgreesWithGit(t *testing.T) {
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	inc := filepath.Join(t.TempDir(), "inc")
	if err := os.WriteFile(inc, []byte("[atlas]\n\tremote = fromInclude\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g("", "config", "atlas.remote", "first")
	g("", "config", "include.path", inc)
	g("", "config", "atlas.worktreeRoot", "~/trees")
	g("", "config", "core.fileMode", "off")
	g("", "config", "core.symlinks", "2k")
	g("", "config", "core.autocrlf", "0x0")
	g("", "config", `filter.My.Lfs.clean`, "x")
	g("", "config", "--add", "core.hooksPath", "~/h1")
	g("", "config", "--add", "core.hooksPath", "/abs/h2")

	w := r.Worktree(r.TopLevel)
	before := Started()
	if got, want := r.Config(ctx, "atlas.remote"), g("", "config", "--get", "atlas.remote"); got != want || got != "fromInclude" {
		t.Errorf("Config(atlas.remote) = %q, git says %q", got, want)
	}
	if n := Started() - before; n != 1 {
		t.Errorf("the first read started %d processes, want 1", n)
	}
	before = Started()
	p, set, err := r.ConfigPath(ctx, "atlas.WORKTREEROOT")
	if want := g("", "config", "--type=path", "--get", "atlas.worktreeRoot"); err != nil || !set || p != want {
		t.Errorf("ConfigPath = %q %v %v, git says %q", p, set, err, want)
	}
	if n := Started() - before; n != 0 {
		t.Errorf("a second read started %d processes, want 0", n)
	}
	// git-atlas's own git calls carry -c core.hooksPath=/dev/null (scope "command"),
	// the list as the per-key call did.
	all, err := r.ConfigPathAll(ctx, "core.hooksPath")
	if want, _ := r.configPathAllFromGit(ctx, "core.hooksPath"); err != nil || !reflect.DeepEqual(all, want) || len(all) != 3 {
		t.Errorf("ConfigPathAll = %q %v, git says %q", all, err, want)
	}
	before = Started()
	for _, key := range []string{"core.fileMode", "core.symlinks"} {
		if got, want := w.ConfigBool(ctx, key, true), g("", "config", "--type=bool", "--get", key) == "true"; got != want {
			t.Errorf("ConfigBool(%s) = %v, git says %v", key, got, want)
		}
	}
	if _, set, _ := r.ConfigPath(ctx, "atlas.nothing"); set {
		t.Error("an unset key reads as set")
	}
	if args := r.filtersOff(ctx); !reflect.DeepEqual(args[:2], []string{"-c", "filter.My.Lfs.clean="}) {
		t.Errorf("filtersOff = %q: the driver name keeps its case and dots", args)
	}
	// The worktree's list is asked of git once: discover leaves a repository whose
	// config has includes to git, so the worktree's config is not taken as the
	// repository's.
	if n := Started() - before; n != 1 {
		t.Errorf("later reads started %d processes, want 1", n)
	}
	before = Started()
	w.ConfigBool(ctx, "core.fileMode", true)
	if n := Started() - before; n != 0 {
		t.Errorf("a second worktree read started %d processes, want 0", n)
	}
	// core.autocrlf=0x0: a form only git reads; Conversions must still see it as
	// git does (false), asking git.
	if got := w.configOf(ctx).boolean(ctx, w.Path, "core.autocrlf", true); got {
		t.Error("core.autocrlf=0x0 read as true")
	}

	r.ReloadConfig()
	g("", "config", "--unset", "include.path")
	if got := r.Config(ctx, "atlas.remote"); got != "first" {
		t.Errorf("after ReloadConfig, Config = %q, want first", got)
	}
}

// TestParseBool holds parseBool to git's reading of a boolean.
func TestParseBool(t *testing.T) {
	for v, want := range map[string]int{"true": 1, "YES": 1, "on": 1, "1": 1, "-3": 1, "2k": 1, "false": 0, "No": 0, "off": 0, "": 0, "0": 0, "0m": 0, "maybe": -1, "1kk": -1, "k": -1} {
		b, ok := parseBool(v)
		if got := map[bool]int{true: 1, false: 0}[b]; !ok && want != -1 || ok && got != want {
			t.Errorf("parseBool(%q) = %v %v, want %d", v, b, ok, want)
		}
	}
}

// TestLooseReadsAgreeWithGit: commits, first-parent walks, blobs at paths and tree
// listings read in process from loose objects (no process started) answer as git
// does, and after a gc packs everything, git answers the same again.
func TestLooseReadsAgreeWithGit(t *testing.T) {
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	blob, _ := r.WriteBlob(ctx, []byte("state\n"))
	sub, _ := r.WriteTree(ctx, []TreeEntry{{Name: "x.json", Blob: blob.String()}})
	_ = sub
	tree, _ := r.WriteTree(ctx, []TreeEntry{{Name: "state.json", Blob: blob.String()}})
	older, _ := r.WriteBlob(ctx, []byte("first\n"))
	firstTree, _ := r.WriteTree(ctx, []TreeEntry{{Name: "state.json", Blob: older.String()}})
	first, _ := r.WriteCommit(ctx, firstTree, nil, "one\n")
	tip, err := r.WriteCommit(ctx, tree, []OID{first}, "two\n")
	if err != nil {
		t.Fatal(err)
	}
	specs := []BlobSpec{{Commit: tip, Path: "state.json"}, {Commit: tip, Path: "absent.json"}, {Commit: tip, Path: "state.json/x"},
		{Commit: tip, Path: "state.json", Back: 1}, {Commit: tip, Path: "state.json", Back: 2}}
	read := func() (CommitInfo, []OID, []Blob, []TreeItem) {
		t.Helper()
		info, err := r.Commit(ctx, tip)
		if err != nil {
			t.Fatal(err)
		}
		chain, err := r.FirstParents(ctx, tip)
		if err != nil {
			t.Fatal(err)
		}
		blobs, err := r.BlobsAt(ctx, specs)
		if err != nil {
			t.Fatal(err)
		}
		for i := range blobs {
			if blobs[i].Err != nil {
				blobs[i].Err = nil // the wording may differ; found or not is compared
				blobs[i].ID = "missing"
			}
		}
		items, err := r.LsTree(ctx, tip)
		if err != nil {
			t.Fatal(err)
		}
		return info, chain, blobs, items
	}
	before := Started()
	info, chain, blobs, items := read()
	// One spec only git answers: a path through a file.
	if n := Started() - before; n != 1 {
		t.Errorf("loose reads started %d git processes, want 1 (the spec only git answers)", n)
	}
	g("", "update-ref", "refs/atlas/runs/t", tip.String())
	g("", "gc", "-q", "--prune=now")
	if _, _, ok := (&goGitStore{dir: r.CommonDir}).loose().readLoose(tip.String()); ok {
		t.Fatal("the commit is still loose after gc")
	}
	info2, chain2, blobs2, items2 := read()
	if !reflect.DeepEqual(info, info2) || !reflect.DeepEqual(chain, chain2) || !reflect.DeepEqual(blobs, blobs2) || !reflect.DeepEqual(items, items2) {
		t.Errorf("in process:\n%v %v %v %v\ngit:\n%v %v %v %v", info, chain, blobs, items, info2, chain2, blobs2, items2)
	}
	if want := g("", "ls-tree", "-r", "--full-tree", tip.String()); len(items) != 1 || want != items[0].Mode+" "+items[0].Type+" "+items[0].ID+"\t"+items[0].Path {
		t.Errorf("LsTree = %v, git says %q", items, want)
	}
}

// TestListRefsLocalAgreesWithGit: refs listed from the files (loose over packed, a
// prefix matching whole components) are what for-each-ref lists.
func TestListRefsLocalAgreesWithGit(t *testing.T) {
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	head := g("", "rev-parse", "HEAD")
	for _, ref := range []string{"refs/atlas/runs/a", "refs/atlas/runs/b", "refs/atlas/runsx", "refs/heads/atlas/r/node/n"} {
		g("", "update-ref", ref, head)
	}
	g("", "pack-refs", "--all")
	g("", "update-ref", "refs/atlas/runs/c", head)
	g("", "commit", "-q", "--allow-empty", "-m", "second")
	g("", "update-ref", "refs/atlas/runs/a", "HEAD") // loose, over its packed value
	for _, prefixes := range [][]string{{"refs/atlas/runs"}, {"refs/atlas"}, {"refs/atlas/runs/", "refs/heads/atlas"}, {"refs/nothing"}} {
		local, ok := r.listRefsLocal(prefixes)
		if !ok {
			t.Fatalf("%v: not read in process", prefixes)
		}
		var got []string
		for _, ref := range local {
			got = append(got, ref.ID+" "+ref.Name)
		}
		want := g("", append([]string{"for-each-ref", "--format=%(objectname) %(refname)", "--"}, prefixes...)...)
		if strings.Join(got, "\n") != want {
			t.Errorf("%v: in process\n%s\nfor-each-ref\n%s", prefixes, strings.Join(got, "\n"), want)
		}
	}
	if _, ok := r.listRefsLocal([]string{"refs/bisect"}); ok {
		t.Error("a per-worktree namespace was read in process")
	}
	if err := os.WriteFile(filepath.Join(r.CommonDir, "refs", "atlas", "runs", "sym"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.listRefsLocal([]string{"refs/atlas/runs"}); ok {
		t.Error("a symbolic ref was read in process; git resolves it")
	}
	if _, err := r.ListRefs(ctx, "refs/atlas/runs"); err != nil {
		t.Error(err)
	}
}
