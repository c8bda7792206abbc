package testenv

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// Restat refreshes the index of repo, a copy of tmpl made by CopyTree, as `git
// update-index -q --refresh` would, without starting it: every entry the template's
// index holds stat-clean (its stat data is the template file's) gets the copy's stat
// data (change time, inode and device differ; mtime, size and mode were copied), the
// others are left as they are, and the checksum is written anew. It reports false,
// having written nothing, when the index is not one it reads (a version but 2 or 3,
// a checksum other than SHA-1 over the rest, a split index, an untracked cache, an
// entry clean by content whose stat data is stale): git refreshes it then.
func Restat(repo, tmpl string) (bool, error) {
	data, err := os.ReadFile(filepath.Join(tmpl, ".git", "index"))
	if err != nil {
		return false, err
	}
	if len(data) < 12+sha1.Size || string(data[:4]) != "DIRC" {
		return false, nil
	}
	body := data[:len(data)-sha1.Size]
	if sum := sha1.Sum(body); !bytes.Equal(sum[:], data[len(body):]) {
		return false, nil // a SHA-256 repository's index (other entry sizes), or index.skipHash
	}
	version, n := binary.BigEndian.Uint32(data[4:]), int(binary.BigEndian.Uint32(data[8:]))
	if version != 2 && version != 3 {
		return false, nil
	}
	off := 12
	for range n {
		if off+62 > len(body) {
			return false, nil
		}
		e := body[off:]
		flags := binary.BigEndian.Uint16(e[60:])
		head := 62
		if flags&0x4000 != 0 {
			head += 2 // extended flags (version 3)
		}
		end := bytes.IndexByte(body[off+head:], 0)
		if end < 0 {
			return false, nil
		}
		name := string(body[off+head : off+head+end])
		size := (head + end + 8) &^ 7 // the name's NUL, padded to a multiple of 8
		var was, now syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(tmpl, filepath.FromSlash(name)), &was); err != nil {
			return false, nil
		}
		if err := syscall.Lstat(filepath.Join(repo, filepath.FromSlash(name)), &now); err != nil {
			return false, nil
		}
		if slices.Equal(e[:40], statData(&was)) {
			copy(e[:40], statData(&now))
		} else if content, err := os.ReadFile(filepath.Join(tmpl, filepath.FromSlash(name))); err != nil || blobID(content) == [sha1.Size]byte(e[40:60]) {
			return false, nil // clean by content, stale by stat: git knows what to do
		}
		off += size
	}
	// A split index or an untracked cache (stat data of directories) is git's to refresh.
	for ext := body[off:]; len(ext) >= 8; {
		sig, l := string(ext[:4]), int(binary.BigEndian.Uint32(ext[4:]))
		if sig == "link" || sig == "UNTR" || 8+l > len(ext) {
			return false, nil
		}
		ext = ext[8+l:]
	}
	sum := sha1.Sum(body)
	copy(data[len(body):], sum[:])
	index := filepath.Join(repo, ".git", "index")
	if err := os.WriteFile(index, data, 0o644); err != nil {
		return false, err
	}
	now := time.Now() // as git writes it: later than every file, so no entry is racily clean
	return true, os.Chtimes(index, now, now)
}

// statData is the first 40 bytes of an index entry for st: change and modification
// times, device, inode, mode, owner, group and size, each 32 bits, big-endian.
func statData(st *syscall.Stat_t) []byte {
	b := make([]byte, 0, 40)
	for _, v := range []uint64{uint64(st.Ctim.Sec), uint64(st.Ctim.Nsec), uint64(st.Mtim.Sec), uint64(st.Mtim.Nsec),
		st.Dev, st.Ino, uint64(gitMode(st.Mode)), uint64(st.Uid), uint64(st.Gid), uint64(st.Size)} {
		b = binary.BigEndian.AppendUint32(b, uint32(v))
	}
	return b
}

// gitMode is the mode git records for a file of mode m: a link, or a regular file
// executable or not.
func gitMode(m uint32) uint32 {
	switch {
	case m&syscall.S_IFMT == syscall.S_IFLNK:
		return 0o120000
	case m&0o100 != 0:
		return 0o100755
	default:
		return 0o100644
	}
}

// blobID is git's SHA-1 object id of a blob holding content.
func blobID(content []byte) [sha1.Size]byte {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write(content)
	return [sha1.Size]byte(h.Sum(nil))
}
