package confine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// OpenRegular refuses what a read could wait on or never finish (a FIFO with no
// writer, /dev/zero, a directory) and a file over the bound, without reading it; a
// symbolic link to a regular file is followed.
func TestOpenRegularRefusesWhatNeverEnds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	small, big, link := filepath.Join(dir, "small"), filepath.Join(dir, "big"), filepath.Join(dir, "link")
	if err := os.WriteFile(small, []byte("stages: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, []byte(strings.Repeat("x", 101)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(small, link); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]error{fifo: ErrNotRegular, "/dev/zero": ErrNotRegular, dir: ErrNotRegular, big: ErrTooBig, filepath.Join(dir, "none"): os.ErrNotExist} {
		if _, err := ReadRegular(path, 100); !errors.Is(err, want) {
			t.Errorf("ReadRegular(%s): %v, want %v", path, err, want)
		}
	}
	for _, path := range []string{small, link} {
		if data, err := ReadRegular(path, 100); err != nil || string(data) != "stages: []\n" {
			t.Errorf("ReadRegular(%s): %q %v", path, data, err)
		}
	}
}
