package ledger

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/gitid"
)

// Run kinds.
const (
	KindSingle = "single"
	KindGraph  = "graph"
)

// Header is run.json: frozen when the run starts, identical in every ledger commit.
type Header struct {
	Schema      int        `json:"schema"`
	RunID       string     `json:"run_id"`
	Kind        string     `json:"kind"`
	CreatedAt   string     `json:"created_at"`
	Intent      string     `json:"intent,omitempty"`
	Criteria    []string   `json:"criteria,omitempty"`
	Verify      string     `json:"verify,omitempty"`
	VerifySafe  bool       `json:"verify_safe,omitempty"`
	Scope       []string   `json:"scope,omitempty"`
	Baseline    gitid.OID  `json:"baseline"`
	Stages      []StageDef `json:"stages"`
	Session     string     `json:"session,omitempty"`
	ConfigFiles []string   `json:"config_files,omitempty"`
	ConfigHash  string     `json:"config_hash,omitempty"`
	// Gas is the graph run's fixed gas budget; 0 means the default (docs/contract.md §5.3).
	Gas int `json:"gas,omitempty"`
	// MaxAttempts is the per-job attempt limit of a graph run (default 2).
	MaxAttempts int `json:"max_attempts,omitempty"`
	// MaxJobs and MaxDepth cap a graph run's jobs and expansion depth; 0 means the
	// defaults (DefaultMaxJobs, DefaultMaxDepth).
	MaxJobs  int `json:"max_jobs,omitempty"`
	MaxDepth int `json:"max_depth,omitempty"`
	// ImportedFrom marks a run brought over by `git atlas import` (docs/contract.md §13): its
	// commands came from elsewhere and are not trusted to run here.
	ImportedFrom *ImportedFrom `json:"imported_from,omitempty"`
	// PipelineMode, ManagedBy, ResumeWith and ResumeWithText say who resumes the run
	// (mode.go; docs/contract.md §6): empty is standalone, as every older ledger reads.
	PipelineMode   string `json:"pipeline_mode,omitempty"`
	ManagedBy      string `json:"managed_by,omitempty"`
	ResumeWith     string `json:"resume_with,omitempty"`
	ResumeWithText bool   `json:"resume_with_text,omitempty"`
	// Setup is the command run in each new worktree of the run, SetupTimeout its time
	// limit (a Go duration; "" the default), Ports the size of each node's block of
	// ports (docs/contract.md §15).
	Setup        string `json:"setup,omitempty"`
	SetupTimeout string `json:"setup_timeout,omitempty"`
	Ports        int    `json:"ports,omitempty"`
	Extra        Extra  `json:"-"`
}

// The systems import reads runs from (ImportedFrom.System, WorktreeRec.Adopted).
const (
	SystemKimiAtlas = "kimi-atlas"
	SystemAgenTeam  = "agenteam"
)

// KnownSystem reports whether v is empty or a system import reads runs from: any
// other name a ledger gives is its text.
func KnownSystem(v string) bool {
	return v == "" || v == SystemKimiAtlas || v == SystemAgenTeam
}

// AdoptedWithheld is the part of a message that names where a worktree was adopted
// from, with what an agent reads instead when the ledger's name is none of the
// systems import knows (pulled text): empty when it is one.
func AdoptedWithheld(adopted string) []fault.Withheld {
	if KnownSystem(adopted) {
		return nil
	}
	return []fault.Withheld{{Text: "adopted from " + adopted + " at import", Stand: "adopted from another system at import"}}
}

// ImportedFrom says where an imported run came from.
type ImportedFrom struct {
	System   string `json:"system"`
	Path     string `json:"path"`
	SourceID string `json:"source_id"`
	Hash     string `json:"hash"`
	// BaselineMissing: the source's baseline commit does not exist here (not pinned).
	BaselineMissing bool `json:"baseline_missing,omitempty"`
	// ConfigHash is the source system's own config hash (not comparable with ours).
	ConfigHash string `json:"config_hash,omitempty"`
	// JobIDs maps each source job id that was renamed to its job id here (docs/contract.md §13:
	// one to one, printed and recorded).
	JobIDs map[string]string `json:"job_ids,omitempty"`
	// PipelineMode is AgenTeam's pipeline_mode (standalone, hotl, dispatch-only), as
	// the source had it: who owns the run's resumption.
	PipelineMode string `json:"pipeline_mode,omitempty"`
}

