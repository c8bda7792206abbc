package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/git-atlas/git-atlas/internal/gitid"
)

// The data of each event type git-atlas writes is one struct below, named in its
// catalogue line (EventInfo.Payload), made only by its constructor (…Event) and read
// back with Event.Payload or DecodeData. Members are declared in the order the JSON
// has them (sorted, as the maps that once built them wrote them; undone and the
// driver changes keep their own order). A member tagged atlas:"required" must not
// be empty: the store (gitstate) refuses to write an event whose data lacks one, and Log reports a
// read one as unreadable (checkEvent). A member tagged atlas:"quoted" copies what the
// ledger held (a lease, a path, a header's value) rather than words of the command
// that wrote the event: its text is not the writer's (WrittenData). Every payload keeps the members a newer
// git-atlas added (Extra, the documents' codec in doc.go) and writes them back.

// About is the part of an event a writer chooses besides its data: the stage, job
// and holder it is about, and its time when it brings its own (an imported event).
type About struct {
	Stage  string
	Job    string
	Holder string
	Time   string
}

func (a About) event(t EventType, payload any) Event {
	data, err := json.Marshal(payload)
	if err != nil {
		// Payloads hold strings, numbers, ledger types and raw JSON that was checked
		// when it came in: encoding one cannot fail.
		panic(fmt.Sprintf("encode %s data: %v", t, err))
	}
	return Event{Type: t, Stage: a.Stage, Job: a.Job, Holder: a.Holder, Time: a.Time, Data: data}
}

// RunStartedData is run_started's data.
type RunStartedData struct {
	Baseline gitid.OID `json:"baseline"`
	// ImportedFrom names the system an imported run came from.
	ImportedFrom string `json:"imported_from,omitempty"`
	Extra        Extra  `json:"-"`
}

// RunStartedEvent is the first event of a run.
func RunStartedEvent(a About, d RunStartedData) Event { return a.event(EventRunStarted, d) }

// RunFinishedData is run_finished's data (docs/contract.md §5.3).
type RunFinishedData struct {
	AcceptedUnresolved []string            `json:"accepted_unresolved,omitempty"`
	ApprovedBy         string              `json:"approved_by,omitempty"`
	From               string              `json:"from" atlas:"required"`
	OutsideScope       map[string][]string `json:"outside_scope,omitempty"`
	Reason             string              `json:"reason"`
	Status             string              `json:"status" atlas:"required"`
	Verdict            *Verdict            `json:"verdict,omitempty"`
	Extra              Extra               `json:"-"`
}

// RunFinishedEvent records `finish`.
func RunFinishedEvent(a About, d RunFinishedData) Event { return a.event(EventRunFinished, d) }

// StageTransitionData is stage_transition's data.
type StageTransitionData struct {
	Agent               string   `json:"agent,omitempty"`
	AllowedOutsideScope []string `json:"allowed_outside_scope,omitempty"`
	ApprovedBy          string   `json:"approved_by,omitempty"`
	// Attempt, Baseline and Lease are a dispatch's new attempt.
	Attempt  int       `json:"attempt,omitempty"`
	Baseline gitid.OID `json:"baseline,omitzero"`
	From     string    `json:"from" atlas:"required"`
	Host     string    `json:"host,omitempty"`
	Lease    string    `json:"lease,omitempty"`
	PID      int       `json:"pid,omitempty"`
	Reason   string    `json:"reason"`
	// RunEnded is there when the transition completed the run.
	*RunEnded
	ThreadID   string `json:"thread_id,omitempty"`
	To         string `json:"to" atlas:"required"`
	Unverified string `json:"unverified,omitempty"`
	// Verified is there for a passed report whose verify did not fail.
	Verified *bool         `json:"verified,omitempty"`
	Verify   *VerifyResult `json:"verify,omitempty"`
	Extra    Extra         `json:"-"`
}

// RunEnded is the run's status and reason after a stage transition that ended it.
type RunEnded struct {
	RunReason string `json:"run_reason" atlas:"quoted"`
	RunStatus string `json:"run_status"`
}

// StageTransitionEvent records `transition`.
func StageTransitionEvent(a About, d StageTransitionData) Event {
	return a.event(EventStageTransition, d)
}

