package resume

import (
	"fmt"
	"strings"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/text"
)

// The tests of this package read next actions as the command line spells them: a
// copy of the command line's spelling (internal/cli's StepCommand) for the steps
// resume names, whose positional arguments it lists. The golden outputs and the
// transcripts check the real one end to end.
func init() { plainSpelling = commandLine }

var commandLine = fault.Spelling{Field: testFlag, Step: testStepCommand}

var testPositional = map[string][]string{
	"resume": {"run"}, "transition": {"run", "stage", "status"}, "finish": {"run"}, "union": {"run"},
	"job claim": {"run"}, "job done": {"run", "job"}, "job add": {"run", "job"},
	"worktree setup": {"run", "node"}, "recover": {"run"}, "trust": {"run"},
}

func testFlag(field string) string { return "--" + strings.ReplaceAll(field, "_", "-") }

func testStepCommand(s fault.Step) string {
	word := func(v any) string {
		if p, ok := v.(fault.Placeholder); ok {
			return string(p)
		}
		return text.ShellQuote(fmt.Sprint(v))
	}
	out := []string{text.Command(append([]string{"git", "atlas"}, strings.Fields(s.Op)...)...)}
	pos := testPositional[s.Op]
	for _, p := range pos {
		if v, ok := s.Field(p); ok {
			out = append(out, word(v))
		}
	}
	for _, f := range s.Fields {
		if strings.Contains(" "+strings.Join(pos, " ")+" ", " "+f.Name+" ") {
			continue
		}
		switch v := f.Value.(type) {
		case bool:
			if v {
				out = append(out, testFlag(f.Name))
			}
		case string:
			if strings.HasPrefix(v, "-") {
				out = append(out, text.ShellQuote(testFlag(f.Name)+"="+v))
			} else {
				out = append(out, testFlag(f.Name), word(v))
			}
		default:
			out = append(out, testFlag(f.Name), word(v))
		}
	}
	return strings.Join(out, " ")
}