// StageDef is one stage's frozen definition.
type StageDef struct {
	Name       string   `json:"name"`
	Verify     string   `json:"verify,omitempty"`
	VerifySafe bool     `json:"verify_safe,omitempty"`
	Gate       string   `json:"gate,omitempty"`
	MaxRetries int      `json:"max_retries"`
	ReworkTo   string   `json:"rework_to,omitempty"`
	Scope      []string `json:"scope,omitempty"`
	// WallBudget and IdleBudget are Go durations (docs/contract.md §5.2): an attempt older than its
	// wall budget is refused heartbeats; one with no heartbeat for its idle budget is
	// dead (its run counts as interrupted even while the driver lease lives).
	WallBudget string `json:"wall_budget,omitempty"`
	IdleBudget string `json:"idle_budget,omitempty"`
	Extra      Extra  `json:"-"`
}

// DefaultMaxRetries is a stage's retry budget when its definition names none.
const DefaultMaxRetries = 2

// State is state.json: the whole materialized state after an event.
type State struct {
	Schema    int          `json:"schema"`
	RunID     string       `json:"run_id"`
	Status    string       `json:"status"`
	Reason    string       `json:"reason,omitempty"`
	Seq       int          `json:"seq"`
	Epoch     int          `json:"epoch"`
	UpdatedAt string       `json:"updated_at"`
	Stages    []StageState `json:"stages"`
	Jobs      []Job        `json:"jobs,omitempty"`
	GasSpent  int          `json:"gas_spent,omitempty"`
	// GasFixed is the gas limit fixed at the run's first claim when the header names
	// none (docs/contract.md §5.3): later job adds and expansions never raise it. 0: not yet fixed.
	GasFixed  int           `json:"gas_fixed,omitempty"`
	Driver    *Lease        `json:"driver,omitempty"`
	Worktrees []WorktreeRec `json:"worktrees,omitempty"`
	Snapshots []SnapshotRec `json:"snapshots,omitempty"`
	Union     *UnionRec     `json:"union,omitempty"`
	Replays   []ReplayRec   `json:"replays,omitempty"`
	// Resuming marks a resume in progress: a resume killed half-way and run again
	// continues it instead of raising the epoch a second time (docs/contract.md §6: idempotent).
	Resuming *ResumeMark `json:"resuming,omitempty"`
	// TakenOver names who took a run its header hands off (HandsOff) over with
	// `resume --take-over` (event run_taken_over): from then on git-atlas resumes it.
	TakenOver string `json:"taken_over,omitempty"`
	Extra     Extra  `json:"-"`
}

// ResumeMark is the last resume, kept until anything else happens to the run: while it
// stands, a resume run again continues it (its verify step, if that is what it had
// left) instead of raising the epoch a second time. gitstate.Store.Update drops it on every
// write that is not a resume's own.
type ResumeMark struct {
	Epoch     int      `json:"epoch"`
	Phase     string   `json:"phase"` // ResumeVerify: verify-first is still to run; ResumeDone
	ResetJobs []string `json:"reset_jobs,omitempty"`
}

// Resume phases.
const (
	ResumeVerify = "verify"
	ResumeDone   = "done"
)

// StageState is a stage's live status and its attempts.
type StageState struct {
	Name     string        `json:"name"`
	Status   string        `json:"status"`
	Attempts []Attempt     `json:"attempts,omitempty"`
	Reworks  int           `json:"reworks,omitempty"`
	Reason   string        `json:"reason,omitempty"`
	Verify   *VerifyResult `json:"verify,omitempty"`
	// Verified says, once the stage passed, whether git-atlas ran its verify (docs/contract.md
	// §5.2); when false, Unverified says why (no_verify, not_safe, untrusted).
	Verified   *bool  `json:"verified,omitempty"`
	Unverified string `json:"unverified,omitempty"`
	UpdatedAt  string `json:"updated_at,omitempty"`
	Extra      Extra  `json:"-"`
}

