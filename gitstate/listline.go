package gitstate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/gitid"
	"github.com/git-atlas/git-atlas/ledger"
)

// summaryHeader and summaryState are the fields of run.json and state.json that
// detecting an interrupted run reads (Interrupted, Live, CurrentStage) and that a
// candidate or a `list` row shows; their JSON names are Header's and State's. The
// same structs are the summary line of a ledger commit (LedgerMessage), so a summary
// read from a message and one decoded from the documents cannot differ in shape.
type summaryHeader struct {
	Schema    int       `json:"schema"`
	RunID     string    `json:"run_id"`
	Kind      string    `json:"kind"`
	Intent    string    `json:"intent,omitempty"`
	Session   string    `json:"session,omitempty"`
	Baseline  gitid.OID `json:"baseline"`
	CreatedAt string    `json:"created_at"`
	// The run's pipeline mode (mode.go): detection reports who resumes it.
	PipelineMode   string `json:"pipeline_mode,omitempty"`
	ManagedBy      string `json:"managed_by,omitempty"`
	ResumeWith     string `json:"resume_with,omitempty"`
	ResumeWithText bool   `json:"resume_with_text,omitempty"`
}

type summaryState struct {
	Schema    int            `json:"schema"`
	RunID     string         `json:"run_id"`
	Status    string         `json:"status"`
	Reason    string         `json:"reason,omitempty"`
	Seq       int            `json:"seq"`
	Epoch     int            `json:"epoch"`
	UpdatedAt string         `json:"updated_at"`
	Stages    []summaryStage `json:"stages"` // no omitempty: null and [] stay apart
	Driver    *summaryLease  `json:"driver,omitempty"`
	// IdleUntil is Run.IdleDeadline: when the open attempt dies of idleness.
	IdleUntil string `json:"idle_until,omitempty"`
	TakenOver string `json:"taken_over,omitempty"`
}

type summaryStage struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

type summaryLease struct {
	Holder    string `json:"holder"`
	ExpiresAt string `json:"expires_at"`
	Session   string `json:"session,omitempty"` // last: lines without it parse the same
}

// ledgerSummary is the JSON of a summary line.
type ledgerSummary struct {
	Run   summaryHeader `json:"run"`
	State summaryState  `json:"state"`
}

// summaryKey starts the summary line of a ledger commit's message:
//
//	Atlas-Summary: 1 <tree> <ledgerSummary JSON on one line>
//
// 1 is the line's format. <tree> is the commit's own tree: the line describes that
// tree's run.json and state.json and nothing else, so a commit that copied another's
// message (a plain-git writer extending the chain) names the wrong tree, and its
// summary is ignored.
const summaryKey = "\nAtlas-Summary: 1 "

// maxSummary bounds a summary line: a run whose summary is longer (a long intent)
// gets none, and listing reads its documents instead.
const maxSummary = 4096

// LedgerMessage is the message of the ledger commit that ev made: a subject for
// people, then, when it fits, the summary line of the documents in tree (header and
// state being r's, as just encoded). Listing reads runs from these lines (or from the
// summary cache, which keeps them), without reading a single blob.
func LedgerMessage(r *ledger.Run, ev *ledger.Event, tree string) (string, error) {
	msg := fmt.Sprintf("atlas: %s %s", ev.Type, r.Header.RunID)
	if ev.Stage != "" {
		msg += " stage=" + ev.Stage
	}
	if ev.Job != "" {
		msg += " job=" + ev.Job
	}
	line, err := summaryLine(r)
	if err != nil {
		return "", err
	}
	if line == nil {
		return msg + "\n", nil
	}
	return msg + "\n" + summaryKey + tree + " " + string(line) + "\n", nil
}

