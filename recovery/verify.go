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
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/par"
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
	// stat holds, by path, the entries of the worktree's own index whose stat data git
	// would trust (git.TempIndex.StatData). A file whose blob and mode in the tree
	// are its entry's, and whose stat data on disk are still exactly what the entry
	// recorded, is the entry's blob, as git's own status and add judge it: it is not
	// read again, once the blob's size is seen to be the file's (a file checked out
	// through a conversion that is off now is not its blob's bytes; see statChecks).
	stat map[string]git.IndexStat
	// stagedByGit: the tree was staged by git (add -A, or the paths status named),
	// which took a stat-clean file as its blob unread, as the stat rule does. A file a
	// checkout converted (a filter, ident, line endings, an encoding) is not its blob
	// though its stat data are clean, and with the conversion's configuration gone
	// since, git's judgment and the stat rule agree and are both wrong: a file that
	// any .gitattributes of the worktree marks for a conversion is hashed, never
	// taken by its stat data (the capture is then taken the raw way).
	stagedByGit bool
	// items is the tree as read back already (nil: check reads it).
	items []git.TreeItem
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
	// byStat: the file's stat data are its index entry's (verifier.stat), so it is
	// not hashed unless size, its size on disk, is not its blob's.
	byStat bool
	size   int64
	// converted: byStat, staged by git, and its size on disk is not its blob's: a
	// checkout converted it and git sees no conversion now (see statChecks)
	converted bool
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
	done := make(chan struct{})
	var sizes map[string]int64
	var merr error
	go func() {
		sizes, merr = v.haveBlobs(ctx, tree, blobs)
		close(done)
	}()
	blobSizes := func() (map[string]int64, error) {
		<-done
		return sizes, merr
	}
	embedded, err := v.compareDir(ctx, t, blobSizes)
	if _, merr := blobSizes(); merr != nil {
		return nil, merr
	}
	return embedded, err
}

// compareDir walks the directory against the tree read back, hashing the files as it
// goes, then compares.
func (v *verifier) compareDir(ctx context.Context, t *treeIndex, blobSizes func() (map[string]int64, error)) ([]string, error) {
	w, err := v.walk(t, v.rules(ctx))
	if err != nil {
		return nil, err
	}
	for i, it := range t.items {
		if !w.seen[i] && !v.skipped[it.Path] {
			return nil, v.changed("%q is in the snapshot but not on disk", it.Path)
		}
	}
	if v.stagedByGit && w.attributes {
		if err := v.hashConverted(ctx, w.checks); err != nil {
			return nil, err
		}
	}
	if err := v.statChecks(w.checks, blobSizes); err != nil {
		return nil, err
	}
	if err := v.compare(w.checks); err != nil {
		return nil, err
	}
	return w.embedded, nil
}

// hashConverted hashes, rather than take them by their stat data, the files an
// attribute marks for a conversion at checkout (see verifier.stagedByGit).
func (v *verifier) hashConverted(ctx context.Context, checks []*fileCheck) error {
	var paths []string
	for _, c := range checks {
		if c.byStat {
			paths = append(paths, c.rel)
		}
	}
	converted, err := v.wt.Converted(ctx, paths)
	if err != nil {
		return err
	}
	var hash []*fileCheck
	for _, c := range checks {
		if c.byStat && converted[c.rel] {
			c.byStat = false
			hash = append(hash, c)
		}
	}
	hashAll(hash, v.repo.ObjectFormat == "sha256")
	return nil
}

// statChecks settles the files the walk matched by their stat data alone: each whose
// size on disk is its blob's is its blob; the others (a file checked out through a
// conversion, CRLF line endings or an ident keyword, that is off now: the index's stat
// data are the converted file's, its blob the unconverted bytes) are hashed.
func (v *verifier) statChecks(checks []*fileCheck, blobSizes func() (map[string]int64, error)) error {
	var hash []*fileCheck
	var sizes map[string]int64
	for _, c := range checks {
		if !c.byStat {
			continue
		}
		if sizes == nil {
			var err error
			if sizes, err = blobSizes(); err != nil {
				return err
			}
		}
		if size, ok := sizes[c.want]; ok && size == c.size {
			c.got = c.want
		} else {
			c.converted = ok && v.stagedByGit
			hash = append(hash, c)
		}
	}
	hashAll(hash, v.repo.ObjectFormat == "sha256")
	return nil
}

// treeIndex is a tree read back from the object store.
type treeIndex struct {
	items  []git.TreeItem
	byPath map[string]int // index in items
	sorted sync.Once
	paths  []string // sorted, made on first use (hasUnder)
}