// Attempt is one dispatch of a stage (docs/contract.md §5.2).
type Attempt struct {
	N         int    `json:"n"`
	StartedAt string `json:"started_at"`
	// Baseline is the HEAD of the stage's worktree, or of the checkout the dispatch
	// ran in, pinned at refs/atlas/pins/<run>/stage/<stage>/<n> (BaselinePin).
	Baseline gitid.OID `json:"baseline"`
	// Lease is the attempt's stage token (LeaseToken, issued at dispatch): only the
	// current attempt's token may report on the stage.
	Lease   string `json:"lease,omitempty"`
	Holder  string `json:"holder,omitempty"`
	Session string `json:"session,omitempty"`
	// ThreadID is the agent runtime's conversation id (e.g. for `codex exec resume`);
	// PID the agent's process, on Host.
	ThreadID string `json:"thread_id,omitempty"`
	PID      int    `json:"pid,omitempty"`
	// Agent is the agent whose conversation ThreadID is (AgentNames), when named.
	Agent       string `json:"agent,omitempty"`
	Host        string `json:"host,omitempty"`
	HeartbeatAt string `json:"heartbeat_at,omitempty"`
	// InCheckout: the stage had no managed worktree when it was dispatched, so it ran
	// in the checkout the driver ran in (the user's).
	InCheckout bool  `json:"in_checkout,omitempty"`
	Extra      Extra `json:"-"`
}

// VerifyResult is the outcome of a verify command run by git-atlas.
type VerifyResult struct {
	Command  string `json:"command"`
	ExitCode int    `json:"exit_code"`
	Passed   bool   `json:"passed"`
	TimedOut bool   `json:"timed_out,omitempty"`
	Tail     string `json:"tail,omitempty"`
	At       string `json:"at"`
	Extra    Extra  `json:"-"`
}

