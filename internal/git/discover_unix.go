//go:build unix

package git

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedByMe reports whether this process's effective user owns the file, as git's
// safe.directory check asks (a root process and a file of another user's included:
// git then consults SUDO_UID and safe.directory, so discover leaves it to git).
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// sameDevice reports whether two directories are on one file system: git stops its
// search at a mount point unless GIT_DISCOVERY_ACROSS_FILESYSTEM says otherwise.
func sameDevice(a, b fs.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && sa.Dev == sb.Dev
}