// summaryLine projects r's documents the way decodeSummary does (encode each, decode
// the summary fields back), so the line holds exactly what reading the documents
// would give. nil when it is longer than maxSummary.
func summaryLine(r *ledger.Run) ([]byte, error) {
	var sum ledgerSummary
	hb, err := json.Marshal(&r.Header)
	if err != nil {
		return nil, err
	}
	sb, err := json.Marshal(&r.State)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(hb, &sum.Run); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(sb, &sum.State); err != nil {
		return nil, err
	}
	if t := r.IdleDeadline(); !t.IsZero() {
		sum.State.IdleUntil = ledger.Stamp(t)
	}
	line, err := sum.encode()
	if err != nil || len(line) > maxSummary {
		return nil, err
	}
	return line, nil
}

// encode writes sum on one line, <, > and & as they are: the fast reader takes no
// escapes.
func (sum *ledgerSummary) encode() ([]byte, error) {
	var line bytes.Buffer
	enc := json.NewEncoder(&line)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(sum); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(line.Bytes(), []byte("\n")), nil
}

// summaryOf is the summary of a run read as a summary (summaryRun's inverse).
func summaryOf(r *ledger.Run) *ledgerSummary {
	h, st := &r.Header, &r.State
	sum := &ledgerSummary{
		Run: summaryHeader{Schema: h.Schema, RunID: h.RunID, Kind: h.Kind, Intent: h.Intent, Session: h.Session, Baseline: h.Baseline, CreatedAt: h.CreatedAt,
			PipelineMode: h.PipelineMode, ManagedBy: h.ManagedBy, ResumeWith: h.ResumeWith, ResumeWithText: h.ResumeWithText},
		State: summaryState{Schema: st.Schema, RunID: st.RunID, Status: st.Status, Reason: st.Reason, Seq: st.Seq, Epoch: st.Epoch, UpdatedAt: st.UpdatedAt, TakenOver: st.TakenOver},
	}
	if st.Stages != nil {
		sum.State.Stages = make([]summaryStage, len(st.Stages))
		for i, s := range st.Stages {
			sum.State.Stages[i] = summaryStage{Name: s.Name, Status: s.Status}
		}
	}
	if st.Driver != nil {
		sum.State.Driver = &summaryLease{Holder: st.Driver.Holder, ExpiresAt: st.Driver.ExpiresAt, Session: st.Driver.Session}
	}
	if t := r.IdleDeadline(); !t.IsZero() {
		sum.State.IdleUntil = ledger.Stamp(t)
	}
	return sum
}

// lineOf returns the summary line of a ledger tip's message when it describes the
// commit's own tree, else nil.
func lineOf(m git.RefMessage) []byte {
	if m.Type != "commit" {
		return nil
	}
	i := bytes.Index(m.Message, []byte(summaryKey))
	if i < 0 {
		return nil
	}
	line := m.Message[i+len(summaryKey):]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	tree, doc, ok := bytes.Cut(line, []byte(" "))
	if !ok || string(tree) != m.Tree {
		return nil
	}
	return doc
}

// fromLine reads the run at tip from a summary line, or returns nil when the line is
// not one (another format, not valid JSON, another run's). nil sends the caller to
// the documents, which explain any real damage.
func fromLine(id, tip string, doc string) *ledger.Run {
	if doc == "" {
		return nil
	}
	var sum ledgerSummary // stays on the stack: the fields are substrings of doc
	p := &sum
	if !sum.parseCanonical(doc) {
		if p = unmarshalSummary(doc); p == nil {
			return nil
		}
	}
	r := summaryRun(tip, &p.Run, &p.State)
	if sameRun(id, r) != nil {
		return nil
	}
	return r
}

// unmarshalSummary decodes a line parseCanonical did not take, or returns nil.
func unmarshalSummary(doc string) *ledgerSummary {
	var sum ledgerSummary
	if err := json.Unmarshal([]byte(doc), &sum); err != nil {
		return nil
	}
	return &sum
}

