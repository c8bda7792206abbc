// Package archtest holds no code: its tests read the module's source and fail when a
// rule of ARCHITECTURE.md is broken that a linter cannot express (commands only call
// ops, event types only from the ledger's catalogue, no exported variable holding a
// function that a test could replace for the whole binary, typed ids into git,
// citations that resolve, the sweeps listed). The import arrows are depguard rules in
// .golangci.yml.
package archtest
