package gitstate

import "testing"

// Push, pull and a sync through a remote take a ref only in a shape git-atlas writes
// (docs/contract.md §3): a shared remote may hold any name.
func TestParseCarriedRefTakesOnlyGitAtlasShapes(t *testing.T) {
	t.Parallel()
	good := map[string]RefKind{
		"refs/atlas/runs/fix-login":                   KindRun,
		"refs/atlas/pins/r/baseline":                  KindPin,
		"refs/atlas/pins/r/stage/code":                KindPin,
		"refs/atlas/pins/r/stage/code/2":              KindPin,
		"refs/atlas/pins/r/node/build":                KindPin,
		"refs/atlas/recovery/r/code-c8301607e05b":     KindRecovery,
		"refs/atlas/recovery/r/union-kept-0123456789": KindRecovery,
		"refs/atlas/diverged/r/1":                     KindDiverged,
		"refs/heads/atlas/r/node/build":               KindBranch,
		"refs/heads/atlas/r/union":                    KindBranch,
		"refs/heads/atlas/r/replay/code/3":            KindBranch,
	}
	for name, kind := range good {
		c, err := ParseCarriedRef(name)
		if err != nil || c.Kind != kind || c.Run != map[bool]string{true: "fix-login", false: "r"}[kind == KindRun] {
			t.Errorf("ParseCarriedRef(%q) = %+v, %v; want kind %d", name, c, err, kind)
		}
	}
	for _, name := range []string{
		"refs/atlas/runs/fix-login/x", "refs/atlas/runs/", "refs/atlas/runs/-x", "refs/atlas/runs/a..b",
		"refs/atlas/pins/fix-login", "refs/atlas/pins/r/other", "refs/atlas/pins/r/baseline/x",
		"refs/atlas/pins/r/stage/code/0", "refs/atlas/pins/r/stage/code/02", "refs/atlas/pins/r/node/a/b",
		"refs/atlas/recovery/r", "refs/atlas/recovery/r/a/b", "refs/atlas/recovery/r/.x",
		"refs/atlas/diverged/r/x", "refs/atlas/diverged/r/0", "refs/atlas/diverged/r",
		"refs/heads/atlas/wip", "refs/heads/atlas/r/wip", "refs/heads/atlas/r/union/x",
		"refs/heads/atlas/r/node", "refs/heads/atlas/r/replay/code", "refs/heads/atlas/r/replay/code/x",
		"refs/atlas/other/r", "refs/heads/main", "refs/atlas-incoming/x/refs/atlas/runs/r",
	} {
		if c, err := ParseCarriedRef(name); err == nil {
			t.Errorf("ParseCarriedRef(%q) = %+v, want an error", name, c)
		}
	}
}

// A ref cannot be created where another ref is its directory or lies below it: push
// and pull leave such a ref out alone instead of failing every other ref with it.
func TestRefSpaceFindsWhatIsInTheWay(t *testing.T) {
	t.Parallel()
	s := NewRefSpace(map[string]string{"refs/atlas/runs/fix-login/x": "", "refs/atlas/pins/p": ""})
	for name, want := range map[string]string{
		"refs/atlas/runs/fix-login":          "refs/atlas/runs/fix-login/x",
		"refs/atlas/runs/fix":                "",
		"refs/atlas/pins/p/baseline":         "refs/atlas/pins/p",
		"refs/atlas/pins/pp/baseline":        "",
		"refs/atlas/runs/fix-login/x":        "",
		"refs/atlas/runs/fix-login/x/deeper": "refs/atlas/runs/fix-login/x",
	} {
		if got := s.InTheWay(name); got != want {
			t.Errorf("InTheWay(%q) = %q, want %q", name, got, want)
		}
	}
}