// parseCanonical reads doc when it is exactly what json.Marshal writes for a
// ledgerSummary, with no string that needs an escape, and reports whether it was;
// anything else (another key order, whitespace, an escaped quote in an intent) is
// left to json.Unmarshal. Every line it accepts decodes as json.Unmarshal decodes it
// (FuzzParseCanonical); it is 7x faster (BenchmarkSummaryLine: 1.8 µs against 12.8),
// and that was most of a listing's own CPU.
func (sum *ledgerSummary) parseCanonical(doc string) bool {
	p := &canonical{b: doc, ok: true}
	h, st := &sum.Run, &sum.State
	p.lit(`{"run":{"schema":`)
	h.Schema = p.num()
	p.lit(`,"run_id":`)
	h.RunID = p.str()
	p.lit(`,"kind":`)
	h.Kind = p.str()
	if p.opt(`,"intent":`) {
		h.Intent = p.str()
	}
	if p.opt(`,"session":`) {
		h.Session = p.str()
	}
	p.lit(`,"baseline":`)
	if b := p.str(); b != "" {
		id, err := gitid.ParseOID(b)
		h.Baseline, p.ok = id, p.ok && err == nil
	}
	p.lit(`,"created_at":`)
	h.CreatedAt = p.str()
	if p.opt(`,"pipeline_mode":`) {
		h.PipelineMode = p.str()
	}
	if p.opt(`,"managed_by":`) {
		h.ManagedBy = p.str()
	}
	if p.opt(`,"resume_with":`) {
		h.ResumeWith = p.str()
	}
	if p.opt(`,"resume_with_text":true`) {
		h.ResumeWithText = true
	}
	p.lit(`},"state":{"schema":`)
	st.Schema = p.num()
	p.lit(`,"run_id":`)
	st.RunID = p.str()
	p.lit(`,"status":`)
	st.Status = p.str()
	if p.opt(`,"reason":`) {
		st.Reason = p.str()
	}
	p.lit(`,"seq":`)
	st.Seq = p.num()
	p.lit(`,"epoch":`)
	st.Epoch = p.num()
	p.lit(`,"updated_at":`)
	st.UpdatedAt = p.str()
	p.lit(`,"stages":`)
	if !p.opt("null") {
		p.lit("[")
		st.Stages = make([]summaryStage, 0, 4) // runs have a few stages: one allocation
		for more := !p.opt("]"); more && p.ok; {
			var s summaryStage
			p.lit(`{"name":`)
			s.Name = p.str()
			p.lit(`,"status":`)
			s.Status = p.str()
			p.lit("}")
			st.Stages = append(st.Stages, s)
			if more = p.opt(","); !more {
				p.lit("]")
			}
		}
	}
	if p.opt(`,"driver":{"holder":`) {
		st.Driver = &summaryLease{Holder: p.str()}
		p.lit(`,"expires_at":`)
		st.Driver.ExpiresAt = p.str()
		if p.opt(`,"session":`) {
			st.Driver.Session = p.str()
		}
		p.lit("}")
	}
	if p.opt(`,"idle_until":`) {
		st.IdleUntil = p.str()
	}
	if p.opt(`,"taken_over":`) {
		st.TakenOver = p.str()
	}
	p.lit("}}")
	return p.ok && p.i == len(p.b)
}

// canonical is a cursor over a document in json.Marshal's form; its first mismatch
// clears ok, and every later call does nothing.
type canonical struct {
	b  string
	i  int
	ok bool
}

// lit consumes s or fails.
func (p *canonical) lit(s string) {
	if p.ok && !p.opt(s) {
		p.ok = false
	}
}

// opt consumes s if it comes next.
func (p *canonical) opt(s string) bool {
	if p.ok && len(p.b)-p.i >= len(s) && p.b[p.i:p.i+len(s)] == s {
		p.i += len(s)
		return true
	}
	return false
}

// num reads an integer as json.Marshal writes one (no leading zero, no sign on 0),
// short enough not to overflow.
func (p *canonical) num() int {
	if !p.ok {
		return 0
	}
	start, neg := p.i, p.opt("-")
	digits := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	n := p.i - digits
	if n == 0 || n > 15 || (p.b[digits] == '0' && (n > 1 || neg)) {
		p.ok = false
		return 0
	}
	v, _ := strconv.Atoi(p.b[start:p.i])
	return v
}

