//go:build linux

package git

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func statMatches(path string, s IndexStat) (int64, bool) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return 0, false
	}
	return statDataMatch(&st, s)
}

// statMatchesAt is statMatches for the entry name of the open directory dirfd: the
// kernel resolves one name, not the file's whole path.
func statMatchesAt(dirfd int, name, _ string, s IndexStat) (int64, bool) {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, false
	}
	return statDataMatch(&st, s)
}

func statDataMatch(st *unix.Stat_t, s IndexStat) (int64, bool) {
	mode := "100644"
	switch {
	case st.Mode&syscall.S_IFMT == syscall.S_IFLNK:
		mode = "120000"
	case st.Mode&syscall.S_IFMT != syscall.S_IFREG:
		return 0, false
	case st.Mode&0o100 != 0:
		mode = "100755"
	}
	ok := mode == s.Mode && uint32(st.Size) == s.Size && uint32(st.Dev) == s.Dev && uint32(st.Ino) == s.Ino &&
		st.Uid == s.UID && st.Gid == s.GID &&
		uint32(st.Mtim.Sec) == s.Mtime[0] && uint32(st.Mtim.Nsec) == s.Mtime[1] &&
		uint32(st.Ctim.Sec) == s.Ctime[0] && uint32(st.Ctim.Nsec) == s.Ctime[1]
	return st.Size, ok
}

// changedSince reports whether the file or directory at path had its inode changed
// (written, made, renamed into, an entry added or removed) at since or later: its
// change time, which no one can set back.
func changedSince(path string, since time.Time) bool {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return true // gone or unreadable: the caller's flush reports it
	}
	return !time.Unix(st.Ctim.Sec, st.Ctim.Nsec).Before(since)
}
