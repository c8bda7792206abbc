package recovery

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/git-atlas/git-atlas/internal/git"
)

// verifier holds a tree read back from the object store against the files of a
// directory: every file on disk is in the tree with its blob id and mode (or is
// ignored), and every file of the tree is on disk. It hashes the files itself rather
// than asking git, so a fault in the capture cannot hide in the check; only files
// whose raw bytes differ are re-hashed by git, for clean filters (autocrlf, LFS).
type verifier struct {
	repo    *git.Repository
	wt      *git.Worktree // for config; nil means the repository's
	root    string
	skipped map[string]bool // skip-worktree entries: absent from disk on purpose
	// ignored files and wholly ignored directories (no trailing slash)
	ignoredFiles map[string]bool
	ignoredDirs  map[string]bool
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
	want string
	got  string
	err  error
}

// check compares tree with the directory. It returns the paths of nested repositories
// (gitlinks over non-empty directories), whose files the tree does not hold.
func (v *verifier) check(ctx context.Context, tree string) ([]string, error) {
	items, err := v.repo.LsTree(ctx, tree)
	if err != nil {
		return nil, fmt.Errorf("read back tree %s: %w", tree, err)
	}
	byPath := make(map[string]git.TreeItem, len(items))
	paths := make([]string, 0, len(items))
	var blobs []string
	for _, it := range items {
		byPath[it.Path] = it
		paths = append(paths, it.Path)
		if it.Type == "blob" {
			blobs = append(blobs, it.ID)
		}
	}
	sort.Strings(paths)
	missing, err := v.repo.MissingObjects(ctx, unique(blobs))
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("tree %s names %d missing objects (first %s)", tree, len(missing), missing[0])
	}
	cfg := v.wt
	if cfg == nil {
		cfg = v.repo.Worktree(v.repo.CommonDir)
	}
	fileMode := cfg.ConfigBool(ctx, "core.fileMode", true)
	symlinks := cfg.ConfigBool(ctx, "core.symlinks", true)
	sha256Repo := v.repo.ObjectFormat(ctx) == "sha256"

	seen := make(map[string]bool, len(items))
	var embedded []string
	var checks []*fileCheck
	changed := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrChanged}, args...)...)
	}
	hasUnder := func(dir string) bool {
		i := sort.SearchStrings(paths, dir+"/")
		return i < len(paths) && strings.HasPrefix(paths[i], dir+"/")
	}
	err = filepath.WalkDir(v.root, func(abs string, d fs.DirEntry, err error) error {
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
			if it, ok := byPath[rel]; ok && it.Type == "commit" {
				seen[rel] = true
				if entries, _ := os.ReadDir(abs); len(entries) > 0 {
					embedded = append(embedded, rel)
				}
				return filepath.SkipDir
			}
			if v.ignoredDirs[rel] && !hasUnder(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		it, ok := byPath[rel]
		if !ok {
			if v.ignored(rel) {
				return nil
			}
			info, err := d.Info()
			if err == nil && !info.Mode().IsRegular() && info.Mode()&fs.ModeSymlink == 0 {
				return nil // fifos, sockets, devices: git keeps none
			}
			return changed("%q is on disk but not in the snapshot", rel)
		}
		seen[rel] = true
		info, err := d.Info()
		if err != nil {
			return err
		}
		isLink := info.Mode()&fs.ModeSymlink != 0
		switch {
		case isLink && it.Mode != "120000":
			return changed("%q is a symlink on disk, %s in the snapshot", rel, it.Mode)
		case isLink:
		case !info.Mode().IsRegular():
			return changed("%q is not a regular file on disk", rel)
		case it.Mode == "120000" && !symlinks:
			// core.symlinks=false: the link is a plain file holding its target.
		case it.Mode != "100644" && it.Mode != "100755":
			return changed("%q is a file on disk, %s in the snapshot", rel, it.Mode)
		case fileMode && (info.Mode()&0o100 != 0) != (it.Mode == "100755"):
			return changed("%q has mode %v on disk, %s in the snapshot", rel, info.Mode().Perm(), it.Mode)
		}
		checks = append(checks, &fileCheck{rel: rel, abs: abs, link: isLink, want: it.ID})
		return nil
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
	for _, it := range items {
		if !seen[it.Path] && !v.skipped[it.Path] {
			return nil, changed("%q is in the snapshot but not on disk", it.Path)
		}
	}
	hashAll(checks, sha256Repo)
	var refilter []*fileCheck
	for _, c := range checks {
		if c.err != nil {
			return nil, fmt.Errorf("%w: hash %q: %v", ErrChanged, c.rel, c.err)
		}
		if c.got != c.want {
			if c.link {
				return nil, changed("symlink %q does not match the snapshot", c.rel)
			}
			refilter = append(refilter, c)
		}
	}
	if len(refilter) > 0 {
		rels := make([]string, len(refilter))
		for i, c := range refilter {
			rels[i] = c.rel
		}
		ids, err := v.repo.HashFiles(ctx, v.root, rels)
		if err != nil {
			return nil, fmt.Errorf("%w: %q does not match the snapshot (%v)", ErrChanged, rels[0], err)
		}
		for i, c := range refilter {
			if ids[i] != c.want {
				return nil, changed("%q does not match the snapshot", c.rel)
			}
		}
	}
	return embedded, nil
}

// hashAll computes git blob ids of the files (a symlink's blob is its target) on
// every core.
func hashAll(checks []*fileCheck, sha256Repo bool) {
	work := make(chan *fileCheck)
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
			buf := make([]byte, 128<<10)
			for c := range work {
				c.got, c.err = blobID(h, buf, c.abs, c.link)
			}
		}()
	}
	for _, c := range checks {
		work <- c
	}
	close(work)
	wg.Wait()
}

func blobID(h hash.Hash, buf []byte, path string, link bool) (string, error) {
	h.Reset()
	if link {
		target, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "blob %d\x00%s", len(target), target)
		return fmt.Sprintf("%x", h.Sum(nil)), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "blob %d\x00", info.Size())
	n, err := io.CopyBuffer(h, f, buf)
	if err != nil {
		return "", err
	}
	if n != info.Size() {
		return "", fmt.Errorf("size changed while reading (%d, then %d bytes)", info.Size(), n)
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
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
