package gitstate

import (
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/git"
)

// mustOID parses an id a test read from git.
func mustOID(t testing.TB, s string) git.OID {
	t.Helper()
	id, err := git.ParseOID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// testOID is an object id made of c, for documents that never reach git.
func testOID(c string) git.OID {
	id, err := git.ParseOID(strings.Repeat(c, 40))
	if err != nil {
		panic(err)
	}
	return id
}

// at is the blob at path in commit.
func at(t testing.TB, commit, path string) git.BlobSpec {
	return git.BlobSpec{Commit: mustOID(t, commit), Path: path}
}