// readTree lists tree, and the distinct blobs it names.
func (v *verifier) readTree(ctx context.Context, tree string) (*treeIndex, []string, error) {
	id, err := git.ParseOID(tree)
	if err != nil {
		return nil, nil, fmt.Errorf("read back tree: %w", err)
	}
	items := v.items
	if items == nil {
		if items, err = v.repo.LsTree(ctx, id); err != nil {
			return nil, nil, fmt.Errorf("read back tree %s: %w", tree, err)
		}
	}
	t := &treeIndex{items: items, byPath: make(map[string]int, len(items))}
	blobs := make([]string, 0, len(items))
	for i, it := range items {
		t.byPath[it.Path] = i
		if it.Type == "blob" {
			blobs = append(blobs, it.ID)
		}
	}
	return t, unique(blobs), nil
}

// haveBlobs makes sure every one of blobs (named by tree) is in the object store, and
// returns their sizes.
func (v *verifier) haveBlobs(ctx context.Context, tree string, blobs []string) (map[string]int64, error) {
	want, err := oids(blobs...)
	if err != nil {
		return nil, err
	}
	sizes, missing, err := v.repo.ObjectSizes(ctx, want)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("tree %s names %d missing objects (first %s)", tree, len(missing), missing[0])
	}
	return sizes, nil
}

// hasUnder reports whether the tree holds anything under dir.
func (t *treeIndex) hasUnder(dir string) bool {
	t.sorted.Do(func() {
		t.paths = make([]string, len(t.items))
		for i, it := range t.items {
			t.paths[i] = it.Path
		}
		sort.Strings(t.paths)
	})
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

// walked is what the walk of the directory found, each list in walk order.
type walked struct {
	seen     []bool       // by index in the tree's items: found on disk
	embedded []string     // nested repositories
	checks   []*fileCheck // the files, hashed
	// attributes: a .gitattributes file is on disk (not one in a directory the walk
	// passed over as wholly ignored)
	attributes bool
}

// walkItem is a directory to list, or files of one to hash.
type walkItem struct {
	rel, abs string // the directory (rel "" is the root)
	files    []*fileCheck
}

// hashBatch is how many files one worker hashes in a go (a walk item, a batch of
// hashAll): a directory's files beyond it are hashed by the other workers too.
const hashBatch = 256

// walk matches every entry of the directory to the tree and hashes the files that
// need it (fileCheckOf). Directories are listed and files hashed on every core at once
// (par.Walk): at 20,000 files, listing the directory in one goroutine took ~37 ms
// before any hashing began. What the workers find is put in walk order afterwards
// (walkOrder: filepath.WalkDir's, names sorted and a directory's contents right after
// it), and the first difference in that order is the one reported, whatever ran first.
func (v *verifier) walk(t *treeIndex, rules fileRules) (*walked, error) {
	w := &walked{seen: make([]bool, len(t.items))}
	type failure struct {
		rel string
		err error
	}
	var mu sync.Mutex // guards w.embedded, w.checks and fails
	var fails []failure
	par.Walk(hashWorkers(), []walkItem{{abs: v.root}}, func(item walkItem, add func(walkItem)) {
		if item.files != nil {
			hashFiles(item.files, v.repo.ObjectFormat == "sha256")
			return
		}
		var dirs []walkItem
		var checks []*fileCheck
		var embedded []string
		fail := func(rel string, err error) {
			mu.Lock()
			fails = append(fails, failure{rel, err})
			mu.Unlock()
		}
		// Listed through one open descriptor, which also stats the files by name
		// (fileCheckOf): the kernel resolves a name, not each file's whole path.
		dir, err := os.Open(item.abs)
		if err != nil {
			fail(item.rel, err)
			return
		}
		defer func() { _ = dir.Close() }()
		ents, err := dir.ReadDir(-1)
		if err != nil {
			fail(item.rel, err)
			return
		}
		slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		dirfd := int(dir.Fd())
		attributes := false
		for _, d := range ents {
			name := d.Name()
			if item.rel == "" && name == ".git" {
				continue
			}
			attributes = attributes || name == ".gitattributes" && !d.IsDir()
			rel, abs := name, item.abs+string(filepath.Separator)+name
			if item.rel != "" {
				rel = item.rel + "/" + name
			}
			i, inTree := t.byPath[rel]
			if d.IsDir() {
				if inTree && t.items[i].Type == "commit" {
					w.seen[i] = true
					if entries, _ := os.ReadDir(abs); len(entries) > 0 {
						embedded = append(embedded, rel)
					}
					continue
				}
				if v.ignoredDirs[rel] && !t.hasUnder(rel) {
					continue
				}
				dirs = append(dirs, walkItem{rel: rel, abs: abs})
				continue
			}
			var it git.TreeItem
			if inTree {
				w.seen[i] = true
				it = t.items[i]
			}
			c, err := v.fileCheckOf(rel, dirfd, name, abs, d.Type(), it, inTree, rules)
			if err != nil {
				fail(rel, err)
			}
			if c != nil {
				checks = append(checks, c)
			}
		}
		for _, d := range dirs {
			add(d)
		}
		mu.Lock()
		w.checks = append(w.checks, checks...)
		w.embedded = append(w.embedded, embedded...)
		w.attributes = w.attributes || attributes
		mu.Unlock()
		checks = slices.DeleteFunc(checks, func(c *fileCheck) bool { return c.byStat })
		for len(checks) > hashBatch { // the rest, a batch at a time, to the other workers
			add(walkItem{files: checks[len(checks)-hashBatch:]})
			checks = checks[:len(checks)-hashBatch]
		}
		hashFiles(checks, v.repo.ObjectFormat == "sha256")
	})
	if len(fails) > 0 {
		first := slices.MinFunc(fails, func(a, b failure) int { return walkOrder(a.rel, b.rel) })
		if errors.Is(first.err, ErrChanged) {
			return nil, first.err
		}
		if errors.Is(first.err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %w", ErrChanged, first.err)
		}
		return nil, first.err
	}
	slices.SortFunc(w.checks, func(a, b *fileCheck) int { return walkOrder(a.rel, b.rel) })
	slices.SortFunc(w.embedded, walkOrder)
	return w, nil
}

// walkOrder compares two slash-separated paths in the order a walk of one directory
// after another meets them: by their first differing component, so that everything
// under a directory comes right after it ("a", "a/z", "a.txt"), where a plain string
// comparison would put "a.txt" before "a/z".
func walkOrder(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] == b[i] {
			continue
		}
		if a[i] == '/' {
			return -1
		}
		if b[i] == '/' {
			return 1
		}
		return int(a[i]) - int(b[i])
	}
	return len(a) - len(b)
}

