//go:build unix

package audit

import (
	"io/fs"
	"syscall"
)

// fileLinks is a file's identity (device and inode) and its number of hard links;
// ok false when the platform says nothing of them.
func fileLinks(fi fs.FileInfo) (id [2]uint64, links uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return id, 0, false
	}
	return [2]uint64{uint64(st.Dev), uint64(st.Ino)}, uint64(st.Nlink), true //nolint:unconvert // Dev and Nlink differ in type by platform
}
