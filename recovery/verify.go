package recovery

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/git-atlas/git-atlas/internal/git"
)

// verifier holds a tree read back from the object store against the files of a
// directory: every file on disk is in the tree with its blob id and mode (or is
// ignored), and every file of the tree is on disk. It hashes the files' raw bytes
// itself rather than asking git, so a fault in the capture cannot hide in the check,
// and no conversion (autocrlf, clean filters, ident, encodings) stands between the
// snapshot and the bytes on disk: a blob matches only the very bytes it holds.
type verifier struct {
	repo    *git.Repository
	wt      *git.Worktree // for config; nil means the repository's
	root    string
	skipped map[string]bool // skip-worktree entries: absent from disk on purpose
	// ignored files and wholly ignored directories (no trailing slash)
	ignoredFiles map[string]bool
	ignoredDirs  map[string]bool
	// restored: the files were written from the tree (a restore), so a difference is
	// the restore's failure, not a worktree that changed during a snapshot.
	restored bool
}

func (v *verifier) addIgnored(p string, dir bool) {
	if v.ignoredFiles == nil {
		v.ignoredFiles, v.ignoredDirs = map[string]bool{}, map[string]bool{}
	}
	if dir {
		v.ignoredDirs[p] = true
	} else {
		v.ignoredFiles[p] = true
	}
}

func (v *verifier) ignored(p string) bool {
	if v.ignoredFiles[p] {
		return true
	}
	for d := p; ; {
		i := strings.LastIndexByte(d, '/')
		if i < 0 {
			return false
		}
		d = d[:i]
		if v.ignoredDirs[d] {
			return true
		}
	}
}

// fileCheck is one regular file or symlink to hash.
type fileCheck struct {
	rel  string
	abs  string
	link bool
	exec int // -1: any; 0 or 1: the exec bit the snapshot holds
	want string
	got  string
	err  error
}

// check compares tree with the directory. It returns the paths of nested repositories
// (gitlinks over non-empty directories), whose files the tree does not hold.
//
// In steps: read the tree back (every blob it names must be there), walk the
// directory matching each entry to the tree (fileCheckOf decides what each file
// needs), find what the tree holds and the walk never saw, then hash the files and
// compare.
//
// The object store's answer (git cat-file) and the files' hashes are independent:
// both run at once, and a missing object is reported before any difference, as if
// they had run in turn.
func (v *verifier) check(ctx context.Context, tree string) ([]string, error) {
	t, blobs, err := v.readTree(ctx, tree)
	if err != nil {
		return nil, err
	}
	missing := make(chan error, 1)
	go func() { missing <- v.haveBlobs(ctx, tree, blobs) }()
	embedded, err := v.compareDir(ctx, t)
	if merr := <-missing; merr != nil {
		return nil, merr
	}
	return embedded, err
}

// compareDir walks the directory against the tree read back, then hashes the files
// and compares.
func (v *verifier) compareDir(ctx context.Context, t *treeIndex) ([]string, error) {
	w, err := v.walk(t, v.rules(ctx))
	if err != nil {
		return nil, err
	}
	for _, it := range t.items {
		if !w.seen[it.Path] && !v.skipped[it.Path] {
			return nil, v.changed("%q is in the snapshot but not on disk", it.Path)
		}
	}
	hashAll(w.checks, v.repo.ObjectFormat == "sha256")
	if err := v.compare(w.checks); err != nil {
		return nil, err
	}
	return w.embedded, nil
}

// treeIndex is a tree read back from the object store.
type treeIndex struct {
	items  []git.TreeItem
	byPath map[string]git.TreeItem
	paths  []string // sorted
}

