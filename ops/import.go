package ops

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/git-atlas/git-atlas/baseline"
	"github.com/git-atlas/git-atlas/importer"
	"github.com/git-atlas/git-atlas/internal/confine"
	"github.com/git-atlas/git-atlas/internal/fault"
)

// ImportRequest is `import kimi-atlas|agenteam [DIR]` (docs/contract.md §13).
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
	if err := req.Check(); err != nil {
		return nil, err
	}
	sub := importDirs[req.System]
	top := o.Repo.TopLevel
	if top == "" {
		return nil, fault.Usage("import needs a worktree (the source directory lives in one)")
	}
	// The source is read through no symbolic link below the worktree's top (a
	// committed link could lead to another project's files), or below DIR, whose own
	// path the user chose.
	dir, root := req.Dir, req.Dir
	if dir == "" {
		dir, root = filepath.Join(top, sub), top
	}
	switch _, err := (confine.Tree{Dir: root}).ReadDir(dir); {
	case errors.Is(err, confine.ErrOutside):
		return nil, err
	case err != nil:
		return nil, fault.NotFound("no %s directory at %s", req.System, dir)
	}
	scan := importer.ScanAgenTeam
	if req.System == importer.KimiAtlas {
		scan = importer.ScanKimi
	}
	plans, probs, err := scan(ctx, root, dir)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, confine.ErrOutside):
		return nil, err
	default:
		return nil, fault.New(fault.ErrUsage, "%v", err)
	}
	// A run an earlier import named keeps its name, even when the source has since
	// gained an id that collides with it (docs/contract.md §13: a re-import changes nothing).
	store := o.Store(Driver{}.Writer())
	store.Unsigned = true // the source's text is not this clone's (docs/contract.md §6)
	prefer := map[string]string{}
	for _, p := range plans {
		for _, n := range importer.RunNames(p.SourceID) {
			r, err := store.Load(ctx, n)
			if err != nil {
				continue
			}
			if src := r.Header.ImportedFrom; src != nil && src.System == req.System {
				if _, has := prefer[src.SourceID]; !has {
					prefer[src.SourceID] = n
				}
			}
		}
	}
	plans, more := importer.NameRuns(plans, prefer)
	probs = append(probs, more...)
	for _, p := range plans {
		// Where the run came from, as the repository sees it (the same from every
		// clone).
		if rel, err := filepath.Rel(top, p.Path); err == nil {
			p.Header.ImportedFrom.Path = filepath.ToSlash(rel)
		}
		if req.System == importer.AgenTeam {
			importConfigFiles(top, dir, p)
		}
	}
	// A driver of no name, as a driver's command run without --holder writes.
	runs := importer.Apply(ctx, store, plans, req.DryRun, o.Progress)
	res := &ImportResult{System: req.System, Dir: dir, DryRun: req.DryRun, Runs: nonNil(runs), Problems: nonNil(probs)}
	for _, r := range runs {
		if r.Outcome != importer.Refused {
			return res, nil
		}
	}
	if len(runs) == 0 && len(probs) == 0 {
		return res, fault.NotFound("no %s runs in %s", req.System, dir)
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, nothingImported(probs)
}

// nothingImported is the error of an import that imported nothing: when every run
// was refused by one kind of check (those of `job add` and `start`, the bounds on
// source files), that kind's (exit 2, 4 or 5, as `job add` would exit), with the
// reason when there was one run; otherwise errNothingImported (exit 1).
func nothingImported(probs []importer.Problem) error {
	var kind error
	for _, p := range probs {
		k := faultKind(p.Err)
		if k == nil || (kind != nil && !errors.Is(k, kind)) {
			return errNothingImported
		}
		kind = k
	}
	if kind == nil {
		return errNothingImported
	}
	if len(probs) == 1 {
		return fault.New(kind, "%v: %s: %s", errNothingImported, probs[0].Path, probs[0].Reason)
	}
	return fault.New(kind, "%v: every run was refused", errNothingImported)
}

func faultKind(err error) error {
	for _, k := range []error{fault.ErrUsage, fault.ErrConflict, fault.ErrNotFound, fault.ErrRefused} {
		if errors.Is(err, k) {
			return k
		}
	}
	return nil
}

// ateamConfigs are where AgenTeam looks for its configuration, relative to the
// directory holding .agenteam/ (its config.find_config: the personal layer, the
// team layer, the legacy file).
var ateamConfigs = []string{".agenteam/config.yaml", ".agenteam.team/config.yaml", "agenteam.yaml"}

// importConfigFiles freezes the hash of AgenTeam's configuration files as they are at
// import, as `start --config` does, so resume reports their drift from here on
// (docs/contract.md §6); AgenTeam's own hash (of its merged configuration) is kept in
// imported_from. A project outside the worktree, or a file that is not a regular
// file or is reached through a symbolic link below the project, leaves drift unknown,
// said in a note.
func importConfigFiles(top, dir string, p *importer.Plan) {
	project := filepath.Dir(filepath.Clean(dir))
	src := confine.Tree{Dir: project}
	var files []string
	for _, f := range ateamConfigs {
		abs := filepath.Join(project, f)
		rel, err := filepath.Rel(top, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			p.Notes = append(p.Notes, "AgenTeam's configuration is outside this worktree: its drift is not tracked")
			return
		}
		switch fh, _, err := src.OpenRegular(abs, baseline.MaxConfigFile); {
		case err == nil:
			fh.Close()
		case errors.Is(err, confine.ErrOutside):
			p.Notes = append(p.Notes, fmt.Sprintf("configuration drift is not tracked: %v", err))
			return
		case errors.Is(err, confine.ErrNotRegular):
			p.Notes = append(p.Notes, fmt.Sprintf("%s is not a regular file: configuration drift is not tracked", rel))
			return
		}
		files = append(files, filepath.ToSlash(rel))
	}
	hash, err := baseline.ConfigHash(top, files)
	if err != nil {
		p.Notes = append(p.Notes, fmt.Sprintf("configuration drift is not tracked: %v", err))
		return
	}
	p.Header.ConfigFiles, p.Header.ConfigHash = files, hash
}
