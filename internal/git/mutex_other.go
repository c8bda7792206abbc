//go:build !unix

package git

import (
	"errors"
	"os"
)

func flock(*os.File) error { return errors.ErrUnsupported }

var errLocked = errors.New("locked")

func tryFlock(*os.File) error { return errors.ErrUnsupported }