// Job is a node of a graph run's DAG.
type Job struct {
	ID       string   `json:"id"`
	State    string   `json:"state"`
	Needs    []string `json:"needs"`
	Scope    []string `json:"scope,omitempty"`
	Verify   string   `json:"verify,omitempty"`
	Kind     string   `json:"kind,omitempty"`
	Criteria []string `json:"criteria,omitempty"`
	// Parent is the job whose receipt added this one (expansion); Depth is how many
	// expansions deep it is (0: added by `job add`).
	Parent    string `json:"parent,omitempty"`
	Depth     int    `json:"depth,omitempty"`
	Attempts  int    `json:"attempts"`
	Lease     string `json:"lease,omitempty"`
	Holder    string `json:"holder,omitempty"`
	ExpiresAt string `json:"expires_at,omitempty"`
	// Agent and ThreadID name the agent and its own session or thread id that the
	// current claim was made for, when given (docs/contract.md §15).
	Agent    string          `json:"agent,omitempty"`
	ThreadID string          `json:"thread_id,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	// Reason says why a job ended FAILED: "receipt", "attempts", "verify", or
	// "dependency <job> failed".
	Reason string `json:"reason,omitempty"`
	// VerifyOwed: an ok receipt arrived and the job's verify has not finished; the job
	// stays RUNNING (its dependants wait) until the result is recorded (docs/contract.md §5.3).
	VerifyOwed bool `json:"verify_owed,omitempty"`
	// VerifyResult is the job verify's last outcome.
	VerifyResult *VerifyResult `json:"verify_result,omitempty"`
	// Unverified says why a DONE job was not verified ("no verify command", "no
	// worktree"); empty for a verified job.
	Unverified string `json:"unverified,omitempty"`
	// MAC marks the job's text as written by this clone (textmac.go).
	MAC   string `json:"mac,omitempty"`
	Extra Extra  `json:"-"`
}

// Lease is the run's driver lease (docs/contract.md §5.1).
type Lease struct {
	Holder    string `json:"holder"`
	Session   string `json:"session,omitempty"`
	ExpiresAt string `json:"expires_at"`
	Extra     Extra  `json:"-"`
}

// WorktreeRec is a managed worktree as the ledger recorded it.
type WorktreeRec struct {
	Node  string `json:"node"`
	Stage string `json:"stage,omitempty"`
	Path  string `json:"path"` // this repository's (see paths.go)
	// RelPath is Path relative to the git common dir, as the ledger records it; only
	// encoding sets it (gitstate.Store.portable), reading turns it into Path.
	RelPath   string    `json:"rel_path,omitempty"`
	Branch    string    `json:"branch"`
	Baseline  gitid.OID `json:"baseline"`
	Head      gitid.OID `json:"head"`
	Untrusted bool      `json:"untrusted,omitempty"`
	// Adopted names the system whose worktree import recorded here (kimi-atlas,
	// agenteam): git-atlas did not make it, so it never removes or recreates it
	// (resume keeps it, worktree remove and gc refuse); it may snapshot it.
	Adopted string `json:"adopted,omitempty"`
	// Ports is the node's block of ports (docs/contract.md §15), held while the record
	// is.
	Ports []int `json:"ports,omitempty"`
	// Setup is the outcome of the run's setup command in this worktree, as last run.
	Setup *SetupRec `json:"setup,omitempty"`
	Extra Extra     `json:"-"`
}

// Setup outcomes (docs/contract.md §15).
const (
	SetupOK        = "ok"
	SetupFailed    = "failed"
	SetupTimedOut  = "timed-out"
	SetupUntrusted = "skipped-untrusted"
)

// SetupRec is one run of the setup command in a worktree.
type SetupRec struct {
	Command  string `json:"command"`
	Outcome  string `json:"outcome"`
	ExitCode int    `json:"exit_code"`
	Tail     string `json:"tail,omitempty"`
	At       string `json:"at"`
}

// Ready reports whether the worktree's setup, if any, succeeded.
func (w *WorktreeRec) Ready() bool { return w.Setup == nil || w.Setup.Outcome == SetupOK }

// RecoveryPrefix is where recovery snapshots are kept (docs/contract.md §3): a snapshot
// record names its ref under it (SnapshotRec.Ref).
const RecoveryPrefix = "refs/atlas/recovery/"

// SnapshotRec is a recovery snapshot as the ledger recorded it.
type SnapshotRec struct {
	ID        string    `json:"id"`
	Node      string    `json:"node,omitempty"`
	Stage     string    `json:"stage,omitempty"`
	Ref       string    `json:"ref"`
	Commit    gitid.OID `json:"commit"`
	Patch     string    `json:"patch,omitempty"`
	Source    string    `json:"source,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	CreatedAt string    `json:"created_at"`
	Extra     Extra     `json:"-"`
}

// UnionRec is the last union build.
type UnionRec struct {
	Head       gitid.OID           `json:"head"`
	Integrated []string            `json:"integrated"`
	Conflicted map[string][]string `json:"conflicted,omitempty"`
	// Missing are the nodes the build found no branch for: nothing to integrate,
	// reported once (docs/contract.md §6.7: next_action never loops on them).
	Missing []string `json:"missing,omitempty"`
	// OutsideScope are the DONE jobs the build left out because their branch changed
	// paths outside their scope, with those paths; AllowedOutsideScope the ones a
	// person let in all the same (union --allow-outside-scope), docs/contract.md §5.3.
	OutsideScope        map[string][]string `json:"outside_scope,omitempty"`
	AllowedOutsideScope map[string][]string `json:"allowed_outside_scope,omitempty"`
	At                  string              `json:"at"`
	// Verify is the run's verify as `union --verify` last ran it on this union.
	Verify *VerifyResult `json:"verify,omitempty"`
	Extra  Extra         `json:"-"`
}

// ReplayRec is a replay branch made by recover.
type ReplayRec struct {
	Stage    string    `json:"stage"`
	Branch   string    `json:"branch"`
	Baseline gitid.OID `json:"baseline"`
	Snapshot string    `json:"snapshot,omitempty"`
	Worktree string    `json:"worktree,omitempty"`
	// WorktreeRel is Worktree relative to the git common dir (see WorktreeRec.RelPath).
	WorktreeRel string `json:"worktree_rel_path,omitempty"`
	Extra       Extra  `json:"-"`
}

