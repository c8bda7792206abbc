package fault

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func flag(f string) string { return "--" + strings.ReplaceAll(f, "_", "-") }

// TestNamedFieldsAreSpelledByTheFrontEnd: an error naming request fields shows them
// plain, and as each front end spells them, in its message and hint, also wrapped.
func TestNamedFieldsAreSpelledByTheFrontEnd(t *testing.T) {
	e := Named(ErrUsage, "{verify_timeout} must be positive, got %s", "-1s").WithHint("e.g. {verify_timeout} 10m; a glob {a,b} is text")
	if e.Error() != "verify_timeout must be positive, got -1s" {
		t.Fatalf("plain message: %q", e.Error())
	}
	wrapped := fmt.Errorf("job done: %w", e)
	msg, hint := Spelled(wrapped, flag)
	if msg != "job done: --verify-timeout must be positive, got -1s" || hint != "e.g. --verify-timeout 10m; a glob {a,b} is text" {
		t.Fatalf("spelled: %q / %q", msg, hint)
	}
	msg, hint = Spelled(errors.Join(errors.New("x"), e), func(f string) string { return f })
	if !strings.Contains(msg, "verify_timeout must be positive") || hint != "e.g. verify_timeout 10m; a glob {a,b} is text" {
		t.Fatalf("joined: %q / %q", msg, hint)
	}
	// A value that looks like a field reference is never spelled: it is an argument.
	msg, _ = Spelled(Named(ErrUsage, "{ttl}: bad value %q", "{ttl}"), flag)
	if msg != `--ttl: bad value "{ttl}"` {
		t.Fatalf("argument spelled: %q", msg)
	}
	// Errors that name no field are unchanged.
	msg, hint = Spelled(Usage("100%% {x}").WithHint("h"), flag)
	if msg != "100% {x}" || hint != "h" {
		t.Fatalf("plain error: %q / %q", msg, hint)
	}
	if c, k := Code(wrapped); c != 2 || k != "usage" {
		t.Fatalf("code %d %s", c, k)
	}
}
