package git

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// ErrNotCommit means a ref points at something other than a commit.
var ErrNotCommit = errors.New("not a commit")

// TreeEntry is one file of a tree written by WriteTree.
type TreeEntry struct {
	Name string
	Blob string
}

// Blob is the answer to one "<commit>:<path>" query of BlobsAt.
type Blob struct {
	ID   string
	Data []byte
	Err  error // ErrNotFoundObject when the path or commit is missing
}

// CommitInfo is what the ledger needs from a commit, its ids parsed from the commit's
// bytes (a hand-made object may hold anything there).
type CommitInfo struct {
	ID      OID
	Tree    OID
	Parents []OID
}

// objectStore reads refs and objects and writes objects. Two implementations: go-git
// in-process (30 µs per ref read against a 2 ms fork, docs/git-notes.md) and the git CLI for
// repositories go-git cannot open correctly.
type objectStore interface {
	readRef(ctx context.Context, name string) (string, error)
	commit(ctx context.Context, id string) (CommitInfo, error)
	firstParents(ctx context.Context, tip string) ([]string, error)
	blobsAt(ctx context.Context, specs []string) ([]Blob, error)
	writeBlob(ctx context.Context, data []byte) (string, error)
	writeTree(ctx context.Context, entries []TreeEntry) (string, error)
	writeCommit(ctx context.Context, tree string, parents []string, msg string) (string, error)
}

// Commit reads a commit's tree and parents.
func (r *Repository) Commit(ctx context.Context, id OID) (CommitInfo, error) {
	if id.IsZero() {
		return CommitInfo{}, fmt.Errorf("read commit: none: %w", ErrNotFoundObject)
	}
	return r.objects.commit(ctx, id.String())
}

// FirstParents lists tip and its first-parent ancestors, newest first: a ledger chain.
func (r *Repository) FirstParents(ctx context.Context, tip OID) ([]OID, error) {
	if tip.IsZero() {
		return nil, fmt.Errorf("walk: no commit: %w", ErrNotFoundObject)
	}
	chain, err := r.objects.firstParents(ctx, tip.String())
	if err != nil {
		return nil, err
	}
	out := make([]OID, len(chain))
	for i, id := range chain {
		if out[i], err = ParseOID(id); err != nil {
			return nil, fmt.Errorf("walk %s: %q is not an object id", tip, id)
		}
	}
	return out, nil
}

// BlobSpec names the blob at Path in Commit's tree (`<commit>:<path>`), or, with Back,
// in the tree of Commit's Back-th first-parent ancestor (`<commit>~<back>:<path>`).
type BlobSpec struct {
	Commit OID
	Path   string
	Back   int
}

// BlobsAt reads many blobs at once, in order. A spec with no commit, or a path
// `cat-file --batch` cannot take (empty, or with a line break), is refused.
func (r *Repository) BlobsAt(ctx context.Context, specs []BlobSpec) ([]Blob, error) {
	list := make([]string, len(specs))
	for i, s := range specs {
		if s.Commit.IsZero() || s.Path == "" || strings.ContainsAny(s.Path, "\n\r") || s.Back < 0 {
			return nil, fmt.Errorf("read blob %s:%q: not a commit and a path", s.Commit.String(), clip(s.Path))
		}
		list[i] = s.Commit.String() + ":" + s.Path
		if s.Back > 0 {
			list[i] = s.Commit.String() + "~" + strconv.Itoa(s.Back) + ":" + s.Path
		}
	}
	return r.objects.blobsAt(ctx, list)
}

// WriteBlob writes a blob durably.
func (r *Repository) WriteBlob(ctx context.Context, data []byte) (OID, error) {
	id, err := r.objects.writeBlob(ctx, data)
	if err != nil {
		return OID{}, err
	}
	return gitOID(id)
}

// WriteTree writes a flat tree of regular files durably.
func (r *Repository) WriteTree(ctx context.Context, entries []TreeEntry) (OID, error) {
	id, err := r.objects.writeTree(ctx, entries)
	if err != nil {
		return OID{}, err
	}
	return gitOID(id)
}