// Event is event.json: the event that made a ledger commit.
type Event struct {
	Schema int             `json:"schema"`
	Seq    int             `json:"seq"`
	Type   EventType       `json:"type"`
	Time   string          `json:"time"`
	Epoch  int             `json:"epoch"`
	Stage  string          `json:"stage,omitempty"`
	Job    string          `json:"job,omitempty"`
	Holder string          `json:"holder,omitempty"`
	Data   json.RawMessage `json:"data,omitempty"`
	// MAC marks the event's text as written by this clone (textmac.go).
	MAC   string `json:"mac,omitempty"`
	Extra Extra  `json:"-"`
}

// Run is one run as read from its ledger tip.
type Run struct {
	Header Header
	State  State
	Tip    string
	// headerBlob is run.json's blob id, reused by every later commit.
	headerBlob string
	// summary marks a run read by a summary listing (ListSummaries, ListStates): only
	// some fields are set.
	summary bool
	// idleUntil is a summary's IdleDeadline (the documents' own is computed).
	idleUntil string
}

// StoredAt records where the store read or wrote the run: its ledger tip and
// run.json's blob id, which every later commit of the run reuses.
func (r *Run) StoredAt(tip, headerBlob string) {
	r.Tip, r.headerBlob = tip, headerBlob
}

// HeaderBlob is run.json's blob id (StoredAt), or "" for a run not yet stored.
func (r *Run) HeaderBlob() string { return r.headerBlob }

// AsSummary marks the run as read by a summary listing (only some fields are set; it
// is never written back: Writable), whose open attempt dies of idleness at idleUntil
// (a stamp, or "").
func (r *Run) AsSummary(idleUntil string) {
	r.summary, r.idleUntil = true, idleUntil
}

// Writable refuses to rewrite documents from a newer schema.
func (r *Run) Writable() error {
	if r.summary {
		return fmt.Errorf("run %s was read as a summary (Store.List at ListSummaries or ListStates), which cannot be written back", r.Header.RunID)
	}
	refuse := func(doc string, found int) error {
		return &fault.Error{Kind: fault.ErrRefused, Msg: "run " + r.Header.RunID, Err: &ErrNewerSchema{Doc: doc, Found: found},
			Hint: "upgrade git-atlas to change this run; show, log and list still work"}
	}
	if r.Header.Schema > Schema {
		return refuse("run.json", r.Header.Schema)
	}
	if r.State.Schema > Schema {
		return refuse("state.json", r.State.Schema)
	}
	return nil
}

// Stage returns the stage's definition and state, or false.
func (r *Run) Stage(name string) (*StageDef, *StageState, bool) {
	for i := range r.State.Stages {
		if r.State.Stages[i].Name == name {
			for j := range r.Header.Stages {
				if r.Header.Stages[j].Name == name {
					return &r.Header.Stages[j], &r.State.Stages[i], true
				}
			}
		}
	}
	return nil, nil, false
}

// Job returns the job with id, or nil.
func (s *State) Job(id string) *Job {
	for i := range s.Jobs {
		if s.Jobs[i].ID == id {
			return &s.Jobs[i]
		}
	}
	return nil
}

// Worktree returns the managed worktree of node, or nil.
func (s *State) Worktree(node string) *WorktreeRec {
	for i := range s.Worktrees {
		if s.Worktrees[i].Node == node {
			return &s.Worktrees[i]
		}
	}
	return nil
}