// JobAddedData is job_added's data.
type JobAddedData struct {
	AllowOverlap bool     `json:"allow_overlap"`
	Criteria     []string `json:"criteria"`
	Kind         string   `json:"kind"`
	Needs        []string `json:"needs"`
	Scope        []string `json:"scope"`
	Verify       string   `json:"verify"`
	Extra        Extra    `json:"-"`
}

// JobAddedEvent records `job add`.
func JobAddedEvent(a About, d JobAddedData) Event { return a.event(EventJobAdded, d) }

// JobClaimedData is job_claimed's data: the lease granted.
type JobClaimedData struct {
	Agent     string `json:"agent,omitempty"`
	Attempt   int    `json:"attempt"`
	ExpiresAt string `json:"expires_at" atlas:"required"`
	GasLimit  int    `json:"gas_limit"`
	GasSpent  int    `json:"gas_spent"`
	Lease     string `json:"lease" atlas:"required"`
	ThreadID  string `json:"thread_id,omitempty"`
	Extra     Extra  `json:"-"`
}

// JobClaimedEvent records `job claim`.
func JobClaimedEvent(a About, d JobClaimedData) Event { return a.event(EventJobClaimed, d) }

// JobRenewedData is job_renewed's data.
type JobRenewedData struct {
	ExpiresAt string `json:"expires_at" atlas:"required"`
	Lease     string `json:"lease" atlas:"required"`
	Extra     Extra  `json:"-"`
}

// JobRenewedEvent records `job renew`.
func JobRenewedEvent(a About, d JobRenewedData) Event { return a.event(EventJobRenewed, d) }

// JobDoneData is job_done's data: a receipt and what it did.
type JobDoneData struct {
	Attempts int      `json:"attempts"`
	Cascaded []string `json:"cascaded,omitempty"`
	Children []string `json:"children,omitempty"`
	// Data is the receipt's own JSON object.
	Data       json.RawMessage `json:"data,omitempty"`
	From       string          `json:"from" atlas:"required"`
	Lease      string          `json:"lease" atlas:"required"`
	Status     string          `json:"status" atlas:"required"`
	To         string          `json:"to" atlas:"required"`
	VerifyOwed bool            `json:"verify_owed,omitempty"`
	Extra      Extra           `json:"-"`
}

// JobDoneEvent records `job done`.
func JobDoneEvent(a About, d JobDoneData) Event { return a.event(EventJobDone, d) }

// JobReapedData is job_reaped's data.
type JobReapedData struct {
	Jobs []ReapedJob `json:"jobs" atlas:"required"`
	// Reason is "forced finish" when finish reaped them ("finish --force" before).
	Reason string `json:"reason,omitempty"`
	Extra  Extra  `json:"-"`
}

// ReapedJob is one job a reap ended.
type ReapedJob struct {
	ID       string   `json:"id"`
	Lease    string   `json:"lease"`
	To       string   `json:"to"`
	Attempts int      `json:"attempts"`
	Cascaded []string `json:"cascaded"`
	Extra    Extra    `json:"-"`
}

// ReapedJobs are the outcomes of a reap as job_reaped records them.
func ReapedJobs(outs []Outcome) []ReapedJob {
	jobs := []ReapedJob{}
	for _, o := range outs {
		c := o.Cascaded
		if c == nil {
			c = []string{}
		}
		jobs = append(jobs, ReapedJob{ID: o.ID, Lease: o.Lease, To: o.To, Attempts: o.Attempts, Cascaded: c})
	}
	return jobs
}

// JobReapedEvent records `reap` and `finish --force`.
func JobReapedEvent(a About, d JobReapedData) Event { return a.event(EventJobReaped, d) }

// JobVerifiedData is job_verified's data: the job's verify and what it did.
type JobVerifiedData struct {
	Attempts int      `json:"attempts"`
	Cascaded []string `json:"cascaded,omitempty"`
	ExitCode int      `json:"exit_code"`
	Lease    string   `json:"lease" atlas:"required"`
	Passed   bool     `json:"passed"`
	Tail     string   `json:"tail"`
	TimedOut bool     `json:"timed_out"`
	To       string   `json:"to" atlas:"required"`
	Extra    Extra    `json:"-"`
}

