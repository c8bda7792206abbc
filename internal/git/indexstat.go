package git

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"sync"
)

// IndexStat is what an index entry recorded of its file the last time git looked at
// it: the times to the nanosecond, device, inode, owner and size, each as git keeps it
// (32 bits), with the entry's mode and blob.
type IndexStat struct {
	Mode, ID                 string
	Ctime, Mtime             [2]uint32 // seconds, nanoseconds
	Dev, Ino, UID, GID, Size uint32
}

// StatData returns, by path, the stat data of the entries of the worktree's index this
// one copies (CopyIndex) that git itself would call clean while their files' stat
// data match (git's racy-git rule, made stricter): merged files and symbolic links,
// not marked assume-unchanged, skip-worktree or intent-to-add, and recorded before the
// index was written (both mtime and ctime older than the index file's). An entry
// recorded in the same moment as the index was written is left out: its file may have
// changed since without a trace in its stat data. An index this code does not read
// (another version, a torn file) gives none; so does one not made by CopyIndex.
func (t *TempIndex) StatData() map[string]IndexStat {
	out := map[string]IndexStat{}
	if t.written.IsZero() {
		return out
	}
	written := [2]uint32{uint32(t.written.Unix()), uint32(t.written.Nanosecond())}
	before := func(a [2]uint32) bool { return a[0] < written[0] || a[0] == written[0] && a[1] < written[1] }
	entries, _, err := readIndexEntries(t.original, t.repo.ObjectFormat == "sha256")
	if err != nil {
		return out
	}
	for _, e := range entries {
		if before(e.stat.Mtime) && before(e.stat.Ctime) {
			out[e.path] = e.stat
		}
	}
	return out
}

type statEntry struct {
	path string
	stat IndexStat
}

// readIndexEntries reads the entries of an index file (versions 2 to 4, as git's
// gitformat-index describes them) that StatData may use: stage 0, mode a file's or a
// link's, none of the flags that make git skip the stat check. Any entry read is
// evidence only of what git recorded of a file; the caller still holds the file's
// stat data and the tree's blob against it. split reports whether the index is split
// (its "link" extension names a shared index holding the entries it does not): then
// the entries read are only some of the index's.
func readIndexEntries(data []byte, sha256 bool) (_ []statEntry, split bool, _ error) {
	ix, err := parseIndex(data, sha256)
	if err != nil {
		return nil, false, err
	}
	out := make([]statEntry, 0, len(ix.entries))
	for _, e := range ix.entries {
		if (e.stat.Mode == "100644" || e.stat.Mode == "100755" || e.stat.Mode == "120000") &&
			e.stage == 0 && !e.assumeValid && !e.skipWorktree && !e.intentToAdd {
			out = append(out, statEntry{path: e.path, stat: e.stat})
		}
	}
	return out, slices.Contains(ix.extensions, "link"), nil
}

// indexEntry is one entry of an index file as parseIndex reads it: its mode as git
// prints it ("" for one that is no file's, link's or gitlink's) and its flags.
type indexEntry struct {
	path                                   string
	stat                                   IndexStat
	stage                                  int
	assumeValid, skipWorktree, intentToAdd bool
	// unknown: a flag bit, or a name length, this reader does not account for
	unknown bool
}

// parsedIndex is an index file read whole: its entries in order, and the signatures
// of its extensions.
type parsedIndex struct {
	version    uint32
	entries    []indexEntry
	extensions []string
	tree       []byte // the cache tree extension's data (TREE), when there is one
	extAt      int    // where the extensions start (the entries' end)
}

// lastIndex is the index file parsed last, kept with its own copy of the bytes: a
// snapshot reads the same index several times (its entries and marks, its cache tree,
// its stat data, the staging), and at 20,000 entries each parse and checksum was a few
// milliseconds. A file of other bytes is parsed afresh; what a parse returns is only
// ever read.
var lastIndex struct {
	sync.Mutex
	data   []byte
	sha256 bool
	ix     *parsedIndex
	err    error
	whole  int8 // parseIndexWhole's answer: 0 not asked yet, 1 whole, -1 not
}