// readTree lists tree, and the distinct blobs it names.
func (v *verifier) readTree(ctx context.Context, tree string) (*treeIndex, []string, error) {
	items, err := v.repo.LsTree(ctx, tree)
	if err != nil {
		return nil, nil, fmt.Errorf("read back tree %s: %w", tree, err)
	}
	t := &treeIndex{items: items, byPath: make(map[string]git.TreeItem, len(items)), paths: make([]string, 0, len(items))}
	var blobs []string
	for _, it := range items {
		t.byPath[it.Path] = it
		t.paths = append(t.paths, it.Path)
		if it.Type == "blob" {
			blobs = append(blobs, it.ID)
		}
	}
	sort.Strings(t.paths)
	return t, unique(blobs), nil
}

// haveBlobs makes sure every one of blobs (named by tree) is in the object store.
func (v *verifier) haveBlobs(ctx context.Context, tree string, blobs []string) error {
	missing, err := v.repo.MissingObjects(ctx, blobs)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("tree %s names %d missing objects (first %s)", tree, len(missing), missing[0])
	}
	return nil
}

// hasUnder reports whether the tree holds anything under dir.
func (t *treeIndex) hasUnder(dir string) bool {
	i := sort.SearchStrings(t.paths, dir+"/")
	return i < len(t.paths) && strings.HasPrefix(t.paths[i], dir+"/")
}

// fileRules are the worktree's config that decides how a file on disk compares with
// the tree: core.fileMode (is the exec bit meaningful) and core.symlinks (is a link
// a link, or a plain file holding its target).
type fileRules struct{ fileMode, symlinks bool }

func (v *verifier) rules(ctx context.Context) fileRules {
	cfg := v.wt
	if cfg == nil {
		cfg = v.repo.Worktree(v.repo.CommonDir)
	}
	return fileRules{fileMode: cfg.ConfigBool(ctx, "core.fileMode", true), symlinks: cfg.ConfigBool(ctx, "core.symlinks", true)}
}

// changed is a difference between the tree and the directory: the worktree changed
// during a snapshot (ErrChanged), or, after a restore, the restore failed.
func (v *verifier) changed(format string, args ...any) error {
	if v.restored {
		return fmt.Errorf(format, args...)
	}
	return fmt.Errorf("%w: "+format, append([]any{ErrChanged}, args...)...)
}

// walked is what the walk of the directory found.
type walked struct {
	seen     map[string]bool // the tree's paths found on disk
	embedded []string        // nested repositories
	checks   []*fileCheck    // the files to hash
}

