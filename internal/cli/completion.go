package cli

import (
	_ "embed"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/git-atlas/git-atlas/ops"
)

// Shell completion (docs/contract.md §14). The scripts are thin: they hand the words of the
// command line to the hidden `git atlas __complete`, which walks kong's own model of
// the command tree (so a new command or flag completes with no edit here) and reads
// live values from the ledger. No library is used: kongplete (posener/complete) keys
// value predictors on struct tags, which would mean editing every command's options,
// and its protocol (COMP_LINE through the environment) does not reach git's own
// completion, which calls a shell function `_git_atlas` with the words already split.

//go:embed completion/git-atlas.bash
var bashScript string

//go:embed completion/git-atlas.zsh
var zshScript string

//go:embed completion/git-atlas.fish
var fishScript string

// CompletionCmd is `git atlas completion bash|zsh|fish`.
type CompletionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"bash, zsh or fish."`
}

// Run prints the script; its first lines say how to install it.
func (c *CompletionCmd) Run(env *Env) error {
	script := map[string]string{"bash": bashScript, "zsh": zshScript, "fish": fishScript}[c.Shell]
	_, err := io.WriteString(env.Stdout, script)
	return err
}

// CompleteCmd is what the scripts call: `git atlas __complete -- WORD...`, the words
// after `atlas` up to the one being completed (maybe empty). It prints one candidate
// a line and always succeeds: a completion never shows an error.
type CompleteCmd struct {
	Words []string `arg:"" optional:"" passthrough:"" help:"The words after atlas, the last one being completed."`
}

// Run prints the candidates.
func (c *CompleteCmd) Run(env *Env) error {
	for _, w := range complete(env, c.Words) {
		fmt.Fprintln(env.Stdout, w)
	}
	return nil
}

// completer walks the words typed so far through kong's model.
type completer struct {
	env  *Env
	node *kong.Node
	args []string // positional values typed so far for node
	run  string   // the run named so far (positional "run"), for stage/job/node values
}

func complete(env *Env, words []string) (out []string) {
	defer func() {
		if recover() != nil { // never fail a shell's completion
			out = nil
		}
	}()
	if len(words) == 0 {
		words = []string{""}
	}
	c := &completer{env: env, node: env.kong.Model.Node}
	cur := words[len(words)-1]
	done := words[:len(words)-1]
	for i := 0; i < len(done); i++ {
		w := done[i]
		switch {
		case w == "--":
			continue
		case strings.HasPrefix(w, "-") && len(w) > 1:
			name, _, hasValue := strings.Cut(w, "=")
			f := c.flag(name)
			if f == nil || f.IsBool() || f.IsCounter() || hasValue {
				if f != nil && hasValue && f.Name == "dir" {
					c.env.Dir = w[len(name)+1:]
				}
				continue
			}
			if i+1 < len(done) {
				i++
				if f.Name == "dir" {
					c.env.Dir = done[i]
				}
				continue
			}
			// The flag's value is the word being completed.
			return filter(c.flagValues(f, ""), cur)
		default:
			if child := c.child(w); child != nil && len(c.args) == 0 {
				c.node = child
				continue
			}
			c.arg(w)
		}
	}
	if len(done) > 0 {
		if prev := done[len(done)-1]; strings.HasPrefix(prev, "-") && !strings.Contains(prev, "=") {
			if f := c.flag(prev); f != nil && !f.IsBool() && !f.IsCounter() {
				return filter(c.flagValues(f, ""), cur)
			}
		}
	}
	if strings.HasPrefix(cur, "-") {
		if name, _, ok := strings.Cut(cur, "="); ok {
			if f := c.flag(name); f != nil {
				return filter(c.flagValues(f, name+"="), cur)
			}
			return nil
		}
		return filter(c.flagNames(), cur)
	}
	var cands []string
	if len(c.args) == 0 {
		for _, ch := range c.node.Children {
			if !ch.Hidden {
				cands = append(cands, ch.Name)
			}
		}
	}
	if len(c.args) < len(c.node.Positional) {
		cands = append(cands, c.positionalValues(c.node.Positional[len(c.args)])...)
	} else if n := len(c.node.Positional); n > 0 && c.node.Positional[n-1].IsSlice() {
		cands = append(cands, c.positionalValues(c.node.Positional[n-1])...)
	}
	return filter(cands, cur)
}

// arg records a positional value typed for the current node.
func (c *completer) arg(w string) {
	if i := len(c.args); i < len(c.node.Positional) && c.node.Positional[i].Name == "run" {
		c.run = w
	}
	c.args = append(c.args, w)
}

func (c *completer) child(name string) *kong.Node {
	for _, ch := range c.node.Children {
		if ch.Name == name {
			return ch
		}
		if slices.Contains(ch.Aliases, name) {
			return ch
		}
	}
	return nil
}

// flag finds --name or -x among the node's flags and its parents'.
func (c *completer) flag(word string) *kong.Flag {
	for _, group := range c.node.AllFlags(true) {
		for _, f := range group {
			if word == "--"+f.Name || (f.Short != 0 && word == "-"+string(f.Short)) {
				return f
			}
			for _, a := range f.Aliases {
				if word == "--"+a {
					return f
				}
			}
		}
	}
	return nil
}

func (c *completer) flagNames() []string {
	var out []string
	for _, group := range c.node.AllFlags(true) {
		for _, f := range group {
			out = append(out, "--"+f.Name)
		}
	}
	return out
}

// flagValues: a flag's enum, or live values for the flags that name a stage or a job.
func (c *completer) flagValues(f *kong.Flag, prefix string) []string {
	var vals []string
	switch {
	case f.Enum != "":
		vals = f.EnumSlice()
	case f.Name == "stage":
		vals = c.stages()
	case f.Name == "job" || f.Name == "needs" || f.Name == "nodes":
		vals = c.jobs()
	}
	for i := range vals {
		vals[i] = prefix + vals[i]
	}
	return vals
}

// positionalValues: what may stand at a positional argument, by its name.
func (c *completer) positionalValues(p *kong.Positional) []string {
	if p.Enum != "" {
		return p.EnumSlice()
	}
	switch p.Name {
	case "run":
		return c.runs()
	case "stage":
		return c.stages()
	case "job":
		return c.jobs()
	case "node":
		return c.nodes()
	case "snapshot":
		return c.snapshots()
	case "status":
		return ops.StageStatuses()
	case "command":
		var out []string
		for _, ch := range c.env.kong.Model.Children {
			if !ch.Hidden {
				out = append(out, ch.Name)
			}
		}
		return out
	}
	return nil
}

// runs are read from the summaries `list` reads (the cache, else commit messages): one
// for-each-ref, usually no object read.
func (c *completer) runs() []string {
	o, err := c.env.Ops()
	if err != nil {
		return nil
	}
	res, err := o.List(c.env.Ctx, ops.ListRequest{All: true})
	if err != nil {
		return nil
	}
	var out []string
	for _, r := range res.Runs {
		out = append(out, r.RunID)
	}
	return out
}

// load reads the run named on the line so far: one ref and two blobs.
func (c *completer) load() *ops.Run {
	if c.run == "" {
		return nil
	}
	o, err := c.env.Ops()
	if err != nil {
		return nil
	}
	res, err := o.Show(c.env.Ctx, ops.ShowRequest{Run: c.run})
	if err != nil {
		return nil
	}
	return res.Run
}

func (c *completer) stages() []string {
	var out []string
	if r := c.load(); r != nil {
		for _, s := range r.State.Stages {
			out = append(out, s.Name)
		}
	}
	return out
}

func (c *completer) jobs() []string {
	var out []string
	if r := c.load(); r != nil {
		for _, j := range r.State.Jobs {
			out = append(out, j.ID)
		}
	}
	return out
}

// nodes are the run's managed worktrees' nodes, its jobs and its stages (a stage may
// have a worktree too).
func (c *completer) nodes() []string {
	r := c.load()
	if r == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, w := range r.State.Worktrees {
		add(w.Node)
	}
	for _, j := range r.State.Jobs {
		add(j.ID)
	}
	for _, s := range r.State.Stages {
		add(s.Name)
	}
	return out
}

// snapshots are the ids under refs/atlas/recovery/<run>/<id>: one ref listing.
func (c *completer) snapshots() []string {
	repo, err := c.env.Repo()
	if err != nil {
		return nil
	}
	ids, err := repo.SnapshotIDs(c.env.Ctx)
	if err != nil {
		return nil
	}
	return ids
}

// filter keeps the candidates that start with prefix, sorted and unique.
func filter(cands []string, prefix string) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range cands {
		if strings.HasPrefix(c, prefix) && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}
