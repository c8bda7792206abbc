// Package gitstate is the run ledger's store: it keeps each run's documents (package
// ledger) as commits under refs/atlas/runs/ (docs/contract.md §3) and changes them only
// by compare-and-swap on the run's ref, durable before a write is reported. It loads
// and lists runs (with a summary line in each ledger commit and a local cache of them),
// reads a run's history, pins baselines, syncs the ledger with a remote (docs/contract.md
// §10.1), and keeps this clone's session key in its local state.
//
// What a document is and how it may change (model, state machines, events, codec,
// validation) is package ledger's, which imports no git; gitstate applies it.
package gitstate
