package gitatlas_test

import (
	"crypto/rand"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// smallDisk mounts a tmpfs of size bytes at a new directory (root only, where mount
// works; skipped otherwise) and unmounts it at the end.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a full disk needs a small file system: mount needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

func randomFile(t *testing.T, path string, n int) {
	t.Helper()
	b := make([]byte, n)
	_, _ = rand.Read(b)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// tmpObjects lists the temporary object files under a git dir's objects/.
func tmpObjects(t *testing.T, gitDir string) []string {
	t.Helper()
	var found []string
	_ = filepath.Walk(filepath.Join(gitDir, "objects"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && strings.HasPrefix(fi.Name(), "tmp_") {
			found = append(found, p)
		}
		return nil
	})
	return found
}

// A worktree removal that runs out of space while snapshotting says so (exit 1, "no
// space left on device"), is not retried as a race nor called a changed worktree,
// leaves the worktree as it was and no temporary object file behind (docs/contract.md §11.12).
func TestFullDiskIsReported(t *testing.T) {
	disk := smallDisk(t, "6m")
	a := newAtlasRepo(t)
	repo := filepath.Join(disk, "repo")
	if out, err := exec.Command("cp", "-a", a.repo, repo).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	a.repo = repo
	a.must(t, "start", "--id", "f", "--stages", "code")
	var rec struct {
		Path string `json:"path"`
	}
	if err := json.Unmarshal(a.must(t, "worktree", "add", "f", "code"), &rec); err != nil {
		t.Fatal(err)
	}
	// Incompressible work that needs ~2 MB of blobs, and a disk filled to ~1 MB free.
	randomFile(t, filepath.Join(rec.Path, "work.bin"), 2<<20)
	var st struct{ free int64 }
	if out, err := exec.Command("df", "-B1", "--output=avail", disk).Output(); err == nil {
		f := strings.Fields(string(out))
		st.free, _ = parseInt(f[len(f)-1])
	}
	if st.free > 1<<20 {
		randomFile(t, filepath.Join(disk, "filler"), int(st.free-(1<<20)))
	}
	before, err := os.ReadFile(filepath.Join(rec.Path, "work.bin"))
	if err != nil {
		t.Fatal(err)
	}
	_, code, stderr := a.run("worktree", "remove", "f", "code")
	if code != 1 || !strings.Contains(strings.ToLower(stderr), "no space left on device") {
		t.Fatalf("worktree remove on a full disk: exit %d, stderr %q; want exit 1 saying no space left on device", code, stderr)
	}
	if strings.Contains(stderr, "changed during the snapshot") {
		t.Fatalf("a full disk was reported as a changed worktree: %q", stderr)
	}
	after, err := os.ReadFile(filepath.Join(rec.Path, "work.bin"))
	if err != nil || string(after) != string(before) {
		t.Fatalf("the worktree's work is not intact after the failed removal: %v", err)
	}
	if left := tmpObjects(t, filepath.Join(repo, ".git")); len(left) > 0 {
		t.Fatalf("temporary object files left behind: %v", left)
	}
}

func parseInt(s string) (int64, error) {
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int64(c-'0')
	}
	return n, nil
}
