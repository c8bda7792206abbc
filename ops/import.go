package ops

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/git-atlas/git-atlas/importer"
	"github.com/git-atlas/git-atlas/internal/fault"
)

// ImportRequest is `import kimi-atlas|agenteam [DIR]` (SPEC §13).
type ImportRequest struct {
	// System is the system the runs come from: importer.KimiAtlas or
	// importer.AgenTeam.
	System string
	// Dir is the system's state directory ("": .atlas/ or .agenteam/ at the
	// worktree root). A front end resolves a relative one first.
	Dir    string
	DryRun bool
}

// ImportResult is `import --json`: what became of each source run, and the source
// runs that could not be read.
type ImportResult struct {
	System   string             `json:"system"`
	Dir      string             `json:"dir"`
	DryRun   bool               `json:"dry_run,omitempty"`
	Runs     []importer.Result  `json:"runs"`
	Problems []importer.Problem `json:"problems"`
}

// importDirs are the systems' state directories at the worktree root.
var importDirs = map[string]string{importer.KimiAtlas: ".atlas", importer.AgenTeam: ".agenteam"}

// errNothingImported: every run found was refused (a failure, exit 1).
var errNothingImported = errors.New("nothing could be imported")

// Import writes the runs it finds in another system's state directory as runs of the
// ledger (with DryRun, only says what it would do); the source is only read. When no
// run could be imported (none found, or every one refused), the result comes back
// together with the error: a front end shows it, then fails.
func (o *Ops) Import(ctx context.Context, req ImportRequest) (*ImportResult, error) {
	sub, ok := importDirs[req.System]
	if !ok {
		return nil, fault.Usage("unknown system %q: import reads %s or %s", req.System, importer.KimiAtlas, importer.AgenTeam)
	}
	top := o.Repo.TopLevel
	if top == "" {
		return nil, fault.Usage("import needs a worktree (the source directory lives in one)")
	}
	dir := req.Dir
	if dir == "" {
		dir = filepath.Join(top, sub)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fault.NotFound("no %s directory at %s", req.System, dir)
	}
	scan := importer.ScanAgenTeam
	if req.System == importer.KimiAtlas {
		scan = importer.ScanKimi
	}
	plans, probs, err := scan(dir)
	if err != nil {
		return nil, fault.New(fault.ErrUsage, "%v", err)
	}
	for _, p := range plans {
		// Where the run came from, as the repository sees it (the same from every
		// clone).
		if rel, err := filepath.Rel(top, p.Path); err == nil {
			p.Header.ImportedFrom.Path = filepath.ToSlash(rel)
		}
	}
	// A driver of no name, as a driver's command run without --holder writes.
	runs := importer.Apply(ctx, o.Store(Driver{}.Writer()), plans, req.DryRun, o.Progress)
	res := &ImportResult{System: req.System, Dir: dir, DryRun: req.DryRun, Runs: nonNil(runs), Problems: nonNil(probs)}
	for _, r := range runs {
		if r.Outcome != importer.Refused {
			return res, nil
		}
	}
	if len(runs) == 0 && len(probs) == 0 {
		return res, fault.NotFound("no %s runs in %s", req.System, dir)
	}
	return res, errNothingImported
}
