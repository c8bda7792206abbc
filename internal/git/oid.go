package git

import (
	"fmt"
	"strings"
)

// OID is a full object id: 40 (sha1) or 64 (sha256) lowercase hex digits. It is made
// only by ParseOID and from git's own output, so a value from a ledger, a snapshot or
// an import source reaches git as an object id and never as an option or a revision
// expression (docs/contract.md §10: shared data is untrusted). The zero OID is "no object".
type OID struct{ hex string }

// ParseOID parses s as a full object id, refusing anything else: an abbreviated id, a
// ref name, upper case, an option such as --output=FILE.
func ParseOID(s string) (OID, error) {
	if !isObjectID(s) {
		return OID{}, fmt.Errorf("%q is not an object id (40 or 64 lowercase hex digits)", clip(s))
	}
	return OID{hex: s}, nil
}

// ParseOIDs parses every id of list, or fails on the first that is not one.
func ParseOIDs(list []string) ([]OID, error) {
	out := make([]OID, len(list))
	for i, s := range list {
		id, err := ParseOID(s)
		if err != nil {
			return nil, err
		}
		out[i] = id
	}
	return out, nil
}

// gitOID is an object id git printed (surrounding white space trimmed); git printing
// anything else is an error, not an id.
func gitOID(out string) (OID, error) {
	s := strings.TrimSpace(out)
	if !isObjectID(s) {
		return OID{}, fmt.Errorf("git printed %q where an object id was expected", clip(s))
	}
	return OID{hex: s}, nil
}

// String is the id's hex digits ("" for the zero OID).
func (o OID) String() string { return o.hex }

// IsZero reports whether o is the zero OID (no object).
func (o OID) IsZero() bool { return o.hex == "" }

// Rev is o as a revision.
func (o OID) Rev() Rev { return Rev{s: o.hex} }

// oidStrings turns ids into git's arguments.
func oidStrings(ids []OID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.hex
	}
	return out
}

// Rev is a revision git resolves: an object id, a ref name that passes git's
// check-ref-format rules (RefRev), or what a person typed on a command line (ArgRev).
// Nothing read from a ledger becomes a Rev but through an OID.
type Rev struct{ s string }

// HeadRev is HEAD.
func HeadRev() Rev { return Rev{s: "HEAD"} }

// RefRev is the ref name as a revision, when it passes the rules of `git
// check-ref-format --allow-onelevel` (and does not start with "-").
func RefRev(name string) (Rev, error) {
	if err := CheckRefFormat(name); err != nil {
		return Rev{}, err
	}
	return Rev{s: name}, nil
}

// ArgRev is a revision a person gave as an argument (`--baseline main~2`): git
// resolves it as they wrote it, after --end-of-options. Empty text, a control
// character or a leading "-" is refused.
func ArgRev(arg string) (Rev, error) {
	if arg == "" || strings.HasPrefix(arg, "-") || strings.ContainsFunc(arg, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return Rev{}, fmt.Errorf("%q is not a revision", clip(arg))
	}
	return Rev{s: arg}, nil
}

// String is the revision as git is given it.
func (r Rev) String() string { return r.s }

// IsZero reports whether r is the zero Rev (none).
func (r Rev) IsZero() bool { return r.s == "" }

// CheckRefFormat applies the rules of `git check-ref-format --allow-onelevel` to name
// (git-check-ref-format(1)), and refuses a leading "-" as `--branch` does.
func CheckRefFormat(name string) error {
	bad := func(why string) error { return fmt.Errorf("%q is not a valid ref name: %s", clip(name), why) }
	switch {
	case name == "" || name == "@":
		return bad("empty or @")
	case strings.HasPrefix(name, "-"):
		return bad("starts with -")
	case strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.Contains(name, "//"):
		return bad("empty component")
	case strings.HasSuffix(name, "."):
		return bad("ends with .")
	case strings.Contains(name, ".."):
		return bad("contains ..")
	case strings.Contains(name, "@{"):
		return bad("contains @{")
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) }):
		return bad("contains a control character, space or one of ~^:?*[\\")
	}
	for c := range strings.SplitSeq(name, "/") {
		if strings.HasPrefix(c, ".") || strings.HasSuffix(c, ".lock") {
			return bad("a component starts with . or ends with .lock")
		}
	}
	return nil
}

// clip keeps a bad value short in a message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
