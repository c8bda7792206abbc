package importer

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// assignNames gives each source id a name git-atlas accepts, one to one (docs/contract.md §13:
// an id git refuses is mapped, and the mapping printed). ok says whether a name is
// acceptable as it is (valid, not reserved); taken are names already in use in the
// same namespace (a run's stage names, for its jobs), compared without case.
//
// A source id that is acceptable keeps its name unless another name takes it first;
// any other is mapped (MapName). Two ids whose names would be equal, or differ only
// in case (they would share a ref, a worktree directory and a branch on a
// case-insensitive file system), are told apart deterministically, whatever order
// they come in: an unmapped id before a mapped one, then in byte order; the first
// keeps the name, each later one gets a short hash of its own source id appended.
// A collision that remains (never expected) is refused: no two ids ever share a
// name. prefer names ids an earlier import already named: each keeps that name
// first (when it is still acceptable), so a source that gains a colliding id later
// renames no run imported before.
func assignNames(what string, ids []string, ok func(string) bool, taken []string, prefer map[string]string) (map[string]string, error) {
	uniq := map[string]bool{}
	var order []string
	for _, id := range ids {
		if !uniq[id] {
			uniq[id] = true
			order = append(order, id)
		}
	}
	cand := map[string]string{}
	for _, id := range order {
		cand[id] = candidate(id, ok)
	}
	sort.Slice(order, func(i, j int) bool {
		pi, pj := cand[order[i]] == order[i], cand[order[j]] == order[j]
		if pi != pj {
			return pi
		}
		return order[i] < order[j]
	})
	used := map[string]string{} // folded name -> the source id (or "" for taken)
	for _, t := range taken {
		used[strings.ToLower(t)] = ""
	}
	out := map[string]string{}
	for _, id := range order {
		if n, has := prefer[id]; has && uniq[id] && ok(n) {
			if _, clash := used[strings.ToLower(n)]; !clash {
				used[strings.ToLower(n)] = id
				out[id] = n
			}
		}
	}
	for _, id := range order {
		if _, done := out[id]; done {
			continue
		}
		n := cand[id]
		if _, clash := used[strings.ToLower(n)]; clash {
			n = withHash(n, id)
			if !ok(n) {
				n, _ = MapName(n)
			}
		}
		if other, clash := used[strings.ToLower(n)]; clash || !ok(n) {
			return nil, fault.Usage("%s %q cannot be given a name of its own here (%q is taken by %q)", what, id, n, other)
		}
		used[strings.ToLower(n)] = id
		out[id] = n
	}
	return out, nil
}

// candidate is the name assignNames gives id when nothing collides with it.
func candidate(id string, ok func(string) bool) string {
	if ok(id) {
		return id
	}
	n, _ := MapName(id)
	if !ok(n) {
		n = withHash(n, id)
	}
	return n
}

// withHash appends a short hash of the source id to name, keeping it within 64
// characters.
func withHash(name, id string) string {
	sum := sha256.Sum256([]byte(id))
	if len(name) > 54 {
		name = strings.TrimRight(name[:54], "-.")
	}
	if name == "" {
		name = "id"
	}
	return name + "-" + hex.EncodeToString(sum[:])[:8]
}
