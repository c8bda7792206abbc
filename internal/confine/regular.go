package confine

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular refuses a path that data names for reading when it is not a regular
// file: a FIFO (a read would wait for a writer forever), a device (/dev/zero never
// ends), a directory, a socket.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooBig refuses a regular file over the bound its reader sets.
var ErrTooBig = errors.New("over the size bound")

// OpenRegular opens the file at path for reading when it is a regular file of at most
// max bytes, and returns it with its size. It is opened without blocking, so a FIFO
// is refused, never waited on; a symbolic link is followed (configuration files are
// often links). Reading more than the size returned is the caller's to refuse (a file
// that grows while it is read): ReadRegular does.
func OpenRegular(path string, max int64) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, 0, err
	case !fi.Mode().IsRegular():
		f.Close()
		return nil, 0, &fs.PathError{Op: "read", Path: path, Err: ErrNotRegular}
	case fi.Size() > max:
		f.Close()
		return nil, 0, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%d bytes: %w of %d bytes", fi.Size(), ErrTooBig, max)}
	}
	return f, fi.Size(), nil
}

// ReadRegular reads the file at path as OpenRegular opens it, refusing one that grew
// past max while it was read.
func ReadRegular(path string, max int64) ([]byte, error) {
	f, _, err := OpenRegular(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w of %d bytes", ErrTooBig, max)}
	}
	return data, nil
}
