// Package ledger is the run ledger's pure part: what a run's documents are and how they
// may change, with no git underneath. It holds the documents (run.json, state.json and
// the events, docs/contract.md §3) and their JSON codec, which keeps members a newer
// release wrote; the validation every document passes when read or written; the state
// machines of runs, stages and jobs (docs/contract.md §5); the driver rule and the
// session key that seals a driver's session; the event catalogue and its typed
// payloads; graph expansion, job verify, undo and the verdict; and the pipeline file.
//
// It imports no git and runs no process (archtest holds it): every function takes and
// returns documents, so it is tested without a repository. Package gitstate stores
// these documents in refs/atlas with compare-and-swap writes, syncs them with a remote
// and lists them.
package ledger
