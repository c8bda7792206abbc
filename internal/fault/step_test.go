package fault

import (
	"fmt"
	"strings"
	"testing"
)

// testSpelling spells a field as a flag and a step as op words and its fields as
// flags, so a test can see which the front end rendered.
var testSpelling = Spelling{Field: flag, Step: func(s Step) string {
	out := []string{"atlas", s.Op}
	for _, f := range s.Fields {
		out = append(out, fmt.Sprintf("%s=%v", flag(f.Name), f.Value))
	}
	return strings.Join(out, " ")
}}

// TestStepsAreSpelledByTheFrontEnd: a hint (or message) naming a step keeps the step,
// not a command line: Error() and HintOf show it in neutral words, and each front
// end renders it (SpelledBy), with the fields the text names, also wrapped and
// through a Text argument.
func TestStepsAreSpelledByTheFrontEnd(t *testing.T) {
	finish := Do("finish", "run", "r1", "status", Placeholder("completed|failed"), "force", true)
	e := NotFound("no run %q", "r1").WithHint("`%s` to end it, or pass {ttl}", finish)
	if HintOf(e) != "`finish(run=r1, status=completed|failed, force)` to end it, or pass ttl" {
		t.Fatalf("plain hint: %q", HintOf(e))
	}
	_, hint := SpelledBy(fmt.Errorf("wrapped: %w", e), testSpelling)
	if hint != "`atlas finish --run=r1 --status=completed|failed --force=true` to end it, or pass --ttl" {
		t.Fatalf("spelled hint: %q", hint)
	}
	// Spelled (fields only) renders the step in neutral words.
	if _, hint := Spelled(e, flag); hint != "`finish(run=r1, status=completed|failed, force)` to end it, or pass --ttl" {
		t.Fatalf("Spelled hint: %q", hint)
	}
	m := Named(ErrUsage, "{yes} needs {digest}: `%s` prints it", Do("trust", "run", "r1", "list", true))
	if msg, _ := SpelledBy(m, testSpelling); msg != "--yes needs --digest: `atlas trust --run=r1 --list=true` prints it" {
		t.Fatalf("spelled message: %q", msg)
	}
	note := Textf("%s holds it: the next command with {remote} brings it", "origin{x}")
	if note.String() != "origin{x} holds it: the next command with remote brings it" || note.Spell(testSpelling) != "origin{x} holds it: the next command with --remote brings it" {
		t.Fatalf("text: %q / %q", note.String(), note.Spell(testSpelling))
	}
	if _, hint := SpelledBy(Usage("x").WithHint("%s", Textf("without {remote}")), testSpelling); hint != "without --remote" {
		t.Fatalf("text argument: %q", hint)
	}
	// A step's values quoted from a ledger are redacted with the rest.
	r := Redact(NotFound("no run").WithHint("`%s`", Do("resume", "run", "evil")).WithQuoted("evil"), func(s string) bool { return s == "evil" }, "<x>")
	if _, hint := SpelledBy(r, testSpelling); hint != "`atlas resume --run=<x>`" {
		t.Fatalf("redacted: %q", hint)
	}
}