// WriteCommit writes a commit durably, authored by git-atlas itself so that a machine
// without user.email can still keep a ledger.
func (r *Repository) WriteCommit(ctx context.Context, tree OID, parents []OID, msg string) (OID, error) {
	if tree.IsZero() {
		return OID{}, errors.New("write commit: no tree")
	}
	id, err := r.objects.writeCommit(ctx, tree.String(), oidStrings(parents), msg)
	if err != nil {
		return OID{}, err
	}
	return gitOID(id)
}

const (
	ledgerName  = "git-atlas"
	ledgerEmail = "git-atlas@localhost"
)

// newObjectStore picks go-git when the repository uses nothing go-git v5 mishandles
// (goGit: goGitCanOpen's answer, or discover's from the config it read), else the CLI.
func newObjectStore(r *Repository, goGit bool) objectStore {
	if os.Getenv("GIT_ATLAS_NO_GOGIT") == "" && goGit {
		fs := osfs.New(r.CommonDir)
		st := filesystem.NewStorageWithOptions(fs, cache.NewObjectLRUDefault(), filesystem.Options{})
		// As go-git's own Open: a repository is storage with a readable HEAD. (Its
		// Repository type, with transports and signing, is not needed to write objects,
		// and would double the binary's packages and its start-up time.)
		if _, err := st.Reference(plumbing.HEAD); err == nil {
			return &goGitStore{cli: &cliStore{r: r}, st: st, dir: r.CommonDir}
		}
	}
	return &cliStore{r: r}
}

// goGitCanOpen reports whether the repository's config names nothing go-git v5
// mishandles (docs/git-notes.md: sha256, worktreeConfig, partialClone, preciousObjects,
// reftable): any extension sends it to the CLI. It reads the config file only: no fork.
func goGitCanOpen(commonDir string) bool {
	data, err := os.ReadFile(filepath.Join(commonDir, "config"))
	if err != nil {
		return false
	}
	cfg := config.NewConfig()
	if err := cfg.Unmarshal(data); err != nil {
		return false
	}
	raw := cfg.Raw
	if v := raw.Section("core").Option("repositoryformatversion"); v != "" && v != "0" {
		// Version 1 is only interesting for its extensions; any we know go-git gets
		// wrong (or any we have never heard of) sends us to the CLI.
		for _, o := range raw.Section("extensions").Options {
			switch strings.ToLower(o.Key) {
			case "noop":
			default:
				return false
			}
		}
	}
	if len(raw.Section("extensions").Options) > 0 {
		return false
	}
	return true
}

// goGitStore is safe for concurrent use: go-git's storage and its object cache are
// not, so every call into it holds mu.
type goGitStore struct {
	mu  sync.Mutex
	cli *cliStore
	st  *filesystem.Storage
	dir string
}

func (g *goGitStore) readRef(_ context.Context, name string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ref, err := g.st.Reference(plumbing.ReferenceName(name))
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read ref %s: %w", name, err)
	}
	if ref.Type() != plumbing.HashReference {
		return "", fmt.Errorf("read ref %s: symbolic ref", name)
	}
	return ref.Hash().String(), nil
}

// Objects are read in process only where they are loose (readLoose: one file, no pack
// index); anything else goes to git (cat-file, rev-list): go-git parses a whole pack
// index in Go before its first read, which in a repository with a 200,000-object pack
// cost more than the forks it saves (docs/git-notes.md §1). Refs are plain files, and
// go-git reads them without a fork.
func (g *goGitStore) loose() looseWriter {
	return looseWriter{objects: filepath.Join(g.dir, "objects")}
}

func (g *goGitStore) commit(ctx context.Context, id string) (CommitInfo, error) {
	typ, data, ok := g.loose().readLoose(id)
	if !ok {
		return g.cli.commit(ctx, id)
	}
	if typ != "commit" {
		return CommitInfo{}, fmt.Errorf("read %s: %w (a %s)", id, ErrNotCommit, typ)
	}
	return parseCommit(id, data)
}

