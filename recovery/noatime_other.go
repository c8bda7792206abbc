//go:build !linux

package recovery

// oNoAtime is 0 where the system has no O_NOATIME: files are opened as usual.
const oNoAtime = 0
