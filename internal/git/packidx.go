package git

import (
	"encoding/binary"
	"encoding/hex"
	"os"
	"strings"
)

// packedType is what a pack says of object id without reading the object: that it is
// there, found in a pack's index (version 2: the fan-out table, then a binary search of
// the sorted names, then the entry's offset), and its type, from the first byte of the
// pack entry at that offset (docs/git-notes.md: go-git parses a whole index before its
// first read; this reads about log2(n) names). A deltified entry has no type of its
// own: typ is "" then. found is false where the answer is not certain: an object
// store with alternates, an index or pack that does not read as git writes them, and
// of course an id no index names. A clone's objects are packed, so its first commit
// (a run's baseline, HEAD) is known to exist without a git process.
func (l looseWriter) packedType(id string) (typ string, found bool) {
	name, err := hex.DecodeString(id)
	if err != nil || len(name) != 20 {
		return "", false // sha1 only: the stores go-git opens
	}
	indexes, ok := l.packFiles(".idx")
	if !ok {
		return "", false
	}
	for _, idx := range indexes {
		if offset, ok := indexOffset(idx, name); ok {
			return entryType(strings.TrimSuffix(idx, ".idx")+".pack", offset)
		}
	}
	return "", false
}

// indexOffset is the pack offset a version 2 index gives name, ok false where the
// index does not name it or does not read.
func indexOffset(path string, name []byte) (int64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	head := make([]byte, 8+256*4)
	if _, err := f.ReadAt(head, 0); err != nil || string(head[:4]) != "\377tOc" || binary.BigEndian.Uint32(head[4:8]) != 2 {
		return 0, false
	}
	fanout := func(b int) uint32 { return binary.BigEndian.Uint32(head[8+4*b:]) }
	n := int64(fanout(255))
	lo, hi := int64(0), int64(fanout(int(name[0])))
	if name[0] > 0 {
		lo = int64(fanout(int(name[0]) - 1))
	}
	if lo > hi || hi > n {
		return 0, false
	}
	const names = 8 + 256*4
	buf := make([]byte, 20)
	for lo < hi {
		mid := lo + (hi-lo)/2
		if _, err := f.ReadAt(buf, names+mid*20); err != nil {
			return 0, false
		}
		switch c := strings.Compare(string(buf), string(name)); {
		case c == 0:
			offsets := names + n*20 + n*4 // past the names and their CRCs
			var o [8]byte
			if _, err := f.ReadAt(o[:4], offsets+mid*4); err != nil {
				return 0, false
			}
			off := binary.BigEndian.Uint32(o[:4])
			if off&0x80000000 == 0 {
				return int64(off), true
			}
			if _, err := f.ReadAt(o[:], offsets+n*4+int64(off&0x7fffffff)*8); err != nil {
				return 0, false
			}
			return int64(binary.BigEndian.Uint64(o[:])), true
		case c < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return 0, false
}

// entryType is the type a pack entry at offset states: commit, tree, blob or tag, ""
// for a delta (its type is its base's). found is false where the pack does not read.
func entryType(path string, offset int64) (typ string, found bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	var b [12]byte
	if _, err := f.ReadAt(b[:], 0); err != nil || string(b[:4]) != "PACK" || offset < 12 {
		return "", false
	}
	if _, err := f.ReadAt(b[:1], offset); err != nil {
		return "", false
	}
	switch (b[0] >> 4) & 7 {
	case 1:
		return "commit", true
	case 2:
		return "tree", true
	case 3:
		return "blob", true
	case 4:
		return "tag", true
	case 6, 7:
		return "", true
	}
	return "", false
}
