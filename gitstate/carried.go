package gitstate

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// A ledger on a shared remote is written by people this clone does not know: every ref
// push, pull and a sync through atlas.remote carry is taken only in a shape git-atlas
// writes (docs/contract.md §3) and only at a commit, and a remote chain that shares no
// history with this repository's chain of the same id is another run. Anything else is
// left out for that ref alone, so one bad ref never stops the other runs.

// RefKind is the kind of a ref git-atlas carries between clones.
type RefKind int

// The kinds of refs git-atlas carries (docs/contract.md §3).
const (
	KindRun      RefKind = iota + 1 // refs/atlas/runs/<run>
	KindPin                         // refs/atlas/pins/<run>/{baseline,stage/<stage>[/<n>],node/<node>}
	KindRecovery                    // refs/atlas/recovery/<run>/<snapshot>
	KindDiverged                    // refs/atlas/diverged/<run>/<n>
	KindBranch                      // refs/heads/atlas/<run>/{node/<node>,union,replay/<stage>/<n>}
)

// CarriedRef is a ref name of a shape git-atlas writes, parsed.
type CarriedRef struct {
	Name string
	Run  string
	Kind RefKind
}

// FastForwardOnly says whether the ref may only move forward (a run's ledger and
// its branches); pins, recovery refs and kept diverged chains are written once.
func (c CarriedRef) FastForwardOnly() bool { return c.Kind == KindRun || c.Kind == KindBranch }

// NotCarried is the reason a ref name is not one git-atlas writes.
const NotCarried = "not a ref git-atlas writes"

// ParseCarriedRef parses a ref name push and pull carry; an error says why the name is
// none of git-atlas's (a person's own branch atlas/wip, or anything a remote holds).
func ParseCarriedRef(name string) (CarriedRef, error) {
	var c CarriedRef
	var rest string
	for _, k := range []struct {
		prefix string
		kind   RefKind
	}{{RunsPrefix, KindRun}, {PinsPrefix, KindPin}, {ledger.RecoveryPrefix, KindRecovery}, {DivergedPrefix, KindDiverged}, {BranchesPrefix, KindBranch}} {
		if r, ok := strings.CutPrefix(name, k.prefix); ok {
			c, rest = CarriedRef{Name: name, Kind: k.kind}, r
			break
		}
	}
	bad := func(why string) (CarriedRef, error) {
		return CarriedRef{}, fmt.Errorf("%s: %s", NotCarried, why)
	}
	if c.Kind == 0 {
		return bad("outside refs/atlas/{runs,pins,recovery,diverged}/ and refs/heads/atlas/")
	}
	run, tail, deeper := strings.Cut(rest, "/")
	if ledger.ValidName("run", run) != nil {
		return bad("no run id")
	}
	c.Run = run
	parts := strings.Split(tail, "/")
	name1 := func(i int) bool { return i < len(parts) && ledger.ValidName("name", parts[i]) == nil }
	ok := false
	switch c.Kind {
	case KindRun:
		ok = !deeper
	case KindPin:
		switch {
		case !deeper:
		case parts[0] == "baseline":
			ok = len(parts) == 1
		case parts[0] == "stage":
			ok = name1(1) && (len(parts) == 2 || len(parts) == 3 && counter(parts[2]))
		case parts[0] == "node":
			ok = len(parts) == 2 && name1(1)
		}
	case KindRecovery:
		ok = deeper && len(parts) == 1 && ledger.CheckSnapshotID(parts[0]) == nil
	case KindDiverged:
		ok = deeper && len(parts) == 1 && counter(parts[0])
	case KindBranch:
		switch {
		case !deeper:
		case parts[0] == "union":
			ok = len(parts) == 1
		case parts[0] == "node":
			ok = len(parts) == 2 && name1(1)
		case parts[0] == "replay":
			ok = len(parts) == 3 && name1(1) && counter(parts[2])
		}
	}
	if !ok {
		return bad("no shape of docs/contract.md §3")
	}
	return c, nil
}

// counter reports whether s is a positive decimal number as git-atlas writes one.
func counter(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n > 0 && strconv.Itoa(n) == s
}

// RefSpace is a set of ref names, for the conflict git refuses between a ref and
// another below it (refs/atlas/runs/x cannot be created beside refs/atlas/runs/x/y).
type RefSpace struct {
	names map[string]bool
	below map[string]string // "a/b/" → one ref under it
}

