package recovery

import (
	"fmt"
	"slices"

	"github.com/git-atlas/git-atlas/internal/git"
)

// oids parses ids held as text (a manifest's, a tree listing's) into object ids.
func oids(list ...string) ([]git.OID, error) { return git.ParseOIDs(list) }

// checkManifest refuses a manifest whose object ids are not full ids or whose pending
// refs are not the ones a snapshot records: a snapshot may have been pulled, and its
// manifest names what restore hands to git (SPEC §10: shared data is untrusted).
func checkManifest(m *Manifest) error {
	ids := []string{m.Tree, m.IndexTree}
	if m.Head != "" {
		ids = append(ids, m.Head)
	}
	if m.Baseline != "" {
		ids = append(ids, m.Baseline)
	}
	for name, id := range m.Pending {
		if !slices.Contains(pendingRefs, name) {
			return fmt.Errorf("pending ref %q is not one of %v", name, pendingRefs)
		}
		ids = append(ids, id)
	}
	if _, err := oids(ids...); err != nil {
		return err
	}
	return nil
}