// JobVerifiedEvent records a job's verify.
func JobVerifiedEvent(a About, d JobVerifiedData) Event { return a.event(EventJobVerified, d) }

// WorktreeAddedData is worktree_added's data.
type WorktreeAddedData struct {
	Baseline  gitid.OID `json:"baseline"`
	Branch    string    `json:"branch" atlas:"required"`
	Head      gitid.OID `json:"head"`
	Node      string    `json:"node" atlas:"required"`
	Path      string    `json:"path" atlas:"required,quoted"`
	Ports     []int     `json:"ports,omitempty"`
	Recreated bool      `json:"recreated"`
	ResetFrom gitid.OID `json:"reset_from,omitzero"`
	Extra     Extra     `json:"-"`
}

// WorktreeAddedEvent records a managed worktree made or recreated.
func WorktreeAddedEvent(a About, d WorktreeAddedData) Event { return a.event(EventWorktreeAdded, d) }

// WorktreeRemovedData is worktree_removed's data.
type WorktreeRemovedData struct {
	IgnoredDeleted []IgnoredFile `json:"ignored_deleted,omitempty"`
	Node           string        `json:"node" atlas:"required"`
	Path           string        `json:"path" atlas:"required,quoted"`
	Reasons        []string      `json:"reasons"`
	Snapshot       string        `json:"snapshot,omitempty"`
	Extra          Extra         `json:"-"`
}

// IgnoredFile is an ignored file, or a wholly ignored directory, a removal deleted:
// its path (in base64 when it is not UTF-8).
type IgnoredFile struct {
	Path     string `json:"path,omitempty"`
	Base64   string `json:"path_base64,omitempty"`
	Dir      bool   `json:"dir,omitempty"`
	Files    int    `json:"files"`
	Size     int64  `json:"size"`
	Included int    `json:"included"`
	Extra    Extra  `json:"-"`
}

// WorktreeRemovedEvent records a managed worktree removed.
func WorktreeRemovedEvent(a About, d WorktreeRemovedData) Event {
	return a.event(EventWorktreeRemoved, d)
}

// WorktreeUntrustedData is worktree_untrusted's data.
type WorktreeUntrustedData struct {
	Branch     string    `json:"branch"`
	CheckedOut string    `json:"checked_out"`
	Head       gitid.OID `json:"head"`
	Node       string    `json:"node" atlas:"required"`
	Path       string    `json:"path" atlas:"required,quoted"`
	Reason     string    `json:"reason"`
	Extra      Extra     `json:"-"`
}

// WorktreeUntrustedEvent records a managed worktree whose HEAD left its branch.
func WorktreeUntrustedEvent(a About, d WorktreeUntrustedData) Event {
	return a.event(EventWorktreeUntrusted, d)
}

// WorktreeAdoptedData is worktree_adopted's data.
type WorktreeAdoptedData struct {
	Dirty    bool   `json:"dirty"`
	Path     string `json:"path" atlas:"required"`
	Snapshot string `json:"snapshot"`
	Extra    Extra  `json:"-"`
}

// WorktreeAdoptedEvent records an imported run's worktree adopted.
func WorktreeAdoptedEvent(a About, d WorktreeAdoptedData) Event {
	return a.event(EventWorktreeAdopted, d)
}

// WorktreeSetupData is worktree_setup's data.
type WorktreeSetupData struct {
	Command  string `json:"command"`
	ExitCode int    `json:"exit_code"`
	Node     string `json:"node" atlas:"required"`
	Outcome  string `json:"outcome" atlas:"required"`
	Tail     string `json:"tail"`
	Extra    Extra  `json:"-"`
}

// WorktreeSetupEvent records a worktree's setup command run.
func WorktreeSetupEvent(a About, d WorktreeSetupData) Event { return a.event(EventWorktreeSetup, d) }

// WorktreePortsData is worktree_ports' data: a block of ports given again to an
// existing worktree whose block a fenced lease freed (docs/contract.md §15).
type WorktreePortsData struct {
	Node  string `json:"node" atlas:"required"`
	Ports []int  `json:"ports" atlas:"required"`
	Extra Extra  `json:"-"`
}