// nameShape reports whether name matches ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$, by hand:
// a listing checks every name of every run it shows, and the regular expression was
// most of that time (TestNameShapeIsThePattern holds the two equal).
func nameShape(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case (c == '.' || c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// ValidName checks a run, stage, node or job name (docs/contract.md §3): the pattern, and what
// git refuses in a ref component (".lock" endings, "..").
func ValidName(what, name string) error {
	if !nameShape(name) {
		return fault.Usage("invalid %s name %q: use 1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit", what, name)
	}
	if len(name) >= 5 && name[len(name)-5:] == ".lock" {
		return fault.Usage("invalid %s name %q: a name may not end in .lock", what, name)
	}
	for i := 0; i+1 < len(name); i++ {
		if name[i] == '.' && name[i+1] == '.' {
			return fault.Usage("invalid %s name %q: a name may not contain \"..\"", what, name)
		}
	}
	if name[len(name)-1] == '.' {
		return fault.Usage("invalid %s name %q: a name may not end in \".\"", what, name)
	}
	return nil
}

// ReservedNames describes, for people, the stage and job names the layout keeps for
// itself (docs/contract.md §3): every stage and job can get a worktree at
// <root>/<run>/<name> on branch atlas/<run>/node/<name>, beside the union worktree
// (<root>/<run>/union, branch atlas/<run>/union), the replay worktrees of recover
// (<root>/<run>/replay-<stage>-<n>), the marker of a checkout in progress
// (<root>/<run>/<name>.atlas-materializing) and a checkout set aside whole
// (<root>/<run>/<name>.atlas-broken-<random>, which resume and audit report).
const ReservedNames = "union, replay-<stage>-<n>, names ending in .atlas-materializing and names holding .atlas-broken- (in any case)"

var replayNodeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^replay-.+-[0-9]+$`) })

// CheckNodeName checks a stage or job name: ValidName, then the names the worktree
// layout reserves (ReservedNames), compared without case, since on a case-insensitive
// file system (macOS, Windows) "Union" is the union's directory too.
func CheckNodeName(what, name string) error {
	if err := ValidName(what, name); err != nil {
		return err
	}
	lower := strings.ToLower(name)
	switch {
	case lower == "union":
		return fault.Usage("%s name %q is reserved: it is the run's union worktree and branch", what, name).WithHint("reserved names: %s", ReservedNames)
	case replayNodeRE().MatchString(name):
		return fault.Usage("%s name %q is reserved: replay-<stage>-<n> names the replay worktrees that recover makes", what, name).WithHint("reserved names: %s", ReservedNames)
	case strings.HasSuffix(lower, ".atlas-materializing"):
		return fault.Usage("%s name %q is reserved: <name>.atlas-materializing marks a worktree being checked out", what, name).WithHint("reserved names: %s", ReservedNames)
	case strings.Contains(lower, ".atlas-broken-"):
		return fault.Usage("%s name %q is reserved: <name>.atlas-broken-<random> is a checkout set aside whole", what, name).WithHint("reserved names: %s", ReservedNames)
	}
	return nil
}

// CaseTwin returns the name in names that differs from name only in case, or "".
// Two such names would share a worktree directory and a branch on a case-insensitive
// file system, so a run never holds both, on any system (a run may be pulled to one).
func CaseTwin(name string, names []string) string {
	for _, n := range names {
		if n != name && strings.EqualFold(n, name) {
			return n
		}
	}
	return ""
}

// Clock is where the time comes from: whoever opens a store or runs operations sets
// one, and a test gives its own. The nil Clock is the system clock, in UTC.
type Clock func() time.Time

// Now is the time by c.
func (c Clock) Now() time.Time {
	if c != nil {
		return c()
	}
	return time.Now().UTC()
}

// Stamp formats t the way every ledger document does.
func Stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// ParseStamp reads a time written by Stamp.
func ParseStamp(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }

// maxStamp is the longest time ParseStamp needs to read: nanoseconds and an offset.
const maxStamp = len("2006-01-02T15:04:05.999999999-07:00")

// ValidStamp reports whether s is a time as the ledger holds one: what Stamp writes,
// or any RFC 3339 time ParseStamp reads (docs/contract.md §11).
func ValidStamp(s string) bool {
	if len(s) > maxStamp {
		return false
	}
	_, err := ParseStamp(s)
	return err == nil
}

// Live reports whether the run's driver lease is held at now.
func (r *Run) Live(now time.Time) bool {
	if r.State.Driver == nil {
		return false
	}
	t, err := ParseStamp(r.State.Driver.ExpiresAt)
	return err == nil && now.Before(t)
}
