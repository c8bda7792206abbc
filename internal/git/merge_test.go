package git

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseMergeTree(t *testing.T) {
	t.Parallel()
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
			t.Parallel()
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
	t.Parallel()
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
