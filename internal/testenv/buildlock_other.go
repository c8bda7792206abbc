//go:build !unix

package testenv

import "errors"

// lockDir: there is no flock here, so the build is not shared.
func lockDir(string) (func(), error) { return nil, errors.ErrUnsupported }

// tryLockDir: no flock, no sharing, nothing to prune.
func tryLockDir(string) (func(), error) { return nil, errors.ErrUnsupported }
