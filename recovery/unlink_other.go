//go:build !linux

package recovery

import (
	"os"
	"path/filepath"
)

// openDir opens the directory at path for removeTree.
func openDir(path string) (*os.File, error) { return os.Open(path) }

// unlinkIn removes the file (or link) name of the open directory dir.
func unlinkIn(dir *os.File, name string) {
	_ = os.Remove(filepath.Join(dir.Name(), name))
}
