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
// ends), a directory, a socket, or a symbolic link where none may be followed.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooBig refuses a regular file over the bound its reader sets.
var ErrTooBig = errors.New("over the size bound")

// RegularError is OpenRegular's refusal: Path is What (a FIFO, a device, ...) and
// not a regular file, or a regular file of Size bytes, over Max.
type RegularError struct {
	Path, What string
	Size, Max  int64
}

func (e *RegularError) Error() string {
	if e.What == "" {
		return fmt.Sprintf("%s is %d bytes, over the bound of %d", e.Path, e.Size, e.Max)
	}
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, e.What)
}

// Is makes errors.Is(err, ErrNotRegular) and errors.Is(err, ErrTooBig) tell them apart.
func (e *RegularError) Is(target error) bool {
	return target == ErrNotRegular && e.What != "" || target == ErrTooBig && e.What == ""
}

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
	return checkRegular(f, max)
}

// checkRegular returns f, open for reading, with its size when it is a regular file
// of at most max bytes; otherwise it closes f and says why (RegularError).
func checkRegular(f *os.File, max int64) (*os.File, int64, error) {
	fi, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, 0, err
	case !fi.Mode().IsRegular():
		f.Close()
		return nil, 0, &RegularError{Path: f.Name(), What: describeMode(fi.Mode())}
	case fi.Size() > max:
		f.Close()
		return nil, 0, &RegularError{Path: f.Name(), Size: fi.Size(), Max: max}
	}
	return f, fi.Size(), nil
}

// describeMode names what a file that is not a regular one is.
func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file"
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
		return nil, &RegularError{Path: path, Size: int64(len(data)), Max: max}
	}
	return data, nil
}