// fileCheckOf decides what the file (or symlink, or special file) at rel, of type
// typ, needs to match it, the tree's entry (inTree: the tree has one): nothing (an
// ignored file, a file git keeps none of), a hash (the returned check), or nothing
// can make it match (the error). It reads nothing from disk but, for a file the
// worktree's index holds (verifier.stat), its stat data (by its name in the open
// directory dirfd).
func (v *verifier) fileCheckOf(rel string, dirfd int, name, abs string, typ fs.FileMode, it git.TreeItem, inTree bool, rules fileRules) (*fileCheck, error) {
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
	c := &fileCheck{rel: rel, abs: abs, link: isLink, exec: exec, want: it.ID}
	if s, ok := v.stat[rel]; ok && s.ID == it.ID && s.Mode == it.Mode {
		c.size, c.byStat = git.StatMatchesAt(dirfd, name, abs, s)
	}
	return c, nil
}

// compare fails at the first file whose hash is not its blob's.
func (v *verifier) compare(checks []*fileCheck) error {
	for _, c := range checks {
		if c.err != nil {
			return fmt.Errorf("%w: hash %q: %w", ErrChanged, c.rel, c.err)
		}
		if c.got != c.want {
			if c.link {
				return v.changed("symlink %q does not match the snapshot", c.rel)
			}
			if c.converted {
				// git took the file as its blob by its stat data, as it will again:
				// only the raw capture keeps its bytes.
				return fmt.Errorf("%w: %w", errConverted, v.changed("%q does not match the snapshot byte for byte", c.rel))
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
	batches := (len(checks) + hashBatch - 1) / hashBatch
	par.Each(batches, hashWorkers(), func(i int) error {
		hashFiles(checks[i*hashBatch:min((i+1)*hashBatch, len(checks))], sha256Repo)
		return nil
	})
}

// hashWorkers is how many goroutines hash at once: one a core, at most eight.
func hashWorkers() int { return min(runtime.NumCPU(), 8) }

// hasher is one worker's hash state and read buffer, kept for the next batch.
type hasher struct {
	h   hash.Hash
	buf []byte
}

var hashers = [2]sync.Pool{
	{New: func() any { return &hasher{h: sha1.New(), buf: make([]byte, 256<<10)} }},
	{New: func() any { return &hasher{h: sha256.New(), buf: make([]byte, 256<<10)} }},
}

// hashFiles sets got (or err) of each of checks.
func hashFiles(checks []*fileCheck, sha256Repo bool) {
	pool := &hashers[0]
	if sha256Repo {
		pool = &hashers[1]
	}
	hs := pool.Get().(*hasher)
	defer pool.Put(hs)
	for _, c := range checks {
		c.got, c.err = hs.blobID(c)
	}
}

func (hs *hasher) blobID(c *fileCheck) (string, error) {
	h, buf := hs.h, hs.buf
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
	defer func() { _ = syscall.Close(fd) }()
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
	h.Write(append(strconv.AppendInt(append(buf[:0], "blob "...), st.Size, 10), 0))
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
	return hex.EncodeToString(h.Sum(buf[:0])), nil
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