// parseIndex reads an index file (versions 2 to 4, as git's gitformat-index
// describes them): every entry, and the extensions' signatures up to the trailing
// checksum (not checked here). The file parsed last is not parsed again.
func parseIndex(data []byte, sha256 bool) (*parsedIndex, error) {
	ix, _, err := parseIndexKept(data, sha256, nil)
	return ix, err
}

// parseIndexKept is parseIndex, and, when judge is given, its judgment of the parse
// (asked once per file: parseIndexWhole's).
func parseIndexKept(data []byte, sha256 bool, judge func(*parsedIndex, error) bool) (*parsedIndex, bool, error) {
	lastIndex.Lock()
	defer lastIndex.Unlock()
	if lastIndex.ix == nil && lastIndex.err == nil || lastIndex.sha256 != sha256 || !bytes.Equal(lastIndex.data, data) {
		own := bytes.Clone(data)
		ix, err := parseIndexData(own, sha256)
		lastIndex.data, lastIndex.sha256, lastIndex.ix, lastIndex.err, lastIndex.whole = own, sha256, ix, err, 0
	}
	if judge != nil && lastIndex.whole == 0 {
		lastIndex.whole = -1
		if judge(lastIndex.ix, lastIndex.err) {
			lastIndex.whole = 1
		}
	}
	return lastIndex.ix, lastIndex.whole == 1, lastIndex.err
}

