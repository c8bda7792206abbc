package gitatlas_test

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/testenv"
)

// fixtureTemplate is the user's repository buildFixture made once for the whole test
// binary; cleaningUp removes it.
var fixtureTemplate struct {
	once sync.Once
	dir  string // holds repo
	err  error
}

// makeFixture creates the user's repository at repo (see buildFixture): a copy of the
// one built for the first caller, its index refreshed, since the copy's files have
// other inodes and change times than the index recorded. What a test sees is what a
// fresh build gives: the same commits (identity and dates are pinned), index entries,
// files, modes and modification times, and a clean stat cache, so that no git command
// of the test has the index to rewrite. No git process (restat refreshes the index)
// instead of seven: the fixture is made for every transcript.
func makeFixture(repo string, vars []string) error {
	fixtureTemplate.once.Do(func() {
		dir, err := os.MkdirTemp("", "atlas-fixture-")
		if err != nil {
			fixtureTemplate.err = err
			return
		}
		fixtureTemplate.dir = dir
		fixtureTemplate.err = buildFixture(filepath.Join(dir, "repo"), vars)
	})
	if fixtureTemplate.err != nil {
		return fixtureTemplate.err
	}
	if err := testenv.CopyTree(repo, filepath.Join(fixtureTemplate.dir, "repo")); err != nil {
		return err
	}
	tmpl := filepath.Join(fixtureTemplate.dir, "repo")
	if ok, err := restat(repo, tmpl); err != nil || ok {
		return err
	}
	_, err := gitCmd(repo, append(os.Environ(), vars...), "", "update-index", "-q", "--refresh")
	return err
}

// restat refreshes the index of repo, a copy of tmpl made by testenv.CopyTree, as
// `git update-index --refresh` would, without starting it: every entry the template's
// index holds stat-clean (its stat data is the template file's) gets the copy's stat
// data (change time, inode and device differ; mtime, size and mode were copied), the
// others are left as they are, and the checksum is written anew. It reports false,
// having written nothing, when the index is not one it reads (a version but 2 or 3, an
// entry clean by content whose stat data is stale): git refreshes it then.
func restat(repo, tmpl string) (bool, error) {
	data, err := os.ReadFile(filepath.Join(tmpl, ".git", "index"))
	if err != nil {
		return false, err
	}
	if len(data) < 12+sha1.Size || string(data[:4]) != "DIRC" {
		return false, nil
	}
	version, n := binary.BigEndian.Uint32(data[4:]), int(binary.BigEndian.Uint32(data[8:]))
	if version != 2 && version != 3 {
		return false, nil
	}
	off := 12
	for range n {
		if off+62 > len(data) {
			return false, nil
		}
		e := data[off:]
		flags := binary.BigEndian.Uint16(e[60:])
		head := 62
		if flags&0x4000 != 0 {
			head += 2 // extended flags (version 3)
		}
		end := bytes.IndexByte(data[off+head:], 0)
		if end < 0 {
			return false, nil
		}
		name := string(data[off+head : off+head+end])
		size := (head + end + 8) &^ 7 // the name's NUL, padded to a multiple of 8
		var was, now syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(tmpl, filepath.FromSlash(name)), &was); err != nil {
			return false, nil
		}
		if err := syscall.Lstat(filepath.Join(repo, filepath.FromSlash(name)), &now); err != nil {
			return false, nil
		}
		if slices.Equal(e[:40], statData(&was)) {
			copy(e[:40], statData(&now))
		} else if content, err := os.ReadFile(filepath.Join(tmpl, filepath.FromSlash(name))); err != nil || blobID(content) == [sha1.Size]byte(e[40:60]) {
			return false, nil // clean by content, stale by stat: git knows what to do
		}
		off += size
	}
	sum := sha1.Sum(data[:len(data)-sha1.Size])
	copy(data[len(data)-sha1.Size:], sum[:])
	index := filepath.Join(repo, ".git", "index")
	if err := os.WriteFile(index, data, 0o644); err != nil {
		return false, err
	}
	now := time.Now() // as git writes it: later than every file, so no entry is racily clean
	return true, os.Chtimes(index, now, now)
}

// statData is the first 40 bytes of an index entry for st: change and modification
// times, device, inode, mode, owner, group and size, each 32 bits, big-endian.
func statData(st *syscall.Stat_t) []byte {
	b := make([]byte, 0, 40)
	for _, v := range []uint64{uint64(st.Ctim.Sec), uint64(st.Ctim.Nsec), uint64(st.Mtim.Sec), uint64(st.Mtim.Nsec),
		st.Dev, st.Ino, uint64(gitMode(st.Mode)), uint64(st.Uid), uint64(st.Gid), uint64(st.Size)} {
		b = binary.BigEndian.AppendUint32(b, uint32(v))
	}
	return b
}

// gitMode is the mode git records for a file of mode m: a link, or a regular file
// executable or not.
func gitMode(m uint32) uint32 {
	switch {
	case m&syscall.S_IFMT == syscall.S_IFLNK:
		return 0o120000
	case m&0o100 != 0:
		return 0o100755
	default:
		return 0o100644
	}
}

// blobID is git's SHA-1 object id of a blob holding content.
func blobID(content []byte) [sha1.Size]byte {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write(content)
	return [sha1.Size]byte(h.Sum(nil))
}

// TestFixtureIndexRefreshed: the copy's index, refreshed without git (restat), is one
// git has nothing to refresh in: `git update-index --refresh` leaves its bytes as they
// are, and git status lists exactly the fixture's three changes.
func TestFixtureIndexRefreshed(t *testing.T) {
	work := t.TempDir()
	home := filepath.Join(work, "home")
	if err := testenv.Home(home); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), gitEnv(home)...)
	repo := filepath.Join(work, "repo")
	if err := makeFixture(repo, gitEnv(home)); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(repo); err != nil {
		t.Fatal(err)
	}
	if err := testenv.CopyTree(repo, filepath.Join(fixtureTemplate.dir, "repo")); err != nil {
		t.Fatal(err)
	}
	if ok, err := restat(repo, filepath.Join(fixtureTemplate.dir, "repo")); err != nil || !ok {
		t.Fatalf("restat: %v, %v: git would refresh the index", ok, err)
	}
	index := filepath.Join(repo, ".git", "index")
	before, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	mustGit(t, repo, env, "", "update-index", "-q", "--refresh")
	if after, err := os.ReadFile(index); err != nil || !bytes.Equal(after, before) {
		t.Errorf("git refreshed the index restat wrote (%v)", err)
	}
	if st, err := gitCmd(repo, env, "", "status", "--porcelain"); err != nil || string(st) != " M README\nM  src/a.go\n?? notes.txt\n" {
		t.Errorf("git status: %v\n%s", err, st)
	}
}