// walk matches every entry of the directory to the tree.
func (v *verifier) walk(t *treeIndex, rules fileRules) (*walked, error) {
	w := &walked{seen: make(map[string]bool, len(t.items))}
	err := filepath.WalkDir(v.root, func(abs string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if abs == v.root {
			return nil
		}
		rel := filepath.ToSlash(strings.TrimPrefix(abs, v.root+string(filepath.Separator)))
		if rel == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if it, ok := t.byPath[rel]; ok && it.Type == "commit" {
				w.seen[rel] = true
				if entries, _ := os.ReadDir(abs); len(entries) > 0 {
					w.embedded = append(w.embedded, rel)
				}
				return filepath.SkipDir
			}
			if v.ignoredDirs[rel] && !t.hasUnder(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		it, ok := t.byPath[rel]
		if ok {
			w.seen[rel] = true
		}
		c, err := v.fileCheckOf(rel, abs, d.Type(), it, ok, rules)
		if c != nil {
			w.checks = append(w.checks, c)
		}
		return err
	})
	if err != nil {
		if errors.Is(err, ErrChanged) {
			return nil, err
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %v", ErrChanged, err)
		}
		return nil, err
	}
	return w, nil
}

// fileCheckOf decides what the file (or symlink, or special file) at rel, of type
// typ, needs to match it, the tree's entry (inTree: the tree has one): nothing (an
// ignored file, a file git keeps none of), a hash (the returned check), or nothing
// can make it match (the error). It reads nothing from disk.
func (v *verifier) fileCheckOf(rel, abs string, typ fs.FileMode, it git.TreeItem, inTree bool, rules fileRules) (*fileCheck, error) {
	if !inTree {
		if v.ignored(rel) {
			return nil, nil
		}
		if !typ.IsRegular() && typ&fs.ModeSymlink == 0 {
			return nil, nil // fifos, sockets, devices: git keeps none
		}
		return nil, v.changed("%q is on disk but not in the snapshot", rel)
	}
	isLink := typ&fs.ModeSymlink != 0
	switch {
	case isLink && it.Mode != "120000":
		return nil, v.changed("%q is a symlink on disk, %s in the snapshot", rel, it.Mode)
	case isLink:
	case !typ.IsRegular():
		return nil, v.changed("%q is not a regular file on disk", rel)
	case it.Mode == "120000" && !rules.symlinks:
		// core.symlinks=false: the link is a plain file holding its target.
	case it.Mode != "100644" && it.Mode != "100755":
		return nil, v.changed("%q is a file on disk, %s in the snapshot", rel, it.Mode)
	}
	// The exec bit is checked by the hasher, from the fstat of the open file.
	exec := -1
	if rules.fileMode && it.Mode != "120000" {
		exec = 0
		if it.Mode == "100755" {
			exec = 1
		}
	}
	return &fileCheck{rel: rel, abs: abs, link: isLink, exec: exec, want: it.ID}, nil
}

// compare fails at the first file whose hash is not its blob's.
func (v *verifier) compare(checks []*fileCheck) error {
	for _, c := range checks {
		if c.err != nil {
			return fmt.Errorf("%w: hash %q: %v", ErrChanged, c.rel, c.err)
		}
		if c.got != c.want {
			if c.link {
				return v.changed("symlink %q does not match the snapshot", c.rel)
			}
			return v.changed("%q does not match the snapshot byte for byte", c.rel)
		}
	}
	return nil
}

// hashAll computes git blob ids of the files (a symlink's blob is its target) on
// every core, with raw system calls: at 20,000 files, the os.File machinery (poller
// registration, extra stat and read calls) doubled the verification's cost.
func hashAll(checks []*fileCheck, sha256Repo bool) {
	work := make(chan []*fileCheck)
	var wg sync.WaitGroup
	n := runtime.NumCPU()
	if n > 8 {
		n = 8
	}
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var h hash.Hash
			if sha256Repo {
				h = sha256.New()
			} else {
				h = sha1.New()
			}
			buf := make([]byte, 256<<10)
			for batch := range work {
				for _, c := range batch {
					c.got, c.err = blobID(h, buf, c)
				}
			}
		}()
	}
	for i := 0; i < len(checks); i += 64 {
		work <- checks[i:min(i+64, len(checks))]
	}
	close(work)
	wg.Wait()
}

func blobID(h hash.Hash, buf []byte, c *fileCheck) (string, error) {
	h.Reset()
	if c.link {
		target, err := os.Readlink(c.abs)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "blob %d\x00%s", len(target), target)
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	fd, err := syscall.Open(c.abs, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return "", &fs.PathError{Op: "open", Path: c.abs, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return "", err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return "", fmt.Errorf("no longer a regular file")
	}
	if c.exec >= 0 && (st.Mode&0o100 != 0) != (c.exec == 1) {
		return "", fmt.Errorf("mode %o on disk, exec=%d in the snapshot", st.Mode&0o777, c.exec)
	}
	fmt.Fprintf(h, "blob %d\x00", st.Size)
	var total int64
	for {
		// Ask for one byte more than is left: a short read of a regular file is its end.
		want := len(buf)
		if left := st.Size - total + 1; left < int64(want) {
			want = int(left)
		}
		n, err := syscall.Read(fd, buf[:want])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return "", err
		}
		h.Write(buf[:n])
		total += int64(n)
		if n < want || n == 0 {
			break
		}
	}
	if total != st.Size {
		return "", fmt.Errorf("size changed while reading (%d, then %d bytes)", st.Size, total)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func unique(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
