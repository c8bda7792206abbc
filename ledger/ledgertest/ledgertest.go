// Package ledgertest holds test documents of the ledger (package ledger) that the
// ledger's own tests and the store's (package gitstate) both read. Only tests import it.
package ledgertest

// FutureRun, FutureState and FutureEvent are documents from a newer git-atlas: unknown fields at the top and inside every kind of
// nested object this version rewrites.
const (
	FutureRun = `{"schema":1,"run_id":"r","kind":"single","created_at":"2026-01-01T00:00:00Z","baseline":"BASE",` +
		`"stages":[{"name":"code","max_retries":2,"future_stage_def":{"x":[1,2]}}],"future_header":"h"}`
	FutureState = `{"schema":1,"run_id":"r","status":"running","seq":1,"epoch":0,"updated_at":"2026-01-01T00:00:00Z",` +
		`"stages":[{"name":"code","status":"pending","future_stage":true,` +
		`"attempts":[{"n":1,"started_at":"2026-01-01T00:00:00Z","baseline":"1111111111111111111111111111111111111111","future_attempt":1}],` +
		`"verify":{"command":"c","exit_code":0,"passed":true,"at":"2026-01-01T00:00:00Z","future_verify":"v"}}],` +
		`"jobs":[{"id":"j","state":"PENDING","needs":[],"attempts":0,"future_job":{"deep":{"er":null}}}],` +
		`"driver":{"holder":"h","expires_at":"2000-01-01T00:00:00Z","future_lease":1},` +
		`"worktrees":[{"node":"n","path":"p","branch":"b","baseline":"1111111111111111111111111111111111111111","head":"1111111111111111111111111111111111111111","future_wt":2}],` +
		`"snapshots":[{"id":"s","ref":"refs/atlas/recovery/r/s","commit":"1111111111111111111111111111111111111111","created_at":"2026-01-01T00:00:00Z","future_snap":3}],` +
		`"union":{"head":"1111111111111111111111111111111111111111","integrated":[],"at":"2026-01-01T00:00:00Z","future_union":4},` +
		`"replays":[{"stage":"code","branch":"b","baseline":"1111111111111111111111111111111111111111","future_replay":5}],` +
		`"future_state":{"a":"b"}}`
	FutureEvent = `{"schema":1,"seq":1,"type":"run_started","time":"2026-01-01T00:00:00Z","epoch":0,"future_event":[true]}`
)

// FutureFields are, by document, the unknown members of the Future documents.
var FutureFields = map[string][]string{
	"run.json":   {`"future_header":"h"`, `"future_stage_def":{"x":[1,2]}`},
	"state.json": {`"future_state":{"a":"b"}`, `"future_stage":true`, `"future_attempt":1`, `"future_verify":"v"`, `"future_job":{"deep":{"er":null}}`, `"future_lease":1`, `"future_wt":2`, `"future_snap":3`, `"future_union":4`, `"future_replay":5`},
	"event.json": {`"future_event":[true]`},
}