// firstParents walks loose commits in process and hands the rest of the chain, from
// the first commit that is not loose, to rev-list.
func (g *goGitStore) firstParents(ctx context.Context, tip string) ([]string, error) {
	var chain []string
	for id := tip; id != ""; {
		typ, data, ok := g.loose().readLoose(id)
		if !ok || typ != "commit" {
			rest, err := g.cli.firstParents(ctx, id)
			if err != nil {
				return nil, err
			}
			return append(chain, rest...), nil
		}
		chain = append(chain, id)
		info, err := parseCommit(id, data)
		if err != nil {
			return nil, err
		}
		id = ""
		if len(info.Parents) > 0 {
			id = info.Parents[0].String()
		}
	}
	return chain, nil
}

// blobsAt answers each "<commit>:<path>" from loose objects where it can, and asks one
// cat-file --batch for the others (catFile).
func (g *goGitStore) blobsAt(ctx context.Context, specs []string) ([]Blob, error) {
	return catFileBatch(ctx, g.cli.r, specs)
}

// treeEntry finds name in a tree's content ("<mode> <name>\0<raw id>" per entry):
// its mode and hex id. ok is false when the tree does not parse.
func treeEntry(tree []byte, name string) (mode, id string, found, ok bool) {
	for len(tree) > 0 {
		sp := bytes.IndexByte(tree, ' ')
		nul := bytes.IndexByte(tree, 0)
		if sp < 0 || nul < sp || len(tree) < nul+1+sha1.Size {
			return "", "", false, false
		}
		if string(tree[sp+1:nul]) == name {
			return string(tree[:sp]), hex.EncodeToString(tree[nul+1 : nul+1+sha1.Size]), true, true
		}
		tree = tree[nul+1+sha1.Size:]
	}
	return "", "", false, true
}

// parseCommit reads a commit's tree and parents from its content; an id that is none
// is an error naming it.
func parseCommit(id string, data []byte) (CommitInfo, error) {
	var info CommitInfo
	var err error
	if info.ID, err = ParseOID(id); err != nil {
		return CommitInfo{}, fmt.Errorf("read %q: not an object id", id)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "tree "); ok {
			if info.Tree, err = ParseOID(v); err != nil {
				return CommitInfo{}, fmt.Errorf("read commit %s: its tree %q is not an object id", id, v)
			}
		} else if v, ok := strings.CutPrefix(line, "parent "); ok {
			p, err := ParseOID(v)
			if err != nil {
				return CommitInfo{}, fmt.Errorf("read commit %s: its parent %q is not an object id", id, v)
			}
			info.Parents = append(info.Parents, p)
		}
	}
	if info.Tree.IsZero() {
		return CommitInfo{}, fmt.Errorf("read commit %s: it names no tree", id)
	}
	return info, nil
}

func (g *goGitStore) writeBlob(_ context.Context, data []byte) (string, error) {
	return g.write(plumbing.BlobObject, data)
}

func (g *goGitStore) writeTree(_ context.Context, entries []TreeEntry) (string, error) {
	data, err := encodeTree(entries)
	if err != nil {
		return "", err
	}
	return g.write(plumbing.TreeObject, data)
}

func (g *goGitStore) writeCommit(_ context.Context, tree string, parents []string, msg string) (string, error) {
	return g.write(plumbing.CommitObject, encodeCommit(tree, parents, msg, time.Now()))
}

// write stores one object of type t durably, by git-atlas's own loose writer
// (loose.go): go-git names an object before flushing it and keeps a torn one.
func (g *goGitStore) write(t plumbing.ObjectType, data []byte) (string, error) {
	return looseWriter{objects: filepath.Join(g.dir, "objects")}.write(t.String(), data)
}

