//go:build !unix

package git

import (
	"errors"
	"os"
)

