package git

import (
	"strings"
	"testing"
)

// Every variable that may leak from a calling git, and every user setting that would
// change how git-atlas's own git calls behave, is gone from baseEnv (the fixed values
// are set instead); a user's command (UserEnv) loses the leaked ones and keeps the
// user's settings.
func TestEnvironments(t *testing.T) {
	t.Parallel()
	leakedNow := []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
		"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_PREFIX", "GIT_QUARANTINE_PATH",
		"GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS", "GIT_REFLOG_ACTION"}
	userSettings := []string{"GIT_EXTERNAL_DIFF", "GIT_DIFF_OPTS", "GIT_PAGER", "PAGER", "GIT_TERMINAL_PROMPT",
		"GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_TRACE", "LC_ALL", "LANG", "GIT_OPTIONAL_LOCKS", "GIT_FLUSH"}
	// The caller's environment is given, not set: the process's stays TestMain's.
	var caller []string
	for _, v := range append(append([]string{}, leakedNow...), userSettings...) {
		caller = append(caller, v+"=from-the-caller")
	}
	caller = append(caller, "GIT_CONFIG_PARAMETERS='user.name'='kept'")
	get := func(env []string, name string) (string, bool) {
		var val string
		var ok bool
		for _, kv := range env {
			if k, v, _ := strings.Cut(kv, "="); k == name {
				val, ok = v, true // the last one wins, as in exec
			}
		}
		return val, ok
	}
	base, user := baseEnvOf(caller), userEnvOf(caller)
	for _, v := range append(append([]string{}, leakedNow...), userSettings...) {
		if got, _ := get(base, v); got == "from-the-caller" {
			t.Errorf("git-atlas's git calls get the caller's %s", v)
		}
	}
	for _, v := range leakedNow {
		if _, ok := get(user, v); ok {
			t.Errorf("a user's command gets the leaked %s", v)
		}
	}
	for _, v := range userSettings {
		if got, _ := get(user, v); got != "from-the-caller" {
			t.Errorf("a user's command lost its %s", v)
		}
	}
	for _, want := range []string{"LC_ALL=C", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true"} {
		k, v, _ := strings.Cut(want, "=")
		if got, _ := get(base, k); got != v {
			t.Errorf("baseEnv %s = %q, want %q", k, got, v)
		}
	}
	if got, _ := get(base, "GIT_CONFIG_PARAMETERS"); got == "" {
		t.Error("the user's git -c is dropped from git-atlas's git calls")
	}
}
