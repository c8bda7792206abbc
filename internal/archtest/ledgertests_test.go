package archtest

import (
	"strings"
	"testing"
)

// TestLedgerTestsImportNoGit: the pure ledger is tested without git: neither the
// ledger nor its tests import, however indirectly, the package that runs git
// (internal/git) or go-git. depguard's ledger-imports-no-git rules say which packages
// the ledger's files may import; only this test follows the imports of those packages
// (a test kit that imports git, as internal/testenv does, brings git in one step
// removed).
func TestLedgerTestsImportNoGit(t *testing.T) {
	t.Parallel()
	pkgs := loadModule(t)
	ledger := pkgs[module+"/ledger"]
	via := map[string]string{} // import path -> the importer that brought it in first
	var queue []string
	add := func(path, from string) {
		if _, seen := via[path]; !seen {
			via[path] = from
			queue = append(queue, path)
		}
	}
	for path := range ledger.imports(false) {
		add(path, "the ledger")
	}
	for path := range ledger.imports(true) {
		add(path, "the ledger's tests")
	}
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		if p := pkgs[path]; p != nil {
			for im := range p.imports(false) {
				add(im, path)
			}
		}
	}
	if via["testing"] == "" {
		t.Fatal("the ledger's tests import no testing: the scan is broken")
	}
	for path := range via {
		if path != module+"/internal/git" && !strings.HasPrefix(path, "github.com/go-git/") {
			continue
		}
		chain := []string{short(path)}
		for at := via[path]; ; at = via[at] {
			if pkgs[at] == nil {
				chain = append(chain, at)
				break
			}
			chain = append(chain, short(at))
		}
		t.Errorf("the ledger is tested without git, but it imports %s: %s", short(path), strings.Join(chain, " <- "))
	}
}
