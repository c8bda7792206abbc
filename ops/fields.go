package ops

import (
	"github.com/git-atlas/git-atlas/internal/fault"
	"maps"
	"slices"
)

// What the requests' fields mean, in one text per field that every front end shows
// (docs/contract.md §4.6): a request field's help tag names its key, help:"${start_intent}",
// and the command line's help (a kong variable of the same name) and the MCP tools'
// input schemas both read the text here. The shared parts (Driver, Worker,
// SnapshotOptions) have one key for every request that holds them; any other field's
// key is its operation and its name. A {field} in a text names another field, and
// each front end spells it its own way, as it spells the fields an error names
// (fault.Spelled): --ignored-cap on the command line, ignored_cap over MCP.
var fieldHelp = map[string]string{
	"driver_holder":            "Who drives the run: takes a free driver lease, or renews your own; another live driver's run is refused (exit 3).",
	"driver_session":           "Your agent session (default $ATLAS_SESSION): a session takes its own run back at once, whatever the holder name.",
	"driver_take_over":         "Replace the live driver you found (recorded as driver_taken_over); loses (exit 3) if another writer replaced it first.",
	"driver_ttl":               "How long the driver lease lasts (default 10m).",
	"worker_holder":            "The worker holding the job's lease (recorded; never the run's driver).",
	"worker_ttl":               "How long the job lease lasts (default 10m).",
	"snapshot_include_ignored": "Copy ignored files into the snapshot, up to {ignored_cap} in total (they are always listed).",
	"snapshot_ignored_cap":     "Size cap of the ignored files {include_ignored} copies (e.g. 500KiB, 100MiB, 1GiB; default 100MiB).",
	"start_id":                 "Run id (default: time-sortable and unique).",
	"start_intent":             "What the run is for; frozen.",
	"start_criterion":          "A success criterion (repeatable); frozen.",
	"start_verify":             "Verify command of every stage that names none.",
	"start_verify_safe":        "The verify command is safe to run unattended (resume runs it).",
	"start_scope":              "A path glob the run may touch (repeatable; never split on commas: a comma belongs inside braces, src/{a,b}/**).",
	"start_baseline":           "The commit the run starts from (default HEAD).",
	"start_pipeline":           "Pipeline file, JSON or YAML, with per-stage settings.",
	"start_stages":             "Stage names, comma-separated (short form of {pipeline}).",
	"start_graph":              "A graph run: a DAG of jobs (see git atlas job).",
	"start_gas":                "Graph runs: total claims allowed (default jobs x max-attempts + jobs, fixed at the first claim).",
	"start_max_attempts":       "Graph runs: attempts per job before it fails (default 2).",
	"start_max_jobs":           "Graph runs: most jobs the run may hold, added or by expansion (default 200).",
	"start_max_depth":          "Graph runs: longest chain of job-done {children} expansions (default 8).",
	"start_config":             "A config file whose hash is frozen, for drift checks (repeatable).",
	"start_managed_by":         "Another engine owns this run's resumption: resume hands it back to NAME (pipeline mode managed).",
	"start_resume_with":        "With {managed_by}: the owner's resume command, shown as a command only where it is trusted.",
	"start_dispatch_only":      "The run has no pipeline to resume: resume says so and changes nothing (pipeline mode dispatch-only).",
	"start_setup":              "A command run in each new worktree of the run (with ATLAS_RUN, ATLAS_NODE, ATLAS_WORKTREE, ATLAS_PORT, ATLAS_PORTS); overrides the pipeline's setup.",
	"start_setup_timeout":      "Time limit of {setup} (default 10m).",
	"start_ports":              "Give every node a block of N ports from atlas.portRange (default 20000-29999), unique among live nodes.",
	"list_all":                 "Include finished runs (completed and failed).",
	"show_run":                 "The run.",
	"show_at":                  "The state right after event SEQ (see git atlas log).",
	"log_run":                  "The run.",
	"log_type":                 "Only events of this type.",
	"log_stage":                "Only events about this stage.",
	"log_last":                 "Only the last N events (N >= 1).",
	"transition_run":           "The run.",
	"transition_stage":         "The stage.",
	"transition_status":        "The new status: pending, dispatched, verifying, passed, gated, completed, rejected, failed, rework, skipped.",
	"transition_reason":        "Why.",
	"transition_lease":         "The stage token the dispatch printed: a report with a token that is not the stage's current one is refused (exit 3) and changes nothing.",
	"transition_thread_id":     "With dispatched: the agent runtime's conversation id of the attempt (e.g. for codex exec resume), so a resume can continue it.",
	"transition_pid":           "With dispatched: the attempt's agent process id (recorded with this host's name): while it lives here, resume never starts a second agent.",
	"transition_agent":         "With dispatched: the agent of the attempt (claude, codex or kimi), so next_action can give its own command to continue the conversation of {thread_id}.",
	"heartbeat_run":            "The run.",
	"heartbeat_stage":          "Also the heartbeat of this stage's open attempt (its idle budget starts again).",
	"heartbeat_lease":          "The attempt's stage token: a stale one is refused (exit 3) and changes nothing.",
	"event_run":                "The run.",
	"event_type":               "The event type (e.g. note, progress; never one git-atlas writes itself).",
	"event_stage":              "The stage it is about.",
	"event_data":               "A JSON object of details.",
	"finish_run":               "The run.",
	"finish_status":            "completed, stopped or failed.",
	"finish_reason":            "Why.",
	"finish_force":             "Reap the run's running jobs first (each takes the timeout transition, recorded as job_reaped).",
	"job_add_run":              "The graph run.",
	"job_add_job":              "The job id (unique in the run).",
	"job_add_needs":            "A job that must be DONE first (repeatable, or comma-separated).",
	"job_add_scope":            "A path glob the job may touch (repeatable; never split on commas: a comma belongs inside braces, src/{a,b}/**).",
	"job_add_verify":           "The job's verify command.",
	"job_add_kind":             "A label for the kind of work (e.g. code, review).",
	"job_add_criterion":        "A run criterion (start {criterion}) this job meets (repeatable; must be one of the run's).",
	"job_add_allow_overlap":    "Accept a scope that matches files another job's scope matches.",
	"job_claim_run":            "The graph run.",
	"job_claim_job":            "Claim this job rather than the next ready one.",
	"job_claim_agent":          "The agent working the job (claude, codex or kimi), recorded on it.",
	"job_claim_thread_id":      "The agent's own session or thread id for the job (a plain token), recorded on it.",
	"job_renew_run":            "The graph run.",
	"job_renew_job":            "The job.",
	"job_renew_lease":          "The job's current lease token.",
	"job_done_run":             "The graph run.",
	"job_done_job":             "The job.",
	"job_done_lease":           "The lease token the claim printed.",
	"job_done_status":          "ok, timeout or failed.",
	"job_done_data":            "A JSON object kept as the job's result.",
	"job_done_children":        "With {status} ok: a JSON list of child jobs (job add's shape: id, needs, scope, verify, criterion, kind) added in the same write.",
	"job_done_verify_timeout":  "Time limit of the job's verify on an ok receipt (its process group is killed then; default 10m).",
	"job_list_run":             "The graph run.",
	"job_list_ready":           "Only the jobs a claim could take now.",
	"reap_run":                 "The graph run.",
	"reap_holder":              "Who reaps (recorded in the event; never the run's driver).",
	"resume_run":               "The run to resume (default: select one).",
	"resume_session":           "Your agent session (default $ATLAS_SESSION): the run it still drives is its own, resumed at once; else its runs are preferred.",
	"resume_take_over":         "Resume a run another live driver holds (recorded in the resumed event), or one another engine owns or that is dispatch-only (recorded as run_taken_over); needs {holder}.",
	"resume_holder":            "Drive the run from the resume on: the reset takes its driver lease for you (until now + {ttl}).",
	"resume_ttl":               "How long the driver lease {holder} takes lasts (default 10m).",
	"resume_no_verify":         "Do not run the interrupted stage's verify command.",
	"resume_verify_timeout":    "Kill the verify command after this long (default 10m).",
	"resume_on_verify_fail":    "What to do when verify fails: fail, redispatch, replay or stop (default: ask on a terminal, fail headless).",
}

// FieldHelp is the text of the field key names, each {field} in it spelled by spell;
// "" for a key that names no field.
func FieldHelp(key string, spell func(field string) string) string {
	return fault.Text{Format: fieldHelp[key]}.Spell(fault.Spelling{Field: spell})
}

// FieldHelpKeys are the keys of every field's text, sorted.
func FieldHelpKeys() []string { return slices.Sorted(maps.Keys(fieldHelp)) }
