package git

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stageTreeMaxFile bounds the files StageTree reads whole into memory; a larger one
// is left to git, which streams it.
const stageTreeMaxFile = 32 << 20

// StageTree is StagePaths of paths followed by WriteTree, in process: each named
// path's file (or symbolic link) on disk is written as a blob, a named path gone from
// disk leaves the index, and the trees of the resulting entries are written, every
// object flushed and its directory after, as objectsWritten does after git. The
// temporary index file itself is not changed. It stores a file's bytes as they are
// (no conversion): the caller uses it only where git would convert nothing (the
// snapshot's fast way), and reads the tree back against the disk.
//
// ok is false, nothing named and the caller left to git, whenever the case is not
// the plain one this code knows git's answer to: a store go-git cannot open, an index
// not wholly understood (parseIndexWhole) or holding an unmerged or intent-to-add
// entry, core.fileMode or core.symlinks false, core.ignoreCase or
// core.precomposeUnicode true, a named path that is not a plain relative path, names
// a .git component or an attributes file, lies beyond a symbolic link, is a directory
// (a nested repository) or a special file, a large file, a path gone that the index
// does not hold, a file where the index has a directory or the reverse, or any error
// reading the disk. Only a full disk is an error.
func (t *TempIndex) StageTree(ctx context.Context, paths []string) (tree OID, ok bool, err error) {
	g, goGit := t.repo.objects.(*goGitStore)
	if !goGit || t.dir == "" {
		return OID{}, false, nil
	}
	wt := t.repo.Worktree(t.dir)
	if !wt.ConfigBool(ctx, "core.fileMode", true) || !wt.ConfigBool(ctx, "core.symlinks", true) ||
		wt.ConfigBool(ctx, "core.ignoreCase", false) || wt.ConfigBool(ctx, "core.precomposeUnicode", false) {
		return OID{}, false, nil
	}
	sha256Repo := t.repo.ObjectFormat == "sha256"
	data, err := os.ReadFile(t.Path)
	if err != nil {
		return OID{}, false, nil
	}
	ix, whole := parseIndexWhole(data, sha256Repo)
	if !whole {
		return OID{}, false, nil
	}
	entries := make(map[string]stagedEntry, len(ix.entries)+len(paths))
	for _, e := range ix.entries {
		if e.stage != 0 || e.intentToAdd {
			return OID{}, false, nil
		}
		entries[e.path] = stagedEntry{mode: e.stat.Mode, id: e.stat.ID}
	}
	// What each named path is on disk, read on every core at once.
	paths = slices.Compact(slices.Sorted(slices.Values(paths)))
	for _, p := range paths {
		if !plainPath(p) {
			return OID{}, false, nil
		}
	}
	dirs := dirCheck{root: t.dir, seen: map[string]bool{}}
	for _, p := range paths {
		if !dirs.under(p) {
			return OID{}, false, nil
		}
	}
	loose := g.loose()
	start := time.Now()
	found := make([]stagedFile, len(paths))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(stageWorkers, len(paths)) {
		wg.Go(func() {
			for i := range next {
				found[i] = loose.stageFile(filepath.Join(t.dir, filepath.FromSlash(paths[i])))
			}
		})
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, f := range found {
		if IsNoSpace(f.err) {
			t.repo.removeTmpObjects(start)
			return OID{}, false, f.err
		}
		if f.err != nil {
			return OID{}, false, nil
		}
	}
	for i, p := range paths {
		f := found[i]
		switch {
		case f.gone:
			if _, held := entries[p]; !held {
				return OID{}, false, nil
			}
			delete(entries, p)
		case f.mode == "":
			return OID{}, false, nil // a directory or a special file: git's to judge
		default:
			entries[p] = stagedEntry{mode: f.mode, id: f.id}
		}
	}
	// A path that is a file and a directory's prefix at once: update-index --replace
	// drops one of them, which is git's to do.
	for p := range entries {
		for d := parentOf(p); d != ""; d = parentOf(d) {
			if _, clash := entries[d]; clash {
				return OID{}, false, nil
			}
		}
	}
	sorted := make([]string, 0, len(entries))
	for p := range entries {
		sorted = append(sorted, p)
	}
	slices.Sort(sorted)
	w := stagedTreeWriter{loose: loose, entries: entries, hashLen: objectIDLen(sha256Repo), trees: map[string][]byte{}}
	root, err := w.tree(sorted, "")
	if err == nil {
		err = w.writeMissing(ctx, t.repo)
	}
	if err == nil {
		err = t.repo.syncObjectDirs(start)
	}
	if err != nil {
		if IsNoSpace(err) {
			t.repo.removeTmpObjects(start)
			return OID{}, false, err
		}
		return OID{}, false, nil
	}
	id, err := ParseOID(root)
	if err != nil {
		return OID{}, false, nil
	}
	return id, true, nil
}

// stageWorkers is how many files StageTree reads and writes at once: more than the
// cores, since each waits for its flush.
const stageWorkers = 4

// stagedEntry is one entry of the index StageTree builds.
type stagedEntry struct{ mode, id string }

// stagedFile is what StageTree found at a named path: gone from disk, a file or link
// written as a blob (mode and id), or neither (mode "": left to git).
type stagedFile struct {
	gone     bool
	mode, id string
	err      error
}

// plainPath reports whether p is a path git names in a worktree as it is: relative,
// slash-separated, no empty, "." or ".." component, no .git component and no
// attributes file (an attribute on disk may ask git for a conversion) in any case.
func plainPath(p string) bool {
	if p == "" || strings.ContainsRune(p, 0) {
		return false
	}
	for c := range strings.SplitSeq(p, "/") {
		if c == "" || c == "." || c == ".." || strings.EqualFold(c, ".git") || strings.EqualFold(c, ".gitattributes") ||
			strings.HasPrefix(strings.ToLower(c), ".git~") {
			return false
		}
	}
	return true
}

func parentOf(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	return p[:i]
}

// dirCheck knows which directories of root are real directories, not links.
type dirCheck struct {
	root string
	seen map[string]bool
}

// under reports whether every directory above p is a directory on disk (a missing
// one is fine: the path is gone), none a symbolic link.
func (d dirCheck) under(p string) bool {
	dir := parentOf(p)
	if dir == "" {
		return true
	}
	if ok, done := d.seen[dir]; done {
		return ok
	}
	ok := d.under(dir)
	if ok {
		fi, err := os.Lstat(filepath.Join(d.root, filepath.FromSlash(dir)))
		ok = errors.Is(err, fs.ErrNotExist) || err == nil && fi.IsDir()
	}
	d.seen[dir] = ok
	return ok
}

// stageFile reads the file or link at path as update-index --add does, without
// conversions, and writes its blob (objects/xx left for the caller to flush).
func (l looseWriter) stageFile(path string) stagedFile {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		if err == syscall.ENOENT || err == syscall.ENOTDIR {
			return stagedFile{gone: true}
		}
		return stagedFile{err: err}
	}
	var data []byte
	var mode string
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFLNK:
		target, err := os.Readlink(path)
		if err != nil {
			return stagedFile{err: err}
		}
		data, mode = []byte(target), "120000"
	case syscall.S_IFREG:
		if st.Size > stageTreeMaxFile {
			return stagedFile{}
		}
		var err error
		if data, err = readRegular(path, st.Size); err != nil {
			return stagedFile{err: err}
		}
		mode = "100644"
		if st.Mode&0o100 != 0 {
			mode = "100755"
		}
	default:
		return stagedFile{}
	}
	id, err := l.writeObject("blob", data, false)
	if err != nil {
		return stagedFile{err: err}
	}
	return stagedFile{mode: mode, id: id}
}

