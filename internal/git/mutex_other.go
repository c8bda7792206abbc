//go:build !unix

package git

import (
	"errors"
	"os"
)

func flock(*os.File) error { return errors.ErrUnsupported }
