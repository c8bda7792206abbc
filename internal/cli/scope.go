package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// printOutsideScope prints one line per job of m (job → paths outside its scope,
// docs/contract.md §5.3), after label, in job order.
func printOutsideScope(w io.Writer, label string, m map[string][]string) {
	for _, n := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(w, "  %s  %s: %s\n", label, ledgerText(n, 0), ledgerText(strings.Join(m[n], ", "), 0))
	}
}
