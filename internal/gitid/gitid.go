// Package gitid holds git's object ids and the rules of ref names, with no git
// process behind them: a leaf that the ledger's documents and internal/git share, so
// a document holds an object id already validated, and the pure half of the ledger
// needs no git to check one (docs/contract.md §10: shared data is untrusted).
package gitid

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// OID is a full object id: 40 (sha1) or 64 (sha256) lowercase hex digits. It is made
// only by ParseOID (which internal/git also uses on git's own output) and by decoding
// JSON, which applies ParseOID, so a value from a ledger, a snapshot or an import
// source reaches git as an object id and never as an option or a revision
// expression. The zero OID is "no object"; it encodes as "".
type OID struct{ hex string }

// ParseOID parses s as a full object id, refusing anything else: an abbreviated id, a
// ref name, upper case, an option such as --output=FILE.
func ParseOID(s string) (OID, error) {
	if !IsObjectID(s) {
		return OID{}, fmt.Errorf("%q is not an object id (40 or 64 lowercase hex digits)", Clip(s))
	}
	return OID{hex: s}, nil
}

// ParseOptional is ParseOID with "" read as the zero OID ("no object"): a ref git
// found missing, an optional member.
func ParseOptional(s string) (OID, error) {
	if s == "" {
		return OID{}, nil
	}
	return ParseOID(s)
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

// IsObjectID reports whether s is a full object id.
func IsObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// String is the id's hex digits ("" for the zero OID).
func (o OID) String() string { return o.hex }

// IsZero reports whether o is the zero OID (no object).
func (o OID) IsZero() bool { return o.hex == "" }

// MarshalText is the id's hex digits: a document holding an OID encodes exactly as
// one holding the id as a string did ("" for the zero OID).
func (o OID) MarshalText() ([]byte, error) { return []byte(o.hex), nil }

// UnmarshalText reads "" as the zero OID and anything else through ParseOID. A value
// that is not an object id fails as a *json.UnmarshalTypeError, which encoding/json
// completes with the path of the member that held it, so a document's decoder can
// name the field (OIDError).
func (o *OID) UnmarshalText(b []byte) error {
	s := string(b)
	id, err := ParseOptional(s)
	if err != nil {
		return &json.UnmarshalTypeError{Value: "string " + strconv.Quote(Clip(s)), Type: oidType}
	}
	*o = id
	return nil
}

var oidType = reflect.TypeFor[OID]()

// OIDError is the plain-words form of an error of json.Unmarshal that an OID member
// refused (the JSON path of the member, the value, why), and reports whether err was
// one.
func OIDError(err error) (string, bool) {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Type != oidType {
		return "", false
	}
	where := te.Field
	if where == "" {
		where = "value"
	}
	return fmt.Sprintf("%s %s is not an object id (40 or 64 lowercase hex digits)", where, strings.TrimPrefix(te.Value, "string ")), true
}

// CheckRefFormat applies the rules of `git check-ref-format --allow-onelevel` to name
// (git-check-ref-format(1)), and refuses a leading "-" as `--branch` does.
func CheckRefFormat(name string) error {
	bad := func(why string) error { return fmt.Errorf("%q is not a valid ref name: %s", Clip(name), why) }
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

// Clip keeps a bad value short in a message.
func Clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