// WorktreePortsEvent records a node's worktree given a block of ports again.
func WorktreePortsEvent(a About, d WorktreePortsData) Event { return a.event(EventWorktreePorts, d) }

// SnapshotData is snapshot's data.
type SnapshotData struct {
	Baseline gitid.OID `json:"baseline"`
	Commit   gitid.OID `json:"commit" atlas:"required"`
	Head     gitid.OID `json:"head"`
	ID       string    `json:"id" atlas:"required"`
	Node     string    `json:"node"`
	Patch    string    `json:"patch"`
	Reason   string    `json:"reason"`
	Ref      string    `json:"ref" atlas:"required"`
	Source   string    `json:"source"`
	Extra    Extra     `json:"-"`
}

// SnapshotEvent records a recovery snapshot.
func SnapshotEvent(a About, d SnapshotData) Event { return a.event(EventSnapshot, d) }

// StageRecoveredData is stage_recovered's data.
type StageRecoveredData struct {
	Apply    bool      `json:"apply"`
	Baseline gitid.OID `json:"baseline"`
	Branch   string    `json:"branch" atlas:"required"`
	Ports    []int     `json:"ports,omitempty"`
	Snapshot string    `json:"snapshot"`
	Source   string    `json:"source"`
	Worktree string    `json:"worktree"`
	Extra    Extra     `json:"-"`
}

// StageRecoveredEvent records a replay branch made by recover.
func StageRecoveredEvent(a About, d StageRecoveredData) Event {
	return a.event(EventStageRecovered, d)
}

// UnionBuiltData is union_built's data.
type UnionBuiltData struct {
	AllowedOutsideScope map[string][]string `json:"allowed_outside_scope,omitempty"`
	ApprovedBy          string              `json:"approved_by,omitempty"`
	Conflicted          map[string][]string `json:"conflicted"`
	Head                gitid.OID           `json:"head" atlas:"required"`
	Integrated          []string            `json:"integrated"`
	// Kept is there when the build kept a commit made on the union branch.
	Kept         *KeptTip            `json:"kept,omitempty"`
	Missing      []string            `json:"missing"`
	OutsideScope map[string][]string `json:"outside_scope,omitempty"`
	Path         string              `json:"path" atlas:"quoted"`
	Ports        []int               `json:"ports,omitempty"`
	Extra        Extra               `json:"-"`
}

// KeptTip is a commit someone made on the union branch, which a build kept under
// Ref before moving the branch off it.
type KeptTip struct {
	Commit gitid.OID `json:"commit,omitzero"`
	Ref    string    `json:"ref,omitempty"`
	Extra  Extra     `json:"-"`
}

// UnionBuiltEvent records `union`.
func UnionBuiltEvent(a About, d UnionBuiltData) Event { return a.event(EventUnionBuilt, d) }

// UnionVerifiedData is union_verified's data.
type UnionVerifiedData struct {
	ExitCode int       `json:"exit_code"`
	Head     gitid.OID `json:"head" atlas:"required"`
	Passed   bool      `json:"passed"`
	Tail     string    `json:"tail"`
	TimedOut bool      `json:"timed_out"`
	Extra    Extra     `json:"-"`
}

// UnionVerifiedEvent records `union --verify`.
func UnionVerifiedEvent(a About, d UnionVerifiedData) Event {
	return a.event(EventUnionVerified, d)
}

// UndoneData is undone's data: what Undo restored and kept (UndoResult).
type UndoneData struct {
	To        int      `json:"to"`
	From      int      `json:"from"`
	Epoch     int      `json:"epoch"`
	ResetJobs []string `json:"reset_jobs"`
	Kept      []string `json:"kept"`
	Extra     Extra    `json:"-"`
}

// UndoneEvent records `undo`.
func UndoneEvent(a About, res *UndoResult) Event {
	return a.event(EventUndone, UndoneData{To: res.To, From: res.From, Epoch: res.Epoch, ResetJobs: res.ResetJobs, Kept: res.Kept})
}

