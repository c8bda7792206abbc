package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestStatDataAgreesWithGit: the stat data read from an index in process are what
// `ls-files --debug` says of every entry whose stat data git would trust, in index
// versions 2, 3 (with skip-worktree and intent-to-add entries, which it leaves out) and
// 4 (paths prefix-compressed), in both object formats; an index written no later than
// its entries trusts none of them.
func TestStatDataAgreesWithGit(t *testing.T) {
	ctx := context.Background()
	for _, k := range []kind{kinds[0], kinds[2]} {
		for _, version := range []string{"2", "3", "4"} {
			t.Run(fmt.Sprintf("%s/v%s", k.name, version), func(t *testing.T) {
				r, g := testRepo(t, k)
				dir := r.TopLevel
				for _, f := range []string{"a.txt", "dir/b.txt", "dir/sub/c.txt", "dir/sub/cd.txt", "skip.txt", "x.sh"} {
					if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(dir, f), []byte(f+"\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.Chmod(filepath.Join(dir, "x.sh"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
					t.Fatal(err)
				}
				g("", "add", "-A")
				if version == "3" {
					g("", "update-index", "--skip-worktree", "skip.txt")
					if err := os.WriteFile(filepath.Join(dir, "new.txt"), []byte("n\n"), 0o644); err != nil {
						t.Fatal(err)
					}
					g("", "add", "-N", "new.txt")
				}
				g("", "update-index", "--index-version", version)
				index := filepath.Join(dir, ".git", "index")
				later := time.Now().Add(time.Second)
				if err := os.Chtimes(index, later, later); err != nil {
					t.Fatal(err)
				}
				want := map[string]IndexStat{}
				lines := strings.Split(g("", "ls-files", "--stage", "-v", "--debug"), "\n")
				for i := 0; i+5 < len(lines); i += 6 {
					var tag, mode, id, path string
					var stage int
					var s IndexStat
					var flags uint32
					if _, err := fmt.Sscanf(lines[i], "%s %s %s %d\t%s", &tag, &mode, &id, &stage, &path); err != nil {
						t.Fatalf("%q: %v", lines[i], err)
					}
					rest := strings.Join(lines[i+1:i+6], "\n")
					if _, err := fmt.Sscanf(strings.ReplaceAll(rest, "\t", " "), "  ctime: %d:%d\n  mtime: %d:%d\n  dev: %d ino: %d\n  uid: %d gid: %d\n  size: %d flags: %x",
						&s.Ctime[0], &s.Ctime[1], &s.Mtime[0], &s.Mtime[1], &s.Dev, &s.Ino, &s.UID, &s.GID, &s.Size, &flags); err != nil {
						t.Fatalf("%q: %v", rest, err)
					}
					if tag == "H" && flags&(1<<29) == 0 { // not intent-to-add
						s.Mode, s.ID = mode, id
						want[path] = s
					}
				}
				idx, err := r.Worktree(dir).CopyIndex(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer idx.Close()
				got := idx.StatData()
				n := 7 // the files and the link; in v3 not skip.txt
				if version == "3" {
					n = 6
				}
				if len(got) != n || !reflect.DeepEqual(got, want) {
					t.Errorf("StatData = %v\nls-files --debug says %v", got, want)
				}
				// Written no later than its entries: every one racily clean.
				if err := os.Chtimes(index, time.Unix(0, 0), time.Unix(0, 0)); err != nil {
					t.Fatal(err)
				}
				idx2, err := r.Worktree(dir).CopyIndex(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer idx2.Close()
				if got := idx2.StatData(); len(got) != 0 {
					t.Errorf("an index no newer than its entries: StatData = %v, want none", got)
				}
			})
		}
	}
}

// TestConvertedOnDiskSplitIndex: a split index holds only some entries (the others are
// in its shared index), so ConvertedOnDisk judges none of them and says so (all);
// the same index unsplit is read whole, and a clean file is no converted one.
func TestConvertedOnDiskSplitIndex(t *testing.T) {
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	dir := r.TopLevel
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g("", "add", "-A")
	g("", "commit", "-q", "-m", "a")
	for _, split := range []bool{false, true} {
		if split {
			g("", "update-index", "--split-index")
		}
		paths, all, err := r.Worktree(dir).ConvertedOnDisk(ctx)
		if err != nil || all != split || len(paths) != 0 {
			t.Errorf("split index %v: ConvertedOnDisk = %q, all %v, %v; want none, all %v", split, paths, all, err, split)
		}
	}
}
