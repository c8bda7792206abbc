package trust

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/git-atlas/git-atlas/ledger"
)

// The header of a run (run.json) is written once, by the clone that starts it, and
// travels with the ledger: a clone that pulls the run can rewrite it, keeping the
// intent and changing the rest. So the record proves, beside the intent, each member
// of the header's free text as this clone wrote it (`start`) or a person read it here
// (`trust RUN`): a member reaches an agent only when the record holds the hash of its
// value (Intents.Header; docs/contract.md §6). The members git-atlas composes (ids,
// kinds, times, object ids, numbers, stage names and gates) are not text; every other
// member is, a member a later release adds included (headerTexts' extra).

// headerText is one member of a header's free text: its name, its value as canonical
// JSON, and how to clear it from a copy of the header.
type headerText struct {
	name, value string
	clear       func(h *ledger.Header)
}

// stageText is the free text of a stage's definition.
type stageText struct {
	Verify string       `json:"verify,omitempty"`
	Scope  []string     `json:"scope,omitempty"`
	Extra  ledger.Extra `json:"extra,omitempty"`
}

// headerTexts are the members of h's free text other than its intent (which
// intentHash proves), those that hold anything; h.Stages' elements are cleared in
// place, so a caller clears a copy whose Stages it cloned.
func headerTexts(h *ledger.Header) []headerText {
	var out []headerText
	add := func(name string, v any, clear func(h *ledger.Header)) {
		b, err := json.Marshal(v)
		if err != nil { // not a value this clone could have written
			b = []byte("\x00unencodable")
		}
		switch string(b) {
		case "null", `""`, "[]", "{}", "0", "false":
			return
		}
		out = append(out, headerText{name, string(b), clear})
	}
	add("criteria", h.Criteria, func(h *ledger.Header) { h.Criteria = nil })
	add("verify", h.Verify, func(h *ledger.Header) { h.Verify = "" })
	add("scope", h.Scope, func(h *ledger.Header) { h.Scope = nil })
	add("config_files", h.ConfigFiles, func(h *ledger.Header) { h.ConfigFiles = nil })
	add("imported_from", h.ImportedFrom, func(h *ledger.Header) { h.ImportedFrom = nil })
	add("managed_by", h.ManagedBy, func(h *ledger.Header) { h.ManagedBy = "" })
	add("resume_with", h.ResumeWith, func(h *ledger.Header) { h.ResumeWith = "" })
	add("resume_with_text", h.ResumeWithText, func(h *ledger.Header) { h.ResumeWithText = false })
	add("setup", h.Setup, func(h *ledger.Header) { h.Setup = "" })
	add("setup_timeout", h.SetupTimeout, func(h *ledger.Header) { h.SetupTimeout = "" })
	add("ports", h.Ports, func(h *ledger.Header) { h.Ports = 0 })
	add("extra", h.Extra, func(h *ledger.Header) { h.Extra = nil })
	for i, d := range h.Stages {
		add("stage "+d.Name, stageText{d.Verify, d.Scope, d.Extra}, func(h *ledger.Header) {
			if i < len(h.Stages) {
				h.Stages[i].Verify, h.Stages[i].Scope, h.Stages[i].Extra = "", nil, nil
			}
		})
	}
	return out
}

// headerHash is what the record keeps of a member of a run's header (a hash domain of
// its own: no command, intent or person hashes the same).
func headerHash(run, member, value string) string {
	h := sha256.Sum256([]byte("git-atlas trust header 1\x00" + run + "\x00" + member + "\x00" + value))
	return hex.EncodeToString(h[:])
}

// membersHash is what the record keeps of which members of run's header hold free
// text (a hash domain of its own). With each member's own hash it proves the header's
// text whole: a member taken away (a verify removed, so that nothing need pass before
// a landing) is seen as well as one changed.
func membersHash(run string, texts []headerText) string {
	h := sha256.New()
	fmt.Fprintf(h, "git-atlas trust members 1\x00%s", run)
	for _, m := range texts {
		fmt.Fprintf(h, "\x00%s", m.name)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ProvesHeader reports whether the record proves h's free text whole, as this clone
// wrote it or a person read it here: its intent, each member as it stands, and that
// no other member held anything. A record written before members were proven proves
// no header whole.
func (s Set) ProvesHeader(h *ledger.Header) bool {
	texts := headerTexts(h)
	if !s.TrustsIntent(h.Intent) || !s.hashes[membersHash(s.run, texts)] {
		return false
	}
	for _, m := range texts {
		if !s.hashes[headerHash(s.run, m.name, m.value)] {
			return false
		}
	}
	return true
}

// HeaderProven is ProvesHeader of run's record (a record that cannot be read proves
// nothing).
func (in *Intents) HeaderProven(ctx context.Context, run string, h *ledger.Header) bool {
	s := in.set(ctx, run)
	return s.hashes != nil && s.ProvesHeader(h)
}

// HeaderText is one member of a run header's free text and its value, as JSON.
type HeaderText struct {
	Member string          `json:"member"`
	Value  json.RawMessage `json:"value"`
}

// HeaderWithheld are the members of h's free text (other than its intent) that run's
// record does not prove, with their values: what reaches agents here only once a
// person trusts the run, and so what `trust --list RUN` shows that person.
func (s Set) HeaderWithheld(h *ledger.Header) []HeaderText {
	var out []HeaderText
	for _, m := range headerTexts(h) {
		if !s.hashes[headerHash(s.run, m.name, m.value)] {
			v := json.RawMessage(m.value)
			if !json.Valid(v) {
				v, _ = json.Marshal(m.value)
			}
			out = append(out, HeaderText{m.name, v})
		}
	}
	return out
}

// Header is h as it may reach an agent here: a copy with each member of its free
// text (other than the intent, which Shown decides) that run's record does not prove
// cleared, and whether any was (docs/contract.md §6). A record that cannot be read
// proves nothing.
func (in *Intents) Header(ctx context.Context, run string, h *ledger.Header) (ledger.Header, bool) {
	out := *h
	out.Stages = slices.Clone(h.Stages)
	s := in.set(ctx, run)
	withheld := false
	for _, m := range headerTexts(h) {
		if !s.hashes[headerHash(run, m.name, m.value)] {
			m.clear(&out)
			withheld = true
		}
	}
	return out, withheld
}
