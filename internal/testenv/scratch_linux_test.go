package testenv

import (
	"errors"
	"os"
	"syscall"
	"testing"
)

// TestMemoryScratch: a test binary's temporary directories go to /dev/shm only when
// TMPDIR is unset and /dev/shm is a writable tmpfs with room; and in this binary, where
// that holds, os.TempDir (t.TempDir's parent) is that tmpfs.
func TestMemoryScratch(t *testing.T) {
	fs := func(typ int64, free uint64, err error) func(string, *syscall.Statfs_t) error {
		return func(dir string, st *syscall.Statfs_t) error {
			if dir != memoryDir {
				t.Errorf("statfs of %s, want %s", dir, memoryDir)
			}
			st.Type, st.Bsize, st.Bavail = typ, 4096, free/4096
			return err
		}
	}
	env := func(tmpdir string) func(string) string {
		return func(k string) string {
			if k == "TMPDIR" {
				return tmpdir
			}
			return ""
		}
	}
	yes := func(string) bool { return true }
	for _, c := range []struct {
		name     string
		tmpdir   string
		statfs   func(string, *syscall.Statfs_t) error
		writable func(string) bool
		want     string
	}{
		{"tmpfs with room", "", fs(tmpfsMagic, 8<<30, nil), yes, memoryDir},
		{"TMPDIR set", "/var/tmp", fs(tmpfsMagic, 8<<30, nil), yes, ""},
		{"a disk", "", fs(0xEF53, 8<<30, nil), yes, ""},
		{"a container's 64 MB", "", fs(tmpfsMagic, 64<<20, nil), yes, ""},
		{"no /dev/shm", "", fs(0, 0, errors.New("no such file or directory")), yes, ""},
		{"read-only", "", fs(tmpfsMagic, 8<<30, nil), func(string) bool { return false }, ""},
	} {
		if got := memoryScratch(env(c.tmpdir), c.statfs, c.writable); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}

	want := memoryScratch(func(k string) string { return startTMPDIR }, syscall.Statfs, func(dir string) bool {
		return syscall.Access(dir, 2) == nil
	})
	if want == "" {
		t.Skip("this machine's tests run in TMPDIR or /tmp: no tmpfs with room, or TMPDIR set")
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(t.TempDir(), &st); err != nil || st.Type != tmpfsMagic {
		t.Errorf("t.TempDir() is in %s, not on the tmpfs %s (statfs: %v, type %#x)", os.TempDir(), want, err, st.Type)
	}
}

// startTMPDIR is TMPDIR as the test binary found it: package variables are set
// before testenv's init runs useMemoryScratch.
var startTMPDIR = os.Getenv("TMPDIR")