// parseIndexData is parseIndex without the kept file.
func parseIndexData(data []byte, sha256 bool) (*parsedIndex, error) {
	hashLen := objectIDLen(sha256)
	if len(data) < 12 || string(data[:4]) != "DIRC" {
		return nil, fmt.Errorf("not an index")
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version < 2 || version > 4 {
		return nil, fmt.Errorf("index version %d", version)
	}
	count := binary.BigEndian.Uint32(data[8:12])
	ix := &parsedIndex{version: version, entries: make([]indexEntry, 0, min(int(count), len(data)/62))}
	p := 12
	var prev []byte
	for range count {
		fixed := 40 + hashLen + 2
		if p+fixed > len(data) {
			return nil, fmt.Errorf("index entry past the end")
		}
		u := func(i int) uint32 { return binary.BigEndian.Uint32(data[p+4*i:]) }
		st := IndexStat{Ctime: [2]uint32{u(0), u(1)}, Mtime: [2]uint32{u(2), u(3)}, Dev: u(4), Ino: u(5),
			UID: u(7), GID: u(8), Size: u(9)}
		mode := u(6)
		st.ID = hex.EncodeToString(data[p+40 : p+40+hashLen])
		flags := binary.BigEndian.Uint16(data[p+40+hashLen:])
		q := p + fixed
		var ext uint16
		if flags&0x4000 != 0 { // extended flags
			if version < 3 || q+2 > len(data) {
				return nil, fmt.Errorf("index entry with extended flags")
			}
			ext = binary.BigEndian.Uint16(data[q:])
			q += 2
		}
		var path []byte
		if version == 4 {
			strip, n := indexVarint(data[q:])
			if n <= 0 || strip > uint64(len(prev)) {
				return nil, fmt.Errorf("index entry with a bad path prefix")
			}
			q += n
			nul := bytes.IndexByte(data[q:], 0)
			if nul < 0 {
				return nil, fmt.Errorf("index entry path past the end")
			}
			path = append(append([]byte{}, prev[:len(prev)-int(strip)]...), data[q:q+nul]...)
			p = q + nul + 1
		} else {
			nul := bytes.IndexByte(data[q:], 0)
			if nul < 0 {
				return nil, fmt.Errorf("index entry path past the end")
			}
			path = data[q : q+nul]
			p += (q + nul + 1 - p + 7) &^ 7 // NUL-padded to a multiple of eight bytes
		}
		prev = path
		switch mode {
		case 0o100644:
			st.Mode = "100644"
		case 0o100755:
			st.Mode = "100755"
		case 0o120000:
			st.Mode = "120000"
		case 0o160000:
			st.Mode = "160000"
		}
		e := indexEntry{path: string(path), stat: st, stage: int(flags >> 12 & 3),
			assumeValid: flags&0x8000 != 0, skipWorktree: ext&0x4000 != 0, intentToAdd: ext&0x2000 != 0}
		nameLen := int(flags & 0xfff)
		e.unknown = ext&^(0x4000|0x2000) != 0 || (nameLen < 0xfff && nameLen != len(path)) || (nameLen == 0xfff && len(path) < 0xfff)
		ix.entries = append(ix.entries, e)
	}
	// The extensions, each a signature, a size and that many bytes, up to the
	// trailing checksum.
	ix.extAt = p
	for p+8 <= len(data)-hashLen {
		size := int(binary.BigEndian.Uint32(data[p+4:]))
		ix.extensions = append(ix.extensions, string(data[p:p+4]))
		if string(data[p:p+4]) == "TREE" && size >= 0 && p+8+size <= len(data)-hashLen {
			ix.tree = data[p+8 : p+8+size]
		}
		p += 8 + size
	}
	return ix, nil
}

// StatMatches reports whether the file at path (not followed when a symbolic link) is
// as s recorded it: every field, the mode as git records modes (a link, an executable
// file or another file), and returns its size. A file on a system where this is not
// known never matches.
func StatMatches(path string, s IndexStat) (size int64, ok bool) {
	return statMatches(path, s)
}

// StatMatchesAt is StatMatches for the entry name of the open directory dirfd (path
// is the same file's whole path).
func StatMatchesAt(dirfd int, name, path string, s IndexStat) (size int64, ok bool) {
	return statMatchesAt(dirfd, name, path, s)
}

// indexExtensionsRead are the index extensions that leave the entry list as the file
// holds it: a cache tree, undo records of resolved conflicts, the untracked cache,
// fsmonitor's token and the tables that let git read the file in parallel. Any other
// (a split index's "link", a sparse index's "sdir", one added to git later) makes
// entriesFlagged leave the index to git.
var indexExtensionsRead = map[string]bool{"TREE": true, "REUC": true, "UNTR": true, "FSMN": true, "EOIE": true, "IEOT": true}

// parseIndexWhole parses an index file this code fully understands (entriesFlagged's
// rule: the checksum matches, every extension is in indexExtensionsRead, every
// entry's mode, flag bits and name are accounted for); ok is false for any other.
func parseIndexWhole(data []byte, sha256Repo bool) (*parsedIndex, bool) {
	hashLen := objectIDLen(sha256Repo)
	if len(data) < 12+hashLen {
		return nil, false
	}
	ix, whole, _ := parseIndexKept(data, sha256Repo, func(ix *parsedIndex, err error) bool {
		return err == nil && checksumMatches(data, hashLen) && understood(ix)
	})
	if !whole {
		return nil, false
	}
	return ix, true
}

// understood reports whether every extension and entry of ix is one this code
// accounts for.
func understood(ix *parsedIndex) bool {
	for _, x := range ix.extensions {
		if !indexExtensionsRead[x] {
			return false
		}
	}
	for _, e := range ix.entries {
		if e.unknown || e.stat.Mode == "" {
			return false
		}
	}
	return true
}

// objectIDLen is the length in bytes of a raw object id: sha256's or sha1's.
func objectIDLen(sha256 bool) int {
	if sha256 {
		return 32
	}
	return 20
}

// entriesFlagged reads an index file in process as `ls-files --stage -v -z` lists
// it: every entry (mode, blob, stage, path), the paths whose entries carry the
// assume-unchanged bit, and those of merged entries marked skip-worktree. ok is false
// whenever the file is anything this code does not fully understand (a checksum
// that does not match, another version, an extension not in indexExtensionsRead, a
// mode, flag bit or name length it does not account for): the caller then asks git.
func entriesFlagged(data []byte, sha256Repo bool) (entries []IndexEntry, assumed, skipped []string, ok bool) {
	ix, ok := parseIndexWhole(data, sha256Repo)
	if !ok {
		return nil, nil, nil, false
	}
	entries = make([]IndexEntry, 0, len(ix.entries))
	for _, e := range ix.entries {
		entries = append(entries, IndexEntry{Mode: e.stat.Mode, ID: e.stat.ID, Stage: e.stage, Path: e.path})
		if e.assumeValid {
			assumed = append(assumed, e.path)
		}
		if e.skipWorktree && e.stage == 0 { // ls-files tags an unmerged entry M, whatever its marks
			skipped = append(skipped, e.path)
		}
	}
	return entries, assumed, skipped, true
}

// checksumMatches reports whether an index file ends with the hash of the rest of it.
func checksumMatches(data []byte, hashLen int) bool {
	body, sum := data[:len(data)-hashLen], data[len(data)-hashLen:]
	if hashLen == 32 {
		h := sha256.Sum256(body)
		return bytes.Equal(h[:], sum)
	}
	h := sha1.Sum(body)
	return bytes.Equal(h[:], sum)
}

// indexVarint decodes the number an index of version 4 puts before each path (how
// many bytes of the previous path to drop): git's varint, most significant group
// first, each continued group counting one more (not binary.Uvarint's encoding). It
// returns the number and the bytes read, or n 0 when it is cut off or too large.
func indexVarint(b []byte) (v uint64, n int) {
	for i, c := range b {
		if i > 0 {
			v++
			if v == 0 || v>>57 != 0 {
				return 0, 0
			}
		}
		v = v<<7 | uint64(c&127)
		if c&128 == 0 {
			return v, i + 1
		}
	}
	return 0, 0
}

// cachedRootTree is the tree `git write-tree` gives of an index file, read from the
// file's cache tree (the TREE extension, as gitformat-index describes it) when that
// vouches for the whole index: its root entry valid (git invalidates every directory
// above a changed path, so a valid root is a valid tree) and counting every entry.
// ok is false, and git must write the tree, whenever the file is anything this code
// does not fully understand (parseIndexWhole), holds an entry write-tree
// treats apart (unmerged, intent-to-add, skip-worktree, assume-unchanged), or has no
// valid root. The tree's objects are not looked at: the caller reads the tree back.
func cachedRootTree(data []byte, sha256Repo bool) (string, bool) {
	ix, ok := parseIndexWhole(data, sha256Repo)
	if !ok || ix.tree == nil {
		return "", false
	}
	hashLen := objectIDLen(sha256Repo)
	for _, e := range ix.entries {
		if e.stage != 0 || e.intentToAdd || e.skipWorktree || e.assumeValid {
			return "", false
		}
	}
	// The root: an empty path, "<entry count> <subtrees>\n", then its id when the
	// count is not negative (an invalidated node has -1 and no id).
	t := ix.tree
	if len(t) == 0 || t[0] != 0 {
		return "", false
	}
	line, rest, found := bytes.Cut(t[1:], []byte{'\n'})
	if !found {
		return "", false
	}
	count, _, found := bytes.Cut(line, []byte{' '})
	n, err := strconv.Atoi(string(count))
	if !found || err != nil || n != len(ix.entries) || len(rest) < hashLen {
		return "", false
	}
	return hex.EncodeToString(rest[:hashLen]), true
}

// withoutCacheTree is an index file with its cache tree (TREE extension) left out and
// its checksum made again: git builds every tree of it from the entries. ok is false
// when the file does not parse.
func withoutCacheTree(data []byte, sha256Repo bool) ([]byte, bool) {
	hashLen := objectIDLen(sha256Repo)
	if len(data) < 12+hashLen {
		return nil, false
	}
	ix, err := parseIndex(data, sha256Repo)
	if err != nil {
		return nil, false
	}
	out := append([]byte{}, data[:ix.extAt]...)
	for p := ix.extAt; p+8 <= len(data)-hashLen; {
		size := int(binary.BigEndian.Uint32(data[p+4:]))
		end := p + 8 + size
		if size < 0 || end > len(data)-hashLen {
			return nil, false
		}
		if string(data[p:p+4]) != "TREE" {
			out = append(out, data[p:end]...)
		}
		p = end
	}
	if sha256Repo {
		sum := sha256.Sum256(out)
		return append(out, sum[:]...), true
	}
	sum := sha1.Sum(out)
	return append(out, sum[:]...), true
}
