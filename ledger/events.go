package ledger

import (
	"reflect"
	"slices"
	"strings"
	"sync"
)

// EventType is the type of a ledger event (event.json's "type"). The types git-atlas
// writes itself are the constants below, each described once in catalogue; a person or
// an agent may append any other valid name with `git atlas event` (note and progress
// are the usual ones), and import keeps a source's own event names.
type EventType string

// The event types git-atlas writes, and the two a person usually appends. Adding one
// is this line and its line in catalogue (TestEventCatalogue fails until both exist).
const (
	EventRunStarted        EventType = "run_started"
	EventRunFinished       EventType = "run_finished"
	EventStageTransition   EventType = "stage_transition"
	EventJobAdded          EventType = "job_added"
	EventJobClaimed        EventType = "job_claimed"
	EventJobRenewed        EventType = "job_renewed"
	EventJobDone           EventType = "job_done"
	EventJobReaped         EventType = "job_reaped"
	EventJobVerified       EventType = "job_verified"
	EventWorktreeAdded     EventType = "worktree_added"
	EventWorktreeRemoved   EventType = "worktree_removed"
	EventWorktreeUntrusted EventType = "worktree_untrusted"
	EventWorktreeAdopted   EventType = "worktree_adopted"
	EventWorktreeSetup     EventType = "worktree_setup"
	EventWorktreePorts     EventType = "worktree_ports"
	EventSnapshot          EventType = "snapshot"
	EventStageRecovered    EventType = "stage_recovered"
	EventUnionBuilt        EventType = "union_built"
	EventUnionVerified     EventType = "union_verified"
	EventUndone            EventType = "undone"
	EventHeartbeat         EventType = "heartbeat"
	// EventDriverTakenOver records a driver lease replaced by --take-over (data: the
	// old and the new lease).
	EventDriverTakenOver EventType = "driver_taken_over"
	// EventDriverRenamed records a driver lease renewed by its own session under a new
	// holder name (data: the old and the new lease, both names).
	EventDriverRenamed EventType = "driver_renamed"
	EventResumed       EventType = "resumed"
	EventStageResumed  EventType = "stage_resumed"
	EventImported      EventType = "imported"
	EventImportedStage EventType = "imported_stage"
	EventImportedEvent EventType = "imported_event"

	// EventRunTakenOver records `resume --take-over` of a run another engine owns or
	// that is dispatch-only (data: from, the owner; by, the new holder).
	EventRunTakenOver EventType = "run_taken_over"

	// EventLanded records `land`: a branch moved to the run's union (data: branch,
	// old and new tip, whether by merge, who approved it).
	EventLanded EventType = "landed"

	EventNote     EventType = "note"
	EventProgress EventType = "progress"
)

// EventWriter is who may append an event of a type (a set: some types have several).
type EventWriter uint8

const (
	// ByCommand: a git-atlas command (EventInfo.Command names it).
	ByCommand EventWriter = 1 << iota
	// ByResume: resume, itself or through the worktree, recovery and verify
	// operations it runs.
	ByResume
	// ByHook: the post-checkout hook.
	ByHook
	// ByImport: import, translating another tool's run.
	ByImport
	// ByUser: a person or an agent, through `git atlas event`.
	ByUser
)

// EventInfo is what the catalogue knows of one event type.
type EventInfo struct {
	Type EventType
	// By is who may write it. A type any writer but ByUser may write is reserved:
	// `git atlas event` refuses it, since the ledger would then say something its
	// state does not.
	By EventWriter
	// Command is the command that writes it, for the refusal's hint: its words, and
	// a request field that asks for it as {field}, which each front end spells
	// (fault.Named).
	Command string
	// ResumeOwned: resume writes it while it resets a run, so writing it keeps
	// State.Resuming (a resume killed after its reset continues instead of raising the
	// epoch again); every other event ends the mark.
	ResumeOwned bool
	// Payload is the struct its data decodes into (payload.go); nil only where Free.
	Payload reflect.Type
	// Free: its data is a person's own JSON object, not git-atlas's to shape.
	Free bool
}

func payload[T any]() reflect.Type { return reflect.TypeFor[T]() }