// encodeTree is the body of a flat tree of regular files, as `git mktree` writes it:
// "100644 <name>\0<raw id>" per entry, in name order.
func encodeTree(entries []TreeEntry) ([]byte, error) {
	var b bytes.Buffer
	for _, e := range sortedEntries(entries) {
		id, err := hex.DecodeString(e.Blob)
		if err != nil || len(id) != sha1.Size {
			return nil, fmt.Errorf("tree entry %s: bad blob id %q", e.Name, e.Blob)
		}
		b.WriteString("100644 " + e.Name + "\x00")
		b.Write(id)
	}
	return b.Bytes(), nil
}

// encodeCommit is the body of a commit authored and committed by git-atlas at when,
// as `git commit-tree` writes it.
func encodeCommit(tree string, parents []string, msg string, when time.Time) []byte {
	var b bytes.Buffer
	b.WriteString("tree " + tree + "\n")
	for _, p := range parents {
		b.WriteString("parent " + p + "\n")
	}
	sig := fmt.Sprintf("%s <%s> %d %s", ledgerName, ledgerEmail, when.Unix(), when.Format("-0700"))
	b.WriteString("author " + sig + "\ncommitter " + sig + "\n\n" + msg)
	return b.Bytes()
}

func sortedEntries(entries []TreeEntry) []TreeEntry {
	s := append([]TreeEntry(nil), entries...)
	sort.Slice(s, func(i, j int) bool { return s[i].Name < s[j].Name })
	return s
}

// cliStore does the same through git itself, for repositories go-git cannot open.
type cliStore struct{ r *Repository }

func (c *cliStore) readRef(ctx context.Context, name string) (string, error) {
	out, err := c.r.git(ctx, "for-each-ref", "--format=%(refname) %(objectname)", name)
	if err != nil {
		return "", fmt.Errorf("read ref %s: %w", name, err)
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		if n, id, ok := strings.Cut(line, " "); ok && n == name {
			return id, nil
		}
	}
	return "", nil
}

func (c *cliStore) commit(ctx context.Context, id string) (CommitInfo, error) {
	if strings.HasPrefix(id, "-") || strings.ContainsAny(id, " \t\n") {
		return CommitInfo{}, fmt.Errorf("read %q: not an object id", id)
	}
	var o batchObject
	if err := catFile(ctx, c.r, []string{id}, func(_ int, b batchObject) { o = b }); err != nil {
		return CommitInfo{}, fmt.Errorf("read %s: %w", id, err)
	}
	if o.missing {
		return CommitInfo{}, fmt.Errorf("read %s: %w", id, ErrNotFoundObject)
	}
	if o.typ != "commit" {
		return CommitInfo{}, fmt.Errorf("read %s: %w (a %s)", id, ErrNotCommit, o.typ)
	}
	return parseCommit(id, o.data)
}

// firstParents is one rev-list, not two cat-files per commit: a 3,000-event log
// would otherwise fork 6,000 times.
func (c *cliStore) firstParents(ctx context.Context, tip string) ([]string, error) {
	if strings.HasPrefix(tip, "-") {
		return nil, fmt.Errorf("walk %q: not an object id", tip)
	}
	out, err := c.r.git(ctx, "rev-list", "--first-parent", "--end-of-options", tip)
	if err != nil {
		return nil, fmt.Errorf("walk %s: %w", tip, err)
	}
	return strings.Fields(string(out)), nil
}

// blobsAt asks one `git cat-file --batch` for every spec: one fork for any number.
func (c *cliStore) blobsAt(ctx context.Context, specs []string) ([]Blob, error) {
	return catFileBatch(ctx, c.r, specs)
}

