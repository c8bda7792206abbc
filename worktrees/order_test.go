package worktrees

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
)

func jobs(spec ...string) []gitstate.Job {
	var js []gitstate.Job
	for _, s := range spec {
		id, needs, _ := strings.Cut(s, ":")
		j := gitstate.Job{ID: id, State: gitstate.JobDone}
		if needs != "" {
			j.Needs = strings.Split(needs, ",")
		}
		js = append(js, j)
	}
	return js
}

func TestOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		jobs []gitstate.Job
		want []string
	}{
		{"empty", nil, []string{}},
		{"independent jobs by id", jobs("c", "a", "b"), []string{"a", "b", "c"}},
		{"a need comes first whatever its id", jobs("a:z", "z"), []string{"z", "a"}},
		{"chain", jobs("c:b", "b:a", "a"), []string{"a", "b", "c"}},
		{"ties among ready jobs by id", jobs("m", "z", "a:z"), []string{"m", "z", "a"}},
		{"a newly ready job is ordered with the others", jobs("b", "d", "c:a", "a"), []string{"a", "b", "c", "d"}},
		{"diamond", jobs("top", "l:top", "r:top", "bottom:r,l"), []string{"top", "l", "r", "bottom"}},
		{"needs outside the set are met", jobs("b:gone", "a:b"), []string{"b", "a"}},
		{"a need named twice counts once", jobs("b:a,a", "a"), []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Order(tc.jobs)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Order = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestOrderRefusesCycles(t *testing.T) {
	for _, js := range [][]gitstate.Job{jobs("a:b", "b:a", "c"), jobs("a:a"), jobs("a", "a")} {
		_, err := Order(js)
		if !errors.Is(err, fault.ErrRefused) {
			t.Errorf("Order(%v) = %v, want a refusal", js, err)
		}
	}
	_, err := Order(jobs("x", "a:b", "b:c", "c:a"))
	if err == nil || !strings.Contains(err.Error(), "a, b, c") {
		t.Errorf("the cycle's jobs are named: %v", err)
	}
}

func TestParseMergeTree(t *testing.T) {
	const id = "a19ece61a8348e562ae0dcd818e58974ceef1231"
	for _, tc := range []struct {
		name  string
		out   string
		paths []string
	}{
		{"clean", id + "\x00", nil},
		{"content conflict: three stages of one path", id + "\x00" +
			"100644 78981922613b2afb6025042ff6bd878ac1994e85 1\tf\x00" +
			"100644 da0f8ed91a8f2f0f067b3bdf26265d5ca48cf82c 2\tf\x00" +
			"100644 c1827f07e114c20547dc6a7296588870a4b5b62c 3\tf\x00", []string{"f"}},
		{"several paths, sorted, with spaces and tabs in names", id + "\x00" +
			"100644 c48b5634fe43460805dc0ca67824bbb970dd4b04 2\tz dir/h\tx\x00" +
			"100644 8dc5e9eda0508c10f2b7908a0116dfad764cf128 3\tz dir/h\tx\x00" +
			"100755 8dc5e9eda0508c10f2b7908a0116dfad764cf128 2\ta/b.sh\x00", []string{"a/b.sh", "z dir/h\tx"}},
		{"informational messages after the empty record are not paths", id + "\x00" +
			"100644 78981922613b2afb6025042ff6bd878ac1994e85 2\tf\x00" +
			"\x001\x00f\x00Auto-merging\x00Auto-merging f\n\x00", []string{"f"}},
		{"no trailing NUL", id, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gotTree, paths, err := parseMergeTree([]byte(tc.out))
			if err != nil {
				t.Fatal(err)
			}
			if gotTree != id {
				t.Errorf("tree = %q", gotTree)
			}
			if !reflect.DeepEqual(paths, tc.paths) {
				t.Errorf("paths = %q, want %q", paths, tc.paths)
			}
		})
	}
}

func TestParseMergeTreeRejectsGarbage(t *testing.T) {
	for _, out := range []string{
		"",
		"fatal: not something we can merge\n",
		"a19ece61a8348e562ae0dcd818e58974ceef1231\x00no tab here\x00",
		"a19ece61a8348e562ae0dcd818e58974ceef1231\x00100644 abc\tpath\x00",
		"a19ece61a8348e562ae0dcd818e58974ceef1231\x00100644 abc 1\t\x00",
	} {
		if _, _, err := parseMergeTree([]byte(out)); err == nil {
			t.Errorf("parseMergeTree(%q) accepted it", out)
		}
	}
}

func FuzzParseMergeTree(f *testing.F) {
	f.Add([]byte("a19ece61a8348e562ae0dcd818e58974ceef1231\x00100644 78981922613b2afb6025042ff6bd878ac1994e85 1\tf\x00"))
	f.Add([]byte("a19ece61a8348e562ae0dcd818e58974ceef1231\x00"))
	f.Fuzz(func(t *testing.T, out []byte) {
		tree, paths, err := parseMergeTree(out)
		if err != nil {
			return
		}
		if !isObjectID(tree) {
			t.Fatalf("tree %q is not an object id", tree)
		}
		for i, p := range paths {
			if p == "" || strings.ContainsRune(p, 0) || (i > 0 && paths[i-1] >= p) {
				t.Fatalf("paths %q: empty, with NUL, or not sorted and unique", paths)
			}
		}
	})
}
