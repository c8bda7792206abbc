//go:build !linux

package testenv

// Restat reads git's stat data on Linux only: elsewhere it reports false, and the
// caller refreshes the copy's index with git.
func Restat(repo, tmpl string) (bool, error) { return false, nil }
