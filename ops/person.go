package ops

import (
	"strings"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// The steps only a person takes (docs/contract.md §5.2, §5.3): one list, here. Each is refused
// through MCP and from an agent hook (exit 5: a person must do it); on the command
// line it needs a terminal, or --approved-by NAME, which is recorded in its event, so
// an agent that passes it is on the record. A step names the request field that asks
// for it as {field}, which each front end spells (fault.Named).
const (
	StepHumanGate        = "passing or rejecting a human gate"
	StepAcceptUnresolved = "finishing a run whose verdict is unresolved ({accept_unresolved})"
	StepOutsideScope     = "accepting changes outside a scope ({allow_outside_scope})"
	// StepLand is a person's step unless the repository's config atlas.agentsMayLand
	// is true (docs/contract.md §15).
	StepLand = "landing a run's union onto a branch (git atlas land)"
	// StepLandElsewhere is StepLand when agents may land, for a union this clone did
	// not build and verify itself (ownUnion).
	StepLandElsewhere = "landing a union this clone did not build and verify itself (git atlas land)"
	// StepLandUnresolved is a person's step always.
	StepLandUnresolved = "landing a run whose verdict is not resolved ({accept_unresolved})"
)

// PersonOnlySteps lists the steps only a person takes.
var PersonOnlySteps = []string{StepHumanGate, StepAcceptUnresolved, StepOutsideScope, StepLand, StepLandElsewhere, StepLandUnresolved}

// Front ends a request comes through (Person.Via).
const (
	ViaCommandLine = ""     // the command line
	ViaMCP         = "mcp"  // the MCP server (git atlas mcp)
	ViaHook        = "hook" // an agent's hook (git atlas agent hook)
)

// Person is who stands behind a request, for the steps only a person takes: the
// front end it came through, whether a person is at a terminal, and --approved-by.
type Person struct {
	Via        string
	Terminal   bool
	ApprovedBy string
}

// approve returns who approved step, for its event ("terminal" for a person at a
// terminal who named nobody), or refuses it (exit 5).
func (p Person) approve(step string) (string, error) {
	switch {
	case p.Via == ViaMCP || p.Via == ViaHook:
		what := map[string]string{ViaMCP: "through MCP", ViaHook: "from an agent hook"}[p.Via]
		return "", fault.Named(fault.ErrRefused, escape(step)+" is a person's step: it is refused %s; nothing was written", what).
			WithHint("a person must do it, on the command line")
	case p.ApprovedBy != "":
		return p.ApprovedBy, nil
	case p.Terminal:
		return "terminal", nil
	}
	return "", fault.Named(fault.ErrRefused, escape(step)+" is a person's step: a person must do it, on a terminal or with {approved_by} NAME (recorded); nothing was written").
		WithHint("a person runs it on a terminal, or passes {approved_by} with their name")
}

// escape is s as a format's literal text (its {field} names stay).
func escape(s string) string { return strings.ReplaceAll(s, "%", "%%") }
