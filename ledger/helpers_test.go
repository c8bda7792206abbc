package ledger

import (
	"strings"

	"github.com/git-atlas/git-atlas/internal/gitid"
)

// testOID is an object id made of c, for documents that never reach git.
func testOID(c string) gitid.OID {
	id, err := gitid.ParseOID(strings.Repeat(c, 40))
	if err != nil {
		panic(err)
	}
	return id
}
