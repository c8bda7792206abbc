// Package progress is how long operations say how far they are without printing:
// a domain operation takes a Reporter (nil: no progress) and calls the helpers below;
// internal/cli decides whether and how it is drawn (a bar on a terminal, nothing
// headless or with --json).
package progress

// Reporter receives an operation's progress. Add may be called from several
// goroutines at once.
type Reporter interface {
	// Start begins a phase of total steps (total < 0: unknown), described for people.
	Start(what string, total int)
	// Add counts n more steps done.
	Add(n int)
	// Done ends the phase.
	Done()
}

// Start begins a phase on r; nothing when r is nil.
func Start(r Reporter, what string, total int) {
	if r != nil {
		r.Start(what, total)
	}
}

// Add counts n steps on r; nothing when r is nil.
func Add(r Reporter, n int) {
	if r != nil {
		r.Add(n)
	}
}

// Done ends the phase on r; nothing when r is nil.
func Done(r Reporter) {
	if r != nil {
		r.Done()
	}
}
