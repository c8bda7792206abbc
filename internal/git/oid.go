package git

import (
	"fmt"
	"strings"

	"github.com/git-atlas/git-atlas/internal/gitid"
)

// OID is a full object id (gitid.OID): made only by ParseOID, from git's own output,
// or by decoding a document, so a value from a ledger, a snapshot or an import source
// reaches git as an object id and never as an option or a revision expression
// (docs/contract.md §10: shared data is untrusted). The zero OID is "no object".
type OID = gitid.OID

// ParseOID parses s as a full object id, refusing anything else: an abbreviated id, a
// ref name, upper case, an option such as --output=FILE.
func ParseOID(s string) (OID, error) { return gitid.ParseOID(s) }

// ParseOIDs parses every id of list, or fails on the first that is not one.
func ParseOIDs(list []string) ([]OID, error) { return gitid.ParseOIDs(list) }

// gitOID is an object id git printed (surrounding white space trimmed); git printing
// anything else is an error, not an id.
func gitOID(out string) (OID, error) {
	s := strings.TrimSpace(out)
	if !isObjectID(s) {
		return OID{}, fmt.Errorf("git printed %q where an object id was expected", clip(s))
	}
	return gitid.ParseOID(s)
}

// OIDRev is o as a revision.
func OIDRev(o OID) Rev { return Rev{s: o.String()} }

// oidStrings turns ids into git's arguments.
func oidStrings(ids []OID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
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
func CheckRefFormat(name string) error { return gitid.CheckRefFormat(name) }

// clip keeps a bad value short in a message.
func clip(s string) string { return gitid.Clip(s) }