// HeartbeatData is heartbeat's data.
type HeartbeatData struct {
	// Attempt is the stage's attempt the heartbeat kept alive.
	Attempt int `json:"attempt,omitempty"`
	// ExpiresAt is the driver lease's new end.
	ExpiresAt string `json:"expires_at,omitempty"`
	Extra     Extra  `json:"-"`
}

// HeartbeatEvent records `heartbeat`.
func HeartbeatEvent(a About, d HeartbeatData) Event { return a.event(EventHeartbeat, d) }

// DriverChangeData is the data of driver_taken_over and driver_renamed: the driver
// lease before and after.
type DriverChangeData struct {
	Old   Lease `json:"old" atlas:"required,quoted"`
	New   Lease `json:"new" atlas:"required"`
	Extra Extra `json:"-"`
}

// DriverChangeEvent records a driver lease taken over, or renamed by its own session
// (TakeOver.Renamed).
func DriverChangeEvent(a About, t *TakeOver) Event {
	typ := EventDriverTakenOver
	if t.Renamed() {
		typ = EventDriverRenamed
	}
	return a.event(typ, DriverChangeData{Old: t.Old, New: t.New})
}

// ResumedData is resumed's data.
type ResumedData struct {
	// Driver is the lease a resume that changed nothing else took.
	Driver *Lease `json:"driver,omitempty"`
	// DriverTakenOver is the live lease a --take-over resume replaced.
	DriverTakenOver    *Lease   `json:"driver_taken_over,omitempty" atlas:"quoted"`
	Epoch              int      `json:"epoch"`
	FromEpoch          int      `json:"from_epoch"`
	RecreatedWorktrees []string `json:"recreated_worktrees"`
	ResetJobs          []string `json:"reset_jobs"`
	Snapshots          []string `json:"snapshots"`
	Extra              Extra    `json:"-"`
}

// ResumedEvent records a resume.
func ResumedEvent(a About, d ResumedData) Event { return a.event(EventResumed, d) }

// StageResumedData is stage_resumed's data: what resume did with the stage's
// verify ("no-verify": it ran none).
type StageResumedData struct {
	Action string `json:"action" atlas:"required"`
	*StageVerified
	Extra Extra `json:"-"`
}

// StageVerified is the verify a resume ran first.
type StageVerified struct {
	ExitCode int `json:"exit_code"`
	// Tail is the end of the verify's output, as the stage's state records it: an
	// event of this clone's carries it, so it may reach this clone's agents
	// (docs/contract.md §6).
	Tail     string `json:"tail,omitempty"`
	TimedOut bool   `json:"timed_out"`
	// VerifyResult is "pass" or "fail".
	VerifyResult string `json:"verify_result"`
}

// StageResumedEvent records a stage's verify-first step of a resume.
func StageResumedEvent(a About, d StageResumedData) Event { return a.event(EventStageResumed, d) }

// ImportedData is imported's data: the source and how it stood, in the source
// system's own terms (ImportedKimi or ImportedAgenTeam).
type ImportedData struct {
	*ImportedKimi
	Source string `json:"source" atlas:"required"`
	*ImportedAgenTeam
	Extra Extra `json:"-"`
}

// ImportedKimi is how a kimi-atlas run stood.
type ImportedKimi struct {
	CurrentState string            `json:"current_state"`
	JobIDs       map[string]string `json:"job_ids"`
	RefinePasses int               `json:"refine_passes"`
	ResetJobs    []string          `json:"reset_jobs"`
}

// ImportedAgenTeam is how an AgenTeam run stood.
type ImportedAgenTeam struct {
	Status             string   `json:"status"`
	VerifySafeInSource []string `json:"verify_safe_in_source"`
}

// ImportedEvent is the last event of an imported run.
func ImportedEvent(a About, d ImportedData) Event { return a.event(EventImported, d) }

// ImportedStageData is imported_stage's data: a kimi-atlas log line.
type ImportedStageData struct {
	SourceStage string `json:"source_stage"`
	// Verdict is the line's own telemetry.
	Verdict json.RawMessage `json:"verdict,omitempty"`
	Extra   Extra           `json:"-"`
}

// ImportedStageEvent records a kimi-atlas log line.
func ImportedStageEvent(a About, d ImportedStageData) Event { return a.event(EventImportedStage, d) }

