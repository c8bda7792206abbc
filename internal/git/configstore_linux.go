//go:build linux

package git

import (
	"os"
	"syscall"
)

// configRecords: the configuration is kept between commands (configstore.go).
const configRecords = true

// errNotDir is the error of a path with a part that is not a directory.
var errNotDir error = syscall.ENOTDIR

// statFile is path's identity (stat, following links).
func statFile(path string) (fileID, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return fileID{}, err
	}
	return idOf(&st), nil
}

// fstatID is the identity of an open file.
func fstatID(f *os.File) (fileID, bool) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return fileID{}, false
	}
	return idOf(&st), true
}

func idOf(st *syscall.Stat_t) fileID {
	return fileID{
		exists: true, dev: uint64(st.Dev), ino: uint64(st.Ino), size: int64(st.Size),
		mtime: [2]int64{int64(st.Mtim.Sec), int64(st.Mtim.Nsec)}, ctime: [2]int64{int64(st.Ctim.Sec), int64(st.Ctim.Nsec)},
		mode: uint32(st.Mode), uid: uint32(st.Uid),
	}
}
