package testenv

import (
	"crypto/sha1"
	"encoding/hex"

	"github.com/git-atlas/git-atlas/internal/git"
)

// HexOID is an object id a test holds as text: one git printed as it is, "" as the
// zero id, and a made-up name ("base", "h1") for documents that never reach git as
// an id of its own (its sha1).
func HexOID(s string) git.OID {
	if s == "" {
		return git.OID{}
	}
	if id, err := git.ParseOID(s); err == nil {
		return id
	}
	sum := sha1.Sum([]byte(s))
	id, err := git.ParseOID(hex.EncodeToString(sum[:]))
	if err != nil {
		panic(err)
	}
	return id
}
