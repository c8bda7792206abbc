package cli

import (
	"runtime/debug"
	"sync"
)

// Version is stamped by a release build: -ldflags "-X
// github.com/git-atlas/git-atlas/internal/cli.Version=v1.2.3" (the Makefile's release
// target). Empty otherwise, and the version comes from the build itself.
var Version = ""

// version is what `--version` and the MCP server report, one word: the stamped
// release; else the module version `go install …@vX` records; else, for a build from
// a checkout, "devel-" and the commit it was built from (with "+dirty" when the tree
// had changes), so that every binary says what it is.
var version = sync.OnceValue(func() string {
	if Version != "" {
		return Version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return versionOf(info)
})

func versionOf(info *debug.BuildInfo) string {
	var rev string
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return "devel-" + rev
}