// ImportedEventData is the data of an imported source's own event: the source's data.
type ImportedEventData struct {
	Source json.RawMessage `json:"source"`
	Extra  Extra           `json:"-"`
}

// SourceEvent is an imported source's own event, under its own type when that is a
// valid name git-atlas does not write itself (it then says nothing about the ledger),
// otherwise as imported_event.
func SourceEvent(a About, typ string, d ImportedEventData) Event {
	t := EventType(typ)
	if ValidName("event", typ) != nil || t.Reserved() {
		t = EventImportedEvent
	}
	return a.event(t, d)
}

// RunTakenOverData is run_taken_over's data.
type RunTakenOverData struct {
	By           string `json:"by" atlas:"required"`
	From         string `json:"from" atlas:"required,quoted"`
	PipelineMode string `json:"pipeline_mode"`
	Extra        Extra  `json:"-"`
}

// RunTakenOverEvent records `resume --take-over` of another engine's run.
func RunTakenOverEvent(a About, d RunTakenOverData) Event { return a.event(EventRunTakenOver, d) }

// LandedData is landed's data.
type LandedData struct {
	AcceptedUnresolved []string  `json:"accepted_unresolved,omitzero"`
	ApprovedBy         string    `json:"approved_by,omitempty"`
	Branch             string    `json:"branch" atlas:"required"`
	How                string    `json:"how"`
	New                gitid.OID `json:"new" atlas:"required"`
	Old                gitid.OID `json:"old"`
	Union              gitid.OID `json:"union" atlas:"required"`
	Extra              Extra     `json:"-"`
}

// LandedEvent records `land`.
func LandedEvent(a About, d LandedData) Event { return a.event(EventLanded, d) }

// UserEvent is an event of a type git-atlas does not write itself (`git atlas
// event`): its data is the person's own JSON object, checked by the caller.
func UserEvent(a About, t EventType, data json.RawMessage) Event {
	return Event{Type: t, Stage: a.Stage, Job: a.Job, Holder: a.Holder, Time: a.Time, Data: data}
}

// Payload decodes e's data into its catalogue type's payload (a pointer to one of the
// structs above), checking its shape; nil for a type whose data is free (a person's
// own, an unknown type's). An error names the event type and the member.
func (e *Event) Payload() (any, error) {
	info, ok := e.Type.Info()
	if !ok || info.Payload == nil {
		return nil, nil
	}
	v := reflect.New(info.Payload)
	data := e.Data
	if len(data) == 0 {
		data = json.RawMessage("{}")
	}
	if err := DecodeDoc(data, v.Interface()); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te) && te.Field == "":
			return nil, fmt.Errorf("%s data is %s, not a JSON object", e.Type, te.Value)
		case errors.As(err, &te):
			return nil, fmt.Errorf("%s data member %s is %s, not %s", e.Type, te.Field, te.Value, jsonKind(te.Type))
		}
		return nil, fmt.Errorf("%s data: %w", e.Type, err)
	}
	if m := missing(v.Elem()); m != "" {
		return nil, fmt.Errorf("%s data has no %s", e.Type, m)
	}
	if m, val, want := badMember(v.Elem()); m != "" {
		return nil, fmt.Errorf("%s data member %s %q is %s", e.Type, m, clip(val), want)
	}
	return v.Interface(), nil
}

// badMember is the JSON name and value of v's first member (in v or a struct it
// holds) that is not what its name says, and what it should be; "" when none: a time
// (named at, time or <something>_at) that ValidStamp refuses, a lease token (named
// lease) that ParseLeaseToken refuses. What an event's data calls a time or a lease
// reaches a reader as one, never as text of someone's choosing.
func badMember(v reflect.Value) (name, value, want string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			return badMember(v.Elem())
		}
	case reflect.Slice:
		if k := v.Type().Elem().Kind(); k != reflect.Struct && k != reflect.Pointer {
			break // names, numbers, raw JSON
		}
		for i := 0; i < v.Len(); i++ {
			if m, val, want := badMember(v.Index(i)); m != "" {
				return m, val, want
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() || f.Name == "Extra" {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Type.Kind() == reflect.String {
				s := v.Field(i).String()
				switch {
				case s == "":
				case name == "at" || name == "time" || strings.HasSuffix(name, "_at"):
					if !ValidStamp(s) {
						return name, s, "not a time (RFC 3339, as git-atlas writes them)"
					}
				case name == "lease":
					if _, _, _, _, err := ParseLeaseToken(s); err != nil {
						return name, s, "not a lease token (<name>#<attempt>@<epoch>.<nonce>)"
					}
				}
				continue
			}
			if m, val, want := badMember(v.Field(i)); m != "" {
				return m, val, want
			}
		}
	}
	return "", "", ""
}