// NewRefSpace holds the names (the keys of a name → id map).
func NewRefSpace(refs map[string]string) *RefSpace {
	s := &RefSpace{names: map[string]bool{}, below: map[string]string{}}
	for name := range refs {
		s.Add(name)
	}
	return s
}

// Add puts name in the set.
func (s *RefSpace) Add(name string) {
	s.names[name] = true
	for i := strings.LastIndexByte(name, '/'); i > 0; i = strings.LastIndexByte(name[:i], '/') {
		if _, ok := s.below[name[:i+1]]; ok {
			break
		}
		s.below[name[:i+1]] = name
	}
}

// InTheWay returns a ref of the set that keeps name from being created (a ref that
// is a directory of name's, or one below name), or "".
func (s *RefSpace) InTheWay(name string) string {
	if other, ok := s.below[name+"/"]; ok {
		return other
	}
	for i := strings.IndexByte(name, '/'); i > 0; i = nextSlash(name, i) {
		if s.names[name[:i]] {
			return name[:i]
		}
	}
	return ""
}

func nextSlash(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// Commits returns which of the ids (ref values, maybe from elsewhere) name commits
// here; a missing object or one of another type does not, and neither does text
// that is no object id.
func Commits(ctx context.Context, repo *git.Repository, ids []string) (map[string]bool, error) {
	var oids []git.OID
	for _, id := range slices.Compact(slices.Sorted(slices.Values(ids))) {
		if o, err := git.ParseOID(id); err == nil {
			oids = append(oids, o)
		}
	}
	found, err := repo.Commits(ctx, oids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(found))
	for o := range maps.Keys(found) {
		out[o.String()] = true
	}
	return out, nil
}

// Relation is how a remote's tip of a ref stands to this repository's.
type Relation int

// The relations of a remote tip to the local one.
const (
	Same      Relation = iota // the same commit
	Missing                   // no ref here: the remote's is new
	Forward                   // the remote's is ahead: a fast-forward
	Behind                    // this repository's is ahead
	Split                     // both have commits the other lacks (one run that diverged)
	Unrelated                 // two ledger chains of one id that are two runs (Relate)
	Differs                   // a ref that is written once holds another commit
)

// Relate says how remote stands to local (both commits here, or local ""). For a
// run's ledger (run set), a split is Unrelated unless the two chains share history and
// the same run.json (docs/contract.md §3, invariant 5): the remote's then is another
// run that took the same id, never one this clone's chain diverged from. An error is
// this ref's: its history could not be read.
func Relate(ctx context.Context, repo *git.Repository, c CarriedRef, local, remote string) (Relation, error) {
	switch {
	case local == remote:
		return Same, nil
	case local == "":
		return Missing, nil
	case !c.FastForwardOnly():
		return Differs, nil
	}
	if ff, err := IsAncestorID(ctx, repo, local, remote); err != nil {
		return 0, err
	} else if ff {
		return Forward, nil
	}
	if ahead, err := IsAncestorID(ctx, repo, remote, local); err != nil {
		return 0, err
	} else if ahead {
		return Behind, nil
	}
	if c.Kind != KindRun {
		return Split, nil
	}
	one, err := oneRun(ctx, repo, local, remote)
	if err != nil {
		return 0, err
	}
	if !one {
		return Unrelated, nil
	}
	return Split, nil
}

// oneRun reports whether two ledger chains are one run's: the same run.json blob and
// a common ancestor.
func oneRun(ctx context.Context, repo *git.Repository, a, b string) (bool, error) {
	specs, err := blobSpecs(a, "run.json")
	if err != nil {
		return false, err
	}
	more, err := blobSpecs(b, "run.json")
	if err != nil {
		return false, err
	}
	blobs, err := repo.BlobsAt(ctx, append(specs, more...))
	if err != nil {
		return false, err
	}
	if blobs[0].Err != nil || blobs[1].Err != nil || blobs[0].ID != blobs[1].ID {
		return false, nil
	}
	return repo.HaveCommonAncestor(ctx, specs[0].Commit, more[0].Commit)
}

// Incoming is one of a remote's refs, screened before any local ref moves for it.
type Incoming struct {
	CarriedRef // Kind 0: the name is none of git-atlas's (Skip says why)
	// Remote and Local are the ref's ids there and here ("": none).
	Remote, Local string
	// Rel is how Remote stands to Local, when Skip is "".
	Rel Relation
	// Skip is why the ref is left as it is here ("": take it as Rel says).
	Skip string
	// Fault says the skip is this ref's own failure (not a commit, a history that
	// cannot be read, another ref in its way) rather than a name git-atlas does not
	// write; Collided that the ref is the ledger of another run of the same id.
	Fault, Collided bool
}

// Screen judges each of a remote's refs (name → id, its objects fetched here) against
// this repository's refs (name → id) before anything moves: the name must be of a
// shape git-atlas writes, a branch must be of a run one side's ledger holds, the
// object must be a commit, nothing here may stand in the way of creating it, and a
// run whose chain shares no history with this repository's (Unrelated) is another
// run: it is skipped, and so is every other ref of it the remote has. The result is
// sorted by name; an error is only one that concerns every ref (reading objects).
func Screen(ctx context.Context, repo *git.Repository, theirs, local map[string]string) ([]Incoming, error) {
	names := slices.Sorted(maps.Keys(theirs))
	out := make([]Incoming, len(names))
	var ids []string
	for i, name := range names {
		in := Incoming{Remote: theirs[name], Local: local[name]}
		c, err := ParseCarriedRef(name)
		in.CarriedRef, in.Name = c, name
		switch {
		case err != nil:
			in.Skip = err.Error()
		case in.Remote != in.Local:
			ids = append(ids, in.Remote)
		}
		out[i] = in
	}
	commits, err := Commits(ctx, repo, ids)
	if err != nil {
		return nil, err
	}
	space := NewRefSpace(local)
	judge := func(in *Incoming) {
		switch {
		case in.Remote == in.Local:
			in.Rel = Same
			return
		case !commits[in.Remote]:
			in.Skip, in.Fault = "the remote's object is not a commit", true
			return
		case in.Local == "":
			if other := space.InTheWay(in.Name); other != "" {
				in.Skip, in.Fault = "cannot be created here: "+other+" is in its way", true
				return
			}
		}
		rel, err := Relate(ctx, repo, in.CarriedRef, in.Local, in.Remote)
		if err != nil {
			in.Skip, in.Fault = fmt.Sprintf("its history cannot be compared: %v", err), true
			return
		}
		in.Rel = rel
	}
	// Runs first: a run's verdict decides its other refs'.
	known, collided := map[string]bool{}, map[string]bool{}
	for name := range local {
		if c, err := ParseCarriedRef(name); err == nil && c.Kind == KindRun {
			known[c.Run] = true
		}
	}
	for i := range out {
		in := &out[i]
		if in.Skip != "" || in.Kind != KindRun {
			continue
		}
		judge(in)
		switch {
		case in.Skip == "" && in.Rel == Unrelated:
			in.Skip, in.Fault, in.Collided = "another run with the same id: its ledger shares no history with this repository's, which is kept as it is", true, true
			collided[in.Run] = true
		case in.Skip == "":
			known[in.Run] = true
		}
	}
	for i := range out {
		in := &out[i]
		switch {
		case in.Skip != "" || in.Kind == KindRun:
		case collided[in.Run] && in.Remote != in.Local:
			in.Skip = "of the remote's other run " + in.Run + " (same id, no shared history)"
		case in.Kind == KindBranch && !known[in.Run]:
			in.Skip = NotCarried + ": a branch of no run either ledger holds"
		default:
			judge(in)
		}
	}
	return out, nil
}

// Collision is the conflict of runs whose ledger on remote is another run's of the
// same id (no shared history): this repository's runs are kept as they are, and
// nothing of the remote's runs of those ids is taken (exit 3, docs/contract.md §10).
func Collision(remote string, runs []string) error {
	return fault.Conflict("run(s) %s on %s are other runs with the same id (their ledgers share no history with this repository's): this repository's are kept as they are, and nothing of %s's runs of those ids was taken", strings.Join(runs, ", "), remote, remote).
		WithHint("one remote cannot hold two runs of one id: keep this repository's run off %s, or ask whoever started the other one to remove theirs", remote)
}
