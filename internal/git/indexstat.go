package git

import (
	"bytes"
	"encoding/binary"
	"fmt"
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
	hashLen := 20
	if sha256 {
		hashLen = 32
	}
	if len(data) < 12 || string(data[:4]) != "DIRC" {
		return nil, false, fmt.Errorf("not an index")
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version < 2 || version > 4 {
		return nil, false, fmt.Errorf("index version %d", version)
	}
	count := binary.BigEndian.Uint32(data[8:12])
	out := make([]statEntry, 0, min(int(count), len(data)/62))
	p := 12
	var prev []byte
	for range count {
		fixed := 40 + hashLen + 2
		if p+fixed > len(data) {
			return nil, false, fmt.Errorf("index entry past the end")
		}
		u := func(i int) uint32 { return binary.BigEndian.Uint32(data[p+4*i:]) }
		st := IndexStat{Ctime: [2]uint32{u(0), u(1)}, Mtime: [2]uint32{u(2), u(3)}, Dev: u(4), Ino: u(5),
			UID: u(7), GID: u(8), Size: u(9)}
		mode := u(6)
		st.ID = fmt.Sprintf("%x", data[p+40:p+40+hashLen])
		flags := binary.BigEndian.Uint16(data[p+40+hashLen:])
		q := p + fixed
		var ext uint16
		if flags&0x4000 != 0 { // extended flags
			if version < 3 || q+2 > len(data) {
				return nil, false, fmt.Errorf("index entry with extended flags")
			}
			ext = binary.BigEndian.Uint16(data[q:])
			q += 2
		}
		var path []byte
		if version == 4 {
			strip, n := binary.Uvarint(data[q:])
			if n <= 0 || strip > uint64(len(prev)) {
				return nil, false, fmt.Errorf("index entry with a bad path prefix")
			}
			q += n
			nul := bytes.IndexByte(data[q:], 0)
			if nul < 0 {
				return nil, false, fmt.Errorf("index entry path past the end")
			}
			path = append(append([]byte{}, prev[:len(prev)-int(strip)]...), data[q:q+nul]...)
			p = q + nul + 1
		} else {
			nul := bytes.IndexByte(data[q:], 0)
			if nul < 0 {
				return nil, false, fmt.Errorf("index entry path past the end")
			}
			path = data[q : q+nul]
			p += (q + nul + 1 - p + 7) &^ 7 // NUL-padded to a multiple of eight bytes
		}
		prev = path
		stage := flags >> 12 & 3
		assumeValid := flags&0x8000 != 0
		skipOrIntent := ext&(0x4000|0x2000) != 0
		switch mode {
		case 0o100644:
			st.Mode = "100644"
		case 0o100755:
			st.Mode = "100755"
		case 0o120000:
			st.Mode = "120000"
		}
		if st.Mode != "" && stage == 0 && !assumeValid && !skipOrIntent {
			out = append(out, statEntry{path: string(path), stat: st})
		}
	}
	// The extensions, each a signature, a size and that many bytes, up to the
	// trailing checksum.
	for p+8 <= len(data)-hashLen {
		size := int(binary.BigEndian.Uint32(data[p+4:]))
		if string(data[p:p+4]) == "link" {
			return out, true, nil
		}
		p += 8 + size
	}
	return out, false, nil
}

// StatMatches reports whether the file at path (not followed when a symbolic link) is
// as s recorded it: every field, the mode as git records modes (a link, an executable
// file or another file), and returns its size. A file on a system where this is not
// known never matches.
func StatMatches(path string, s IndexStat) (size int64, ok bool) {
	return statMatches(path, s)
}