func catFileBatch(ctx context.Context, r *Repository, specs []string) ([]Blob, error) {
	out := make([]Blob, len(specs))
	err := catFile(ctx, r, specs, func(i int, o batchObject) {
		out[i] = o.blob(specs[i])
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// catFile answers every spec as `git cat-file --batch` does and calls fn with each
// answer, in order: loose objects read in process where go-git opens the repository
// (localread.go), the rest from git (catFileGit).
func catFile(ctx context.Context, r *Repository, specs []string, fn func(i int, o batchObject)) error {
	if len(specs) == 0 {
		return nil
	}
	if g, ok := r.objects.(*goGitStore); ok {
		return g.catFileLocal(ctx, r, specs, fn)
	}
	return catFileGit(ctx, r, specs, fn)
}

// catFileGit asks git for every spec and calls fn with each answer, in order, as it
// arrives: through the long-lived reader when r keeps one and it is free (batch.go),
// else one `git cat-file --batch` for the call.
func catFileGit(ctx context.Context, r *Repository, specs []string, fn func(i int, o batchObject)) error {
	if len(specs) == 0 {
		return nil
	}
	if b := r.shared(); b != nil {
		defer b.mu.Unlock()
		return b.request(ctx, r, "contents", specs, fn)
	}
	return oneBatch(ctx, r, "--batch", specs, fn, readBatchObject)
}

// oneBatch is one `git cat-file <mode> --buffer` (--batch or --batch-check) for
// specs. All input is written at once, so --buffer (no flush after every object, no
// context switch per answer) cannot stall a reader.
func oneBatch(ctx context.Context, r *Repository, mode string, specs []string, fn func(i int, o batchObject), read func(*bufio.Reader) (batchObject, error)) error {
	x := command(ctx, r.CommonDir, nil, "cat-file", mode, "--buffer")
	var in bytes.Buffer
	for _, s := range specs {
		in.WriteString(s)
		in.WriteByte('\n')
	}
	x.Stdin = &in
	stdout, err := x.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	x.Stderr = &stderr
	if err := x.Start(); err != nil {
		return err
	}
	br := bufio.NewReaderSize(stdout, 64<<10)
	for i := range specs {
		o, err := read(br)
		if err != nil {
			_ = x.Wait()
			return fmt.Errorf("cat-file %s: %w: %s", mode, err, stderr.String())
		}
		fn(i, o)
	}
	if err := x.Wait(); err != nil {
		return fmt.Errorf("cat-file %s: %w: %s", mode, err, stderr.String())
	}
	return nil
}

func (c *cliStore) writeBlob(ctx context.Context, data []byte) (string, error) {
	return c.r.writeObject(func() ([]byte, error) { return c.r.gitInput(ctx, data, "hash-object", "-w", "--stdin") })
}

// writeObject runs a git process that writes one object and prints its id, durably
// (objectsWritten); a torn loose object of that id, which git only freshens, is
// removed and the object written again.
func (r *Repository) writeObject(run func() ([]byte, error)) (string, error) {
	for try := 0; ; try++ {
		start := time.Now()
		out, err := run()
		if err := r.objectsWritten(start, err); err != nil {
			return "", err
		}
		id := strings.TrimSpace(string(out))
		if try == 1 || !r.repairLoose(id) {
			return id, nil
		}
	}
}

func (c *cliStore) writeTree(ctx context.Context, entries []TreeEntry) (string, error) {
	var in bytes.Buffer
	for _, e := range sortedEntries(entries) {
		fmt.Fprintf(&in, "100644 blob %s\t%s\x00", e.Blob, e.Name)
	}
	return c.r.writeObject(func() ([]byte, error) { return c.r.gitInput(ctx, in.Bytes(), "mktree", "-z") })
}

func (c *cliStore) writeCommit(ctx context.Context, tree string, parents []string, msg string) (string, error) {
	args := []string{"commit-tree", tree}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	x := cmd{dir: c.r.CommonDir, args: args, stdin: []byte(msg), env: []string{
		"GIT_AUTHOR_NAME=" + ledgerName, "GIT_AUTHOR_EMAIL=" + ledgerEmail,
		"GIT_COMMITTER_NAME=" + ledgerName, "GIT_COMMITTER_EMAIL=" + ledgerEmail,
	}}
	return c.r.writeObject(func() ([]byte, error) { return x.run(ctx) })
}
