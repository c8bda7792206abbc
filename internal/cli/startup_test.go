package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestVersionBeforeKong: `--version` alone prints what kong's version flag prints,
// without building kong's model or setting up signals (issue 34, start-up): a handful
// of allocations, where the model of the global flags alone is hundreds.
func TestVersionBeforeKong(t *testing.T) {
	run := func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		code := Main(args, strings.NewReader(""), &out, &errb)
		return out.String() + errb.String(), code
	}
	fast, code := run("--version")
	viaKong, kcode := run("-C", ".", "--version")
	if fast != viaKong || code != kcode || code != ExitOK || !strings.HasPrefix(fast, "git-atlas ") {
		t.Errorf("--version printed %q (exit %d); through kong %q (exit %d)", fast, code, viaKong, kcode)
	}
	if n := testing.AllocsPerRun(10, func() { run("--version") }); n > 20 {
		t.Errorf("--version made %v allocations: it built kong's model", n)
	}
}