// DecodeData is e's payload as T, the payload type of e's type in the catalogue.
func DecodeData[T any](e *Event) (*T, error) {
	if info, ok := e.Type.Info(); !ok || info.Payload != reflect.TypeFor[T]() {
		return nil, fmt.Errorf("event %d is %s: its data is not a %s", e.Seq, e.Type, reflect.TypeFor[T]().Name())
	}
	p, err := e.Payload()
	if err != nil {
		return nil, err
	}
	return p.(*T), nil
}

// missing is the JSON name of v's first required member that is empty, or "".
func missing(v reflect.Value) string {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if tagged(f, "required") && v.Field(i).IsZero() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			return name
		}
	}
	return ""
}

// jsonKind names what JSON value a Go type is decoded from, for a message.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64, reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "an array"
	}
	return "an object"
}

// CheckPayload is the write side of Payload: the data an event carries has its
// type's shape and every required member.
func CheckPayload(e *Event) error {
	_, err := e.Payload()
	return err
}

// The MarshalJSON of every payload type keeps its Extra members, as the documents'.

func (x RunStartedData) MarshalJSON() ([]byte, error) {
	type plain RunStartedData
	p := plain(x)
	return marshalKeep(&p)
}

func (x RunFinishedData) MarshalJSON() ([]byte, error) {
	type plain RunFinishedData
	p := plain(x)
	return marshalKeep(&p)
}

func (x StageTransitionData) MarshalJSON() ([]byte, error) {
	type plain StageTransitionData
	p := plain(x)
	return marshalKeep(&p)
}

func (x JobAddedData) MarshalJSON() ([]byte, error) {
	type plain JobAddedData
	p := plain(x)
	return marshalKeep(&p)
}

func (x JobClaimedData) MarshalJSON() ([]byte, error) {
	type plain JobClaimedData
	p := plain(x)
	return marshalKeep(&p)
}

func (x JobRenewedData) MarshalJSON() ([]byte, error) {
	type plain JobRenewedData
	p := plain(x)
	return marshalKeep(&p)
}

func (x JobDoneData) MarshalJSON() ([]byte, error) {
	type plain JobDoneData
	p := plain(x)
	return marshalKeep(&p)
}

func (x JobReapedData) MarshalJSON() ([]byte, error) {
	type plain JobReapedData
	p := plain(x)
	return marshalKeep(&p)
}

func (x ReapedJob) MarshalJSON() ([]byte, error) {
	type plain ReapedJob
	p := plain(x)
	return marshalKeep(&p)
}

func (x JobVerifiedData) MarshalJSON() ([]byte, error) {
	type plain JobVerifiedData
	p := plain(x)
	return marshalKeep(&p)
}

func (x WorktreeAddedData) MarshalJSON() ([]byte, error) {
	type plain WorktreeAddedData
	p := plain(x)
	return marshalKeep(&p)
}

func (x WorktreeRemovedData) MarshalJSON() ([]byte, error) {
	type plain WorktreeRemovedData
	p := plain(x)
	return marshalKeep(&p)
}

func (x IgnoredFile) MarshalJSON() ([]byte, error) {
	type plain IgnoredFile
	p := plain(x)
	return marshalKeep(&p)
}

func (x WorktreeUntrustedData) MarshalJSON() ([]byte, error) {
	type plain WorktreeUntrustedData
	p := plain(x)
	return marshalKeep(&p)
}

func (x WorktreeAdoptedData) MarshalJSON() ([]byte, error) {
	type plain WorktreeAdoptedData
	p := plain(x)
	return marshalKeep(&p)
}

