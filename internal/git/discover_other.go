//go:build !unix

package git

import "io/fs"

// ownedByMe is false where file ownership cannot be read the way git reads it:
// discover then leaves every repository to git.
func ownedByMe(fs.FileInfo) bool { return false }

// sameDevice is false where devices cannot be compared (see ownedByMe).
func sameDevice(a, b fs.FileInfo) bool { return false }
