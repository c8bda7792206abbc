package cli

import "github.com/git-atlas/git-atlas/internal/fault"

// remoteWarnings tells people what a remote sync did beside the command: local
// chains kept aside because the remote's won, and local refs that could not follow a
// write the remote holds. (With --json too: stderr is not parsed for success.)
func (e *Env) remoteWarnings() {
	if e.ops == nil || e.ops.RemoteName() == "" {
		return
	}
	kept, notes, remote := e.ops.Kept(), e.ops.RemoteNotes(), e.ops.RemoteName()
	for _, d := range kept {
		e.warn("run %s had diverged from %s: the remote's chain (%s) is the run now; this repository's chain (%s) is kept as %s (%s)",
			d.RunID, remote, short(d.Remote), short(d.Local), d.Ref, e.spelling().Step(fault.Do("log", "run", d.RunID, "diverged", lastComponent(d.Ref))))
	}
	for _, n := range notes {
		e.warn("%s", n.Spell(e.spelling()))
	}
}

func lastComponent(ref string) string {
	for i := len(ref) - 1; i >= 0; i-- {
		if ref[i] == '/' {
			return ref[i+1:]
		}
	}
	return ref
}
