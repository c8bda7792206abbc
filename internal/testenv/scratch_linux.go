package testenv

import (
	"os"
	"syscall"
)

// tmpfsMagic is statfs's f_type of a tmpfs (linux/magic.h TMPFS_MAGIC).
const tmpfsMagic = 0x01021994

// memoryDir is the tmpfs a test binary's temporary directories go to when TMPDIR
// does not name one (memoryScratch).
const memoryDir = "/dev/shm"

// scratchMinFree is the free space memoryDir must have for the tests' temporary
// directories to go there: more than ten times what the README's test command held in
// it at once (bench/results/2026-12-07.md); a container's /dev/shm of 64 MB is left
// alone.
const scratchMinFree = 1 << 30

// memoryScratch is the directory a test binary's temporary directories go to: memoryDir
// when TMPDIR is unset and memoryDir is a writable tmpfs with scratchMinFree free,
// "" (leave os.TempDir alone) otherwise. The suites write durably: every ledger
// write, object and snapshot is fsynced, with its directory (docs/contract.md §11.12),
// and on a virtual machine's disk those flushes were much of the test command's wall
// time and most of its system time (bench/results/2026-12-07.md). On a tmpfs the same
// calls are made (the crash-state tests record them with strace) and return at once;
// a person who wants the suites on a disk sets TMPDIR, and .ci/run runs the sweeps so.
func memoryScratch(getenv func(string) string, statfs func(string, *syscall.Statfs_t) error, writable func(string) bool) string {
	if getenv("TMPDIR") != "" {
		return ""
	}
	var st syscall.Statfs_t
	if statfs(memoryDir, &st) != nil || st.Type != tmpfsMagic || st.Bavail*uint64(st.Bsize) < scratchMinFree {
		return ""
	}
	if !writable(memoryDir) {
		return ""
	}
	return memoryDir
}

// useMemoryScratch points TMPDIR at memoryScratch's choice, in a test binary only
// (testenv's init): its own temporary directories, testscript's work directories and
// the processes it starts then use it.
func useMemoryScratch() {
	dir := memoryScratch(os.Getenv, syscall.Statfs, func(dir string) bool {
		return syscall.Access(dir, 2 /* W_OK */) == nil
	})
	if dir != "" {
		_ = os.Setenv("TMPDIR", dir)
	}
}
