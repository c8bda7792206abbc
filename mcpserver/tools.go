package mcpserver

import "github.com/git-atlas/git-atlas/ops"

// The tools, one per user operation. Adding one is one line here: the tool's input
// is its operation's request, decoded into it as the request's tags say (request.go),
// and the operation's request Check fills the defaults and refuses what the
// operation cannot do; its input schema is generated from the request type and its
// output schema from the operation's result type. (A function, not a variable: every
// git-atlas command links this package, and only `git atlas mcp` needs the table.)
func tools() []spec {
	return []spec{
		tool("start", "Start a run (single: stages; graph: a DAG of jobs): pin its baseline and freeze its header.", (*ops.Ops).Start),
		tool("list", "List runs (default: not finished) with status, driver and liveness.", (*ops.Ops).List),
		tool("show", "Show a run's header, state and stages (or its state right after event `at`).", (*ops.Ops).Show),
		tool("log", "Show a run's events, oldest first, optionally filtered by type or stage.", (*ops.Ops).Log),
		tool("transition", "Move a stage of a single run to a new status (dispatched opens an attempt).", (*ops.Ops).Transition),
		tool("heartbeat", "Renew your driver lease and, with a stage, its open attempt's heartbeat, in one write.", (*ops.Ops).Heartbeat),
		tool("event", "Append an event (a note, a stage_resumed, ...) with optional data to a run.", (*ops.Ops).Event),
		tool("finish", "Finish a run: completed, stopped or failed.", (*ops.Ops).Finish),
		tool("job_add", "Add a job (with dependencies, scope, verify) to a graph run.", (*ops.Ops).JobAdd),
		tool("job_claim", "Claim the next ready job of a graph run (or a named one) and get its lease token.", (*ops.Ops).JobClaim),
		tool("job_renew", "Extend a claimed job's lease; the token must be the current one.", (*ops.Ops).JobRenew),
		tool("job_done", "Report a claimed job's receipt (ok, timeout or failed) with its lease token.", (*ops.Ops).JobDone),
		tool("job_list", "List a graph run's jobs, the ready ones and the gas left.", (*ops.Ops).JobList),
		tool("reap", "Return a graph run's expired job leases (each takes the timeout transition).", (*ops.Ops).Reap),
		tool("worktree_add", "Give a stage or job its managed worktree (locked, on its own branch); returns its path.", (*ops.Ops).WorktreeAdd),
		tool("worktree_list", "List managed worktrees: branch, HEAD, commits ahead, dirty or missing.", (*ops.Ops).WorktreeList),
		tool("worktree_remove", "Remove a managed worktree, snapshotting it first when anything could be lost.", (*ops.Ops).WorktreeRemove),
		tool("worktree_setup", "Run the run's setup command again in a node's worktree (after it failed); a setup not trusted here is never run.", (*ops.Ops).WorktreeSetup),
		tool("union", "Build a run's union of its nodes' branches in its own worktree (optionally verify it).", (*ops.Ops).Union),
		tool("resume_detect", "List interrupted runs that could be resumed; changes nothing.", (*ops.Ops).ResumeDetect),
		tool("resume_plan", "Print a run's resume plan and next_action; changes nothing.", (*ops.Ops).ResumePlan),
		tool("resume", "Resume an interrupted run: snapshot and reset, verify first, and return next_action.", (*ops.Ops).Resume),
		tool("recover", "Preserve a stage's work in a snapshot and branch a replay at its baseline.", (*ops.Ops).Recover),
		tool("recovery_list", "List recovery snapshots (all, or one run's).", (*ops.Ops).RecoveryList),
		tool("recovery_show", "Show what a recovery snapshot holds: files changed, staged, unstaged, ignored.", (*ops.Ops).RecoveryShow),
		tool("recovery_restore", "Restore a recovery snapshot into a new directory or worktree.", (*ops.Ops).RecoveryRestore),
		tool("audit", "Classify every worktree, atlas branch and ref; attention is true when something needs it.", (*ops.Ops).Audit, 10),
	}
}
