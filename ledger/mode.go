package ledger

import "github.com/git-atlas/git-atlas/internal/fault"

// Pipeline modes (Header.PipelineMode): who resumes a run (docs/contract.md §6).
const (
	// ModeStandalone: git-atlas resumes the run (also a header that names no mode).
	ModeStandalone = "standalone"
	// ModeManaged: another engine, Header.ManagedBy, owns the run's resumption.
	ModeManaged = "managed"
	// ModeDispatchOnly: the run has no pipeline to resume; its tasks are re-assigned.
	ModeDispatchOnly = "dispatch-only"
)

// Mode is the header's pipeline mode; a header that names none (every ledger written
// before modes existed) is standalone.
func (h *Header) Mode() string {
	if h.PipelineMode == "" {
		return ModeStandalone
	}
	return h.PipelineMode
}

// CheckMode refuses a header whose mode fields do not fit together: an unknown mode,
// a managed run that names no owner, an owner or resume command on a run git-atlas
// resumes itself. ManagedBy is a name; ResumeWith is free text, checked where it is
// shown (it is a command only when trusted here).
func (h *Header) CheckMode() error {
	switch h.Mode() {
	case ModeStandalone:
		if h.ManagedBy != "" || h.ResumeWith != "" {
			return fault.Named(fault.ErrUsage, "a standalone run names no owner and no resume command").WithHint("give {managed_by} NAME")
		}
	case ModeManaged:
		if err := ValidName("owner", h.ManagedBy); err != nil {
			return err
		}
	case ModeDispatchOnly:
		if h.ManagedBy != "" || h.ResumeWith != "" {
			return fault.Usage("a dispatch-only run has no pipeline to resume: it names no owner and no resume command")
		}
	default:
		return fault.Usage("unknown pipeline mode %q", h.PipelineMode).WithHint("one of: %s, %s, %s", ModeStandalone, ModeManaged, ModeDispatchOnly)
	}
	return nil
}

// HandsOff reports whether resume hands the run back instead of resuming it: it is
// managed by another engine or dispatch-only, and nobody took it over here
// (State.TakenOver).
func (r *Run) HandsOff() bool {
	return r.Header.Mode() != ModeStandalone && r.State.TakenOver == ""
}
