//go:build !linux

package git

import (
	"errors"
	"os"
)

// configRecords: without statFile, the configuration is read from git every time.
const configRecords = false

// errNotDir: see statFile.
var errNotDir = errors.New("not a directory")

// statFile fails where a file's change time cannot be read: the configuration is
// then read from git every time.
func statFile(string) (fileID, error) { return fileID{}, errors.ErrUnsupported }

func fstatID(*os.File) (fileID, bool) { return fileID{}, false }
