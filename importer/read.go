package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/git-atlas/git-atlas/internal/confine"
	"github.com/git-atlas/git-atlas/internal/fault"
)

// MaxSourceFile is the size cap of one source file (docs/contract.md §13: import sources are
// hostile input). kimi-atlas and AgenTeam write a few kilobytes per run; a long
// run's event log stays far below this.
const MaxSourceFile = 64 << 20

// readTimeout bounds the reading of one source file: a file on a stalled network or
// FUSE file system makes the import fail, not hang.
const readTimeout = 30 * time.Second

// readChunk is how much one read asks for; the cap and the context are checked
// between reads.
const readChunk = 1 << 20

// errNotRegular refuses what is not a regular file: a symbolic link (to /dev/zero,
// or out of the tree), a FIFO, a device, a directory.
var errNotRegular = errors.New("import reads regular files only")

// readSource reads one source file, bounded (docs/contract.md §13): a regular file only,
// reached through no symbolic link below the source's top and opened without blocking
// (a link or a FIFO is refused, never followed or waited on: confine.Tree), at most
// MaxSourceFile bytes, within readTimeout, and given up as soon as ctx is cancelled
// (SIGTERM). A missing file is fs.ErrNotExist.
func readSource(ctx context.Context, src confine.Tree, path string) ([]byte, error) {
	f, _, err := src.OpenRegular(path, MaxSourceFile)
	var re *confine.RegularError
	switch {
	case errors.Is(err, confine.ErrOutside):
		return nil, err
	case errors.As(err, &re) && re.What != "":
		return nil, fault.Refused("%s is %s: %v", path, re.What, errNotRegular)
	case errors.As(err, &re):
		return nil, fault.Refused("%s is %d bytes, over the %d MiB cap of one source file", path, re.Size, MaxSourceFile>>20)
	case errors.Is(err, fs.ErrNotExist):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("cannot open: %w", err)
	}
	defer f.Close()
	return readBounded(ctx, f, path, MaxSourceFile, readTimeout)
}

// readDir lists a source directory as readSource reads a file, through no symbolic
// link below the source's top: a link is refused as it is, any other failure is
// said with the directory.
func readDir(src confine.Tree, dir string) ([]fs.DirEntry, error) {
	ents, err := src.ReadDir(dir)
	if err != nil && !errors.Is(err, confine.ErrOutside) {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	return ents, err
}

// readBounded reads r to its end: refused past limit bytes (a file that grows while
// it is read), failed after timeout, and given up at once when ctx is done. A read
// that never returns is left to its goroutine: the caller goes on (and closes r).
func readBounded(ctx context.Context, r io.Reader, path string, limit int64, timeout time.Duration) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		var buf []byte
		chunk := make([]byte, readChunk)
		for {
			if ctx.Err() != nil {
				done <- result{nil, ctx.Err()}
				return
			}
			n, err := r.Read(chunk)
			buf = append(buf, chunk[:n]...)
			if int64(len(buf)) > limit {
				done <- result{nil, fault.Refused("%s grew past the %d MiB cap of one source file while it was read", path, limit>>20)}
				return
			}
			if errors.Is(err, io.EOF) {
				done <- result{buf, nil}
				return
			}
			if err != nil {
				done <- result{nil, fmt.Errorf("cannot read: %w", err)}
				return
			}
		}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case res := <-done:
		return res.b, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, fmt.Errorf("cannot read: no end after %v (a stalled file system?)", timeout)
	}
}
