//go:build !linux

package testenv

// useMemoryScratch leaves os.TempDir alone where no tmpfs is known to be mounted.
func useMemoryScratch() {}
