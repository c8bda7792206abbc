// Package archtest holds no code: its tests read the module's source and fail when a
// rule of ARCHITECTURE.md is broken (which packages may run processes, the arrows
// between packages, event types only from gitstate's catalogue, no exported variable
// holding a function that a test could replace for the whole binary).
package archtest