// str reads a string that needs no escape: no quote, backslash or control character
// inside, valid UTF-8 (json.Unmarshal would replace invalid bytes).
func (p *canonical) str() string {
	if !p.opt(`"`) {
		p.ok = false
		return ""
	}
	start := p.i
	for p.i < len(p.b) && p.b[p.i] != '"' {
		if c := p.b[p.i]; c < 0x20 || c == '\\' {
			p.ok = false
			return ""
		}
		p.i++
	}
	if p.i == len(p.b) || !utf8.ValidString(p.b[start:p.i]) {
		p.ok = false
		return ""
	}
	s := p.b[start:p.i]
	p.i++
	return s
}

// inFlightSummary reports whether the summary's current stage is dispatched or
// verifying.
func inFlightSummary(st *summaryState) bool {
	for _, s := range st.Stages {
		if !ledger.StageTerminal(s.Status) {
			return s.Status == ledger.StageDispatched || s.Status == ledger.StageVerifying
		}
	}
	return false
}

// decodeSummary reads a run as ListSummaries describes from its documents: one
// encoding/json pass into the summary fields, which skips the values of all others
// without building them, and no scan for unknown keys (a summary is never written
// back).
func decodeSummary(id, tip string, header, state git.Blob) (*ledger.Run, error) {
	if err := readable(id, tip, header, state); err != nil {
		return nil, err
	}
	// Every value is checked, not only the summary's: a run is unreadable at every
	// depth or at none (CheckDocuments, through decodeRun's sameRun).
	if _, err := decodeRun(id, tip, header, state); err != nil {
		return nil, err
	}
	var h summaryHeader
	var st summaryState
	if err := json.Unmarshal(header.Data, &h); err != nil {
		return nil, unreadable(id, "run.json: %v", err)
	}
	if err := json.Unmarshal(state.Data, &st); err != nil {
		return nil, unreadable(id, "state.json: %v", err)
	}
	if inFlightSummary(&st) {
		// An open attempt may die of idleness: that needs the stage definitions and
		// the attempts, which only the whole documents hold (rare: lines carry it).
		if full, err := decodeRun(id, tip, header, state); err == nil {
			if t := full.IdleDeadline(); !t.IsZero() {
				st.IdleUntil = ledger.Stamp(t)
			}
		}
	}
	r := summaryRun(tip, &h, &st)
	r.StoredAt(tip, header.ID)
	if err := sameRun(id, r); err != nil {
		return nil, err
	}
	return r, nil
}

func summaryRun(tip string, h *summaryHeader, st *summaryState) *ledger.Run {
	r := &ledger.Run{Tip: tip,
		Header: ledger.Header{Schema: h.Schema, RunID: h.RunID, Kind: h.Kind, Intent: h.Intent, Session: h.Session, Baseline: h.Baseline, CreatedAt: h.CreatedAt,
			PipelineMode: h.PipelineMode, ManagedBy: h.ManagedBy, ResumeWith: h.ResumeWith, ResumeWithText: h.ResumeWithText},
		State: ledger.State{Schema: st.Schema, RunID: st.RunID, Status: st.Status, Reason: st.Reason, Seq: st.Seq, Epoch: st.Epoch, UpdatedAt: st.UpdatedAt, TakenOver: st.TakenOver}}
	if st.Stages != nil {
		r.State.Stages = make([]ledger.StageState, len(st.Stages))
		for i, s := range st.Stages {
			r.State.Stages[i] = ledger.StageState{Name: s.Name, Status: s.Status}
		}
	}
	if st.Driver != nil {
		r.State.Driver = &ledger.Lease{Holder: st.Driver.Holder, ExpiresAt: st.Driver.ExpiresAt, Session: st.Driver.Session}
	}
	r.AsSummary(st.IdleUntil)
	return r
}
