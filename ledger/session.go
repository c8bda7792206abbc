package ledger

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// A session id is not a credential in a shared ledger (docs/contract.md §5.1): whoever reads the
// ledger (every clone, everyone with access to a shared remote) could present it and
// renew, or take back, the lease of the session that drives a run. The ledger keeps a
// keyed hash of it instead: HMAC-SHA256 with a random key in this repository's local
// state (<git-common-dir>/atlas/session-key, made once, never pushed), written as
// SealPrefix followed by 64 hex digits. A plain session id is a valid name (ValidName:
// letters, digits, '.', '_', '-'), which never holds ':', so a stored value that
// starts with SealPrefix is a hash and anything else is a plain id written by an
// earlier release: it still compares (by equality), and the next write that keeps the
// lease writes it hashed. The key is this clone's: in another clone the same session
// hashes differently, so a session takes its run back only in the clone it drove it
// from (by holder name elsewhere).

// SealPrefix starts a sealed (hashed) session id in the ledger.
const SealPrefix = "hmac-sha256:"

// SessionKey is this repository's key for session ids. The zero value seals nothing
// (Seal returns "") and matches only plain ids: readers that could not get the key.
type SessionKey struct{ key []byte }

// NewSessionKey is a key of the given secret bytes (gitstate.LoadSessionKey makes the
// repository's from its local state; a test that applies the driver rule without a
// repository makes one).
func NewSessionKey(secret []byte) SessionKey { return SessionKey{key: append([]byte(nil), secret...)} }

// IsZero reports whether k is the zero key, which seals nothing.
func (k SessionKey) IsZero() bool { return k.key == nil }

// Sealed reports whether a stored session is a keyed hash (else a plain id an
// earlier release wrote, or none).
func Sealed(stored string) bool { return strings.HasPrefix(stored, SealPrefix) }

// Seal is what the ledger keeps of session ("" for none, or without a key).
func (k SessionKey) Seal(session string) string {
	if session == "" || k.key == nil {
		return ""
	}
	if Sealed(session) {
		return session // already what the ledger keeps (a plain id never starts so)
	}
	m := hmac.New(sha256.New, k.key)
	m.Write([]byte(session))
	return SealPrefix + hex.EncodeToString(m.Sum(nil))
}

// Matches reports whether the session presented is the one stored: its keyed hash, or
// (a ledger an earlier release wrote) the plain id itself.
func (k SessionKey) Matches(stored, session string) bool {
	if stored == "" || session == "" || Sealed(session) {
		return false // a hash presented as a session is never one
	}
	if !Sealed(stored) {
		return stored == session
	}
	return k.key != nil && hmac.Equal([]byte(stored), []byte(k.Seal(session)))
}

// Same is Matches, or both none.
func (k SessionKey) Same(stored, session string) bool {
	return (stored == "" && session == "") || k.Matches(stored, session)
}

// Reseal is a stored session as the next write keeps it: a plain id hashed.
func (k SessionKey) Reseal(stored string) string {
	if stored == "" || Sealed(stored) || k.key == nil {
		return stored
	}
	return k.Seal(stored)
}