func (x WorktreeSetupData) MarshalJSON() ([]byte, error) {
	type plain WorktreeSetupData
	p := plain(x)
	return marshalKeep(&p)
}

func (x WorktreePortsData) MarshalJSON() ([]byte, error) {
	type plain WorktreePortsData
	p := plain(x)
	return marshalKeep(&p)
}

func (x SnapshotData) MarshalJSON() ([]byte, error) {
	type plain SnapshotData
	p := plain(x)
	return marshalKeep(&p)
}

func (x StageRecoveredData) MarshalJSON() ([]byte, error) {
	type plain StageRecoveredData
	p := plain(x)
	return marshalKeep(&p)
}

func (x UnionBuiltData) MarshalJSON() ([]byte, error) {
	type plain UnionBuiltData
	p := plain(x)
	return marshalKeep(&p)
}

func (x KeptTip) MarshalJSON() ([]byte, error) {
	type plain KeptTip
	p := plain(x)
	return marshalKeep(&p)
}

func (x UnionVerifiedData) MarshalJSON() ([]byte, error) {
	type plain UnionVerifiedData
	p := plain(x)
	return marshalKeep(&p)
}

func (x UndoneData) MarshalJSON() ([]byte, error) {
	type plain UndoneData
	p := plain(x)
	return marshalKeep(&p)
}

func (x HeartbeatData) MarshalJSON() ([]byte, error) {
	type plain HeartbeatData
	p := plain(x)
	return marshalKeep(&p)
}

func (x DriverChangeData) MarshalJSON() ([]byte, error) {
	type plain DriverChangeData
	p := plain(x)
	return marshalKeep(&p)
}

func (x ResumedData) MarshalJSON() ([]byte, error) {
	type plain ResumedData
	p := plain(x)
	return marshalKeep(&p)
}

func (x StageResumedData) MarshalJSON() ([]byte, error) {
	type plain StageResumedData
	p := plain(x)
	return marshalKeep(&p)
}

func (x ImportedData) MarshalJSON() ([]byte, error) {
	type plain ImportedData
	p := plain(x)
	return marshalKeep(&p)
}

func (x ImportedStageData) MarshalJSON() ([]byte, error) {
	type plain ImportedStageData
	p := plain(x)
	return marshalKeep(&p)
}

func (x ImportedEventData) MarshalJSON() ([]byte, error) {
	type plain ImportedEventData
	p := plain(x)
	return marshalKeep(&p)
}

func (x RunTakenOverData) MarshalJSON() ([]byte, error) {
	type plain RunTakenOverData
	p := plain(x)
	return marshalKeep(&p)
}

func (x LandedData) MarshalJSON() ([]byte, error) {
	type plain LandedData
	p := plain(x)
	return marshalKeep(&p)
}

// CheckEvent checks an event as Log reads it: the names it carries and its data's
// shape; for a writer that must know before writing several (import).
func CheckEvent(ev *Event) error { return checkEvent(ev) }

// EndedRun is the status (completed or failed) in which e says it ended its run, ""
// when e ended none as far as its own data says: a finish (run_finished), the
// transition that ended a run's last stage (stage_transition with run_status), or a
// resume whose verify passed the last stage or failed the run (stage_resumed with
// action advance or fail). What a run's
// state says of its status is the ledger's word; an event this clone wrote (its MAC)
// is this clone's (gitstate's FinishedBy).
func EndedRun(e *Event) string {
	var status string
	switch e.Type {
	case EventRunFinished:
		if d, err := DecodeData[RunFinishedData](e); err == nil {
			status = d.Status
		}
	case EventStageTransition:
		if d, err := DecodeData[StageTransitionData](e); err == nil && d.RunEnded != nil {
			status = d.RunStatus
		}
	case EventStageResumed:
		// A verify that passed may complete the run (its last stage), one that failed
		// may fail it; the caller holds that the run's state turned finished with e.
		if d, err := DecodeData[StageResumedData](e); err == nil {
			status = map[string]string{"advance": RunCompleted, "fail": RunFailed}[d.Action]
		}
	}
	if !RunTerminal(status) {
		return ""
	}
	return status
}
