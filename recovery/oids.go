package recovery

import "github.com/git-atlas/git-atlas/internal/git"

// oids parses ids held as text (a manifest's, a tree listing's) into object ids.
func oids(list ...string) ([]git.OID, error) { return git.ParseOIDs(list) }
