package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// templates holds the fixtures CopyTemplate built, in a directory of the home Pin
// made (Pin removes it with the home after the tests).
var templates struct {
	sync.Mutex
	dir   string // "" outside Pin
	built map[string]*template
}

type template struct {
	once sync.Once
	dir  string
	err  error
}

// CopyTemplate makes dst, which must not exist, a copy of the repository build made
// in the directory it is given: built once for the test binary under name (build runs
// the first time a test asks for name; its error fails every test that asks), then
// copied for each caller (CopyTree), its index refreshed by Restat, or where it cannot
// with `git update-index -q --refresh` (the copy's files have other inodes and change times than the index
// recorded; a copy without an index needs none). A fixture a package makes for most of its tests costs one git process
// each this way instead of the several that make it. It needs Pin (the template lives
// in Pin's home, and git runs in Pin's environment).
func CopyTemplate(t testing.TB, dst, name string, build func(dir string) error) {
	t.Helper()
	templates.Lock()
	if templates.dir == "" {
		templates.Unlock()
		t.Fatal("testenv.CopyTemplate needs testenv.Pin in TestMain")
	}
	if templates.built == nil {
		templates.built = map[string]*template{}
	}
	tpl := templates.built[name]
	if tpl == nil {
		tpl = &template{dir: filepath.Join(templates.dir, fmt.Sprint(len(templates.built)), "repo")}
		templates.built[name] = tpl
	}
	templates.Unlock()
	tpl.once.Do(func() {
		if tpl.err = os.MkdirAll(tpl.dir, 0o755); tpl.err == nil {
			tpl.err = build(tpl.dir)
		}
	})
	if tpl.err != nil {
		t.Fatalf("the template %s: %v", name, tpl.err)
	}
	if err := CopyTree(dst, tpl.dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dst, ".git", "index")); os.IsNotExist(err) {
		return // no index (a repository of empty commits): nothing to refresh
	}
	if ok, err := Restat(dst, tpl.dir); err != nil {
		t.Fatal(err)
	} else if ok {
		return
	}
	if _, err := GitErr(dst, "", "update-index", "-q", "--refresh"); err != nil {
		t.Fatal(err)
	}
}