// catalogue is every event type git-atlas knows, one line each.
var catalogue = []EventInfo{
	{Type: EventRunStarted, By: ByCommand | ByImport, Command: "start", Payload: payload[RunStartedData]()},
	{Type: EventRunFinished, By: ByCommand, Command: "finish", Payload: payload[RunFinishedData]()},
	{Type: EventStageTransition, By: ByCommand, Command: "transition", Payload: payload[StageTransitionData]()},
	{Type: EventJobAdded, By: ByCommand, Command: "job add", Payload: payload[JobAddedData]()},
	{Type: EventJobClaimed, By: ByCommand, Command: "job claim", Payload: payload[JobClaimedData]()},
	{Type: EventJobRenewed, By: ByCommand, Command: "job renew", Payload: payload[JobRenewedData]()},
	{Type: EventJobDone, By: ByCommand, Command: "job done", Payload: payload[JobDoneData]()},
	{Type: EventJobReaped, By: ByCommand, Command: "reap", Payload: payload[JobReapedData]()}, // also finish with force
	{Type: EventJobVerified, By: ByCommand | ByResume, Command: "job done", Payload: payload[JobVerifiedData]()},
	{Type: EventWorktreeAdded, By: ByCommand | ByResume, Command: "worktree add", ResumeOwned: true, Payload: payload[WorktreeAddedData]()},
	{Type: EventWorktreeRemoved, By: ByCommand | ByResume, Command: "worktree remove", ResumeOwned: true, Payload: payload[WorktreeRemovedData]()},
	{Type: EventWorktreeUntrusted, By: ByHook, Command: "hooks install", Payload: payload[WorktreeUntrustedData]()},
	{Type: EventWorktreeAdopted, By: ByImport, Command: "import", Payload: payload[WorktreeAdoptedData]()},
	{Type: EventWorktreeSetup, By: ByCommand, Command: "worktree setup", Payload: payload[WorktreeSetupData]()},
	{Type: EventWorktreePorts, By: ByCommand, Command: "worktree add", Payload: payload[WorktreePortsData]()}, // a block again after a fence freed it
	{Type: EventSnapshot, By: ByCommand | ByResume, Command: "recover", ResumeOwned: true, Payload: payload[SnapshotData]()},
	{Type: EventStageRecovered, By: ByCommand, Command: "recover", Payload: payload[StageRecoveredData]()},
	{Type: EventUnionBuilt, By: ByCommand, Command: "union", Payload: payload[UnionBuiltData]()},
	{Type: EventUnionVerified, By: ByCommand, Command: "union {verify}", Payload: payload[UnionVerifiedData]()},
	{Type: EventUndone, By: ByCommand, Command: "undo", Payload: payload[UndoneData]()},
	{Type: EventHeartbeat, By: ByCommand, Command: "heartbeat", Payload: payload[HeartbeatData]()},
	{Type: EventDriverTakenOver, By: ByCommand, Command: "any run write with {take_over}", Payload: payload[DriverChangeData]()},
	{Type: EventDriverRenamed, By: ByCommand, Command: "any run write by the driving session under a new {holder}", Payload: payload[DriverChangeData]()},
	{Type: EventResumed, By: ByResume, Command: "resume", ResumeOwned: true, Payload: payload[ResumedData]()},
	{Type: EventStageResumed, By: ByResume, Command: "resume", ResumeOwned: true, Payload: payload[StageResumedData]()},
	{Type: EventImported, By: ByImport, Command: "import", Payload: payload[ImportedData]()},
	{Type: EventImportedStage, By: ByImport, Command: "import", Payload: payload[ImportedStageData]()},
	{Type: EventImportedEvent, By: ByImport, Command: "import", Payload: payload[ImportedEventData]()},
	{Type: EventRunTakenOver, By: ByResume, Command: "resume {take_over}", Payload: payload[RunTakenOverData]()},
	{Type: EventLanded, By: ByCommand, Command: "land", Payload: payload[LandedData]()},
	{Type: EventNote, By: ByUser, Free: true},
	{Type: EventProgress, By: ByUser, Free: true},
}

// catalogueByType indexes the catalogue, on first use (not at package initialisation:
// start-up, issue 34).
var catalogueByType = sync.OnceValue(func() map[EventType]EventInfo {
	m := make(map[EventType]EventInfo, len(catalogue))
	for _, e := range catalogue {
		m[e.Type] = e
	}
	return m
})

// Events is the catalogue, in a fixed order.
func Events() []EventInfo { return append([]EventInfo(nil), catalogue...) }

// Info is the catalogue's entry for t; ok is false for a type git-atlas does not
// know (one a person appended, or an imported source's own).
func (t EventType) Info() (EventInfo, bool) {
	e, ok := catalogueByType()[t]
	return e, ok
}

// Reserved reports whether git-atlas writes t itself, so that `git atlas event` must
// refuse it.
func (t EventType) Reserved() bool {
	e, ok := catalogueByType()[t]
	return ok && e.By&^ByUser != 0
}

// ResumeOwned reports whether writing t keeps a resume's mark (EventInfo.ResumeOwned).
func (t EventType) ResumeOwned() bool { return catalogueByType()[t].ResumeOwned }

// UserEvents are the catalogue's types meant for `git atlas event`, sorted.
func UserEvents() []EventType {
	var out []EventType
	for _, e := range catalogue {
		if e.By == ByUser {
			out = append(out, e.Type)
		}
	}
	slices.Sort(out)
	return out
}

// ReservedEvents are the types `git atlas event` refuses, sorted.
func ReservedEvents() []EventType {
	var out []EventType
	for _, e := range catalogue {
		if e.Type.Reserved() {
			out = append(out, e.Type)
		}
	}
	slices.Sort(out)
	return out
}

// JoinEvents is types as one comma-separated list, for messages.
func JoinEvents(types []EventType) string {
	s := make([]string, len(types))
	for i, t := range types {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}