// readRegular reads the regular file at path, not following a link, expecting size
// bytes; a file that is no longer regular or changed size is an error.
func readRegular(path string, size int64) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer func() { _ = syscall.Close(fd) }()
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size != size {
		return nil, errors.New(path + " changed while it was read")
	}
	buf := make([]byte, size+1) // one byte more: a file that grew reads past size
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	if int64(n) != size {
		return nil, errors.New(path + " changed while it was read")
	}
	return buf[:n], nil
}

// stagedTreeWriter builds the trees of a sorted list of index entries, then writes
// those the repository does not hold.
type stagedTreeWriter struct {
	loose   looseWriter
	entries map[string]stagedEntry
	hashLen int
	trees   map[string][]byte // id -> body, every tree built
	order   []string          // the ids in trees, each subtree before its parent
}

// tree builds the tree of paths (sorted, all under prefix) and returns its id. The
// index's order is the tree's: a directory's entries sort together, and where a
// file's name and a directory's differ the directory compares as its name and a
// slash, as it does inside the full paths.
func (w *stagedTreeWriter) tree(paths []string, prefix string) (string, error) {
	var body bytes.Buffer
	for i := 0; i < len(paths); {
		name := paths[i][len(prefix):]
		var mode, id string
		if dir, _, sub := strings.Cut(name, "/"); sub {
			inner := prefix + dir + "/"
			j := i + 1
			for j < len(paths) && strings.HasPrefix(paths[j], inner) {
				j++
			}
			var err error
			if id, err = w.tree(paths[i:j], inner); err != nil {
				return "", err
			}
			mode, name, i = "40000", dir, j
		} else {
			e := w.entries[paths[i]]
			mode, id = e.mode, e.id
			i++
		}
		raw, err := hex.DecodeString(id)
		if err != nil || len(raw) != w.hashLen {
			return "", errors.New("tree entry " + prefix + name + ": bad object id")
		}
		body.WriteString(mode + " " + name + "\x00")
		body.Write(raw)
	}
	id := w.loose.id("tree", body.Bytes())
	if _, seen := w.trees[id]; !seen {
		w.trees[id] = body.Bytes()
		w.order = append(w.order, id)
	}
	return id, nil
}

