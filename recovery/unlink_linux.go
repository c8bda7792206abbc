package recovery

import (
	"os"
	"syscall"
)

// openDir opens the directory at path for removeTree, never through a symbolic link
// put in its place since it was listed.
func openDir(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_DIRECTORY, 0)
}

// unlinkIn removes the file (or link) name of the open directory dir: unlinkat on the
// directory's descriptor, so the kernel resolves one name rather than the whole path
// of each file.
func unlinkIn(dir *os.File, name string) {
	if err := syscall.Unlinkat(int(dir.Fd()), name); err != nil {
		_ = os.Remove(dir.Name() + string(os.PathSeparator) + name) // os.RemoveAll reports what is left
	}
}
