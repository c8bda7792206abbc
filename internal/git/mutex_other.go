//go:build !unix

package git

import (
	"errors"
	"os"
)

var errLocked = errors.New("locked")

func tryFlock(*os.File) error { return errors.ErrUnsupported }