// writeMissing writes the trees built that the repository does not hold, subtrees
// first: most of a snapshot's trees are its HEAD's, and in a packed repository
// writing each again as a loose object (a file and a flush apiece) is what git's
// write-tree does not do either. A tree held loose goes through writeObject all the
// same, which reads it back and writes a torn one again; one that is not loose is
// asked of the command's cat-file, and one found there (in a pack) is not written;
// a repository with no pack and no alternates holds nothing that is not loose, and
// is not asked. Should that question fail, every tree is written.
func (w *stagedTreeWriter) writeMissing(ctx context.Context, r *Repository) error {
	var notLoose []OID
	for _, id := range w.order {
		if _, err := os.Lstat(w.loose.path(id)); err != nil {
			if oid, err := ParseOID(id); err == nil {
				notLoose = append(notLoose, oid)
			}
		}
	}
	packed := map[string]bool{}
	if len(notLoose) > 0 && !w.loose.onlyLoose() {
		if sizes, _, err := r.ObjectSizes(ctx, notLoose); err == nil {
			for id := range sizes {
				packed[id] = true
			}
		}
	}
	for _, id := range w.order {
		if packed[id] {
			continue
		}
		if err := w.loose.writeHashed(id, "tree", w.trees[id], false); err != nil {
			return err
		}
	}
	return nil
}

// onlyLoose reports whether every object of the store is loose: no pack in
// objects/pack and no objects/info/alternates. Anything unreadable says no.
func (l looseWriter) onlyLoose() bool {
	packs, ok := l.packFiles(".pack")
	return ok && len(packs) == 0
}

// packFiles lists the files of objects/pack whose names end in suffix; ok is false
// where the store has alternates (objects elsewhere) or the directory does not read.
func (l looseWriter) packFiles(suffix string) (paths []string, ok bool) {
	if _, err := os.Lstat(filepath.Join(l.objects, "info", "alternates")); !errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	dir := filepath.Join(l.objects, "pack")
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), suffix) {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	return paths, true
}
