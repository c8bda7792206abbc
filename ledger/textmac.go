package ledger

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
)

// Text this clone wrote into a run (docs/contract.md §6): the free text of an event (its data)
// and of a job (its scope, verify, kind, criteria and result) travels with the ledger,
// and a clone that pulled a run can add its own to it. So that an agent here reads
// only what this clone wrote (or a run a person trusted here), each event and job this
// clone writes carries a keyed MAC of that text: HMAC-SHA256 with the session key
// (session.go; local state, never pushed), bound to the run and the item, written as
// SealPrefix followed by 64 hex digits. Another clone's key makes another MAC, a
// ledger an earlier release wrote has none, and an edited item no longer matches:
// each of those reads as written elsewhere.

// EventMAC is the MAC of e's text as run's event, "" without a key.
func (k SessionKey) EventMAC(run string, e *Event) string {
	if k.key == nil {
		return ""
	}
	m := hmac.New(sha256.New, k.key)
	field(m, "git-atlas event text 1")
	field(m, run)
	field(m, fmt.Sprint(e.Seq))
	field(m, string(e.Type))
	field(m, e.Stage)
	field(m, e.Job)
	field(m, e.Holder)
	field(m, canonicalJSON(e.Data))
	return SealPrefix + hex.EncodeToString(m.Sum(nil))
}

// JobMAC is the MAC of j's text as run's job, "" without a key.
func (k SessionKey) JobMAC(run string, j *Job) string {
	if k.key == nil {
		return ""
	}
	m := hmac.New(sha256.New, k.key)
	field(m, "git-atlas job text 1")
	field(m, run)
	field(m, j.ID)
	field(m, fmt.Sprint(len(j.Scope)))
	for _, s := range j.Scope {
		field(m, s)
	}
	field(m, j.Verify)
	field(m, j.Kind)
	field(m, fmt.Sprint(len(j.Criteria)))
	for _, c := range j.Criteria {
		field(m, c)
	}
	field(m, canonicalJSON(j.Result))
	return SealPrefix + hex.EncodeToString(m.Sum(nil))
}

// OwnEvent reports whether e's text is run's as this clone wrote it.
func (k SessionKey) OwnEvent(run string, e *Event) bool {
	return k.key != nil && e.MAC != "" && hmac.Equal([]byte(e.MAC), []byte(k.EventMAC(run, e)))
}

// OwnJob reports whether j's text is run's as this clone wrote it.
func (k SessionKey) OwnJob(run string, j *Job) bool {
	return k.key != nil && j.MAC != "" && hmac.Equal([]byte(j.MAC), []byte(k.JobMAC(run, j)))
}

// field writes s length-prefixed, so that no two lists of fields hash alike.
func field(h hash.Hash, s string) {
	fmt.Fprintf(h, "%d:%s\n", len(s), s)
}

// canonicalJSON is raw as the ledger stores it (encoding/json's compact form), so
// that what was signed before writing and what is read back agree.
func canonicalJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return string(raw)
	}
	return string(b)
}
