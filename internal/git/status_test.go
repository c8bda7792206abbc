package git

import (
	"slices"
	"testing"
)

// TestChangedPaths reads each kind of porcelain v2 record: a path whose file differs
// from the index (ordinary, renamed with the path it came from in the next record,
// unmerged) and an untracked one are named, a staged change alone is not, and a
// record that does not parse gives no list.
func TestChangedPaths(t *testing.T) {
	status := "1 .M N... 100644 100644 100644 1111111111111111111111111111111111111111 1111111111111111111111111111111111111111 edited.txt\x00" +
		"1 M. N... 100644 100644 100644 1111111111111111111111111111111111111111 2222222222222222222222222222222222222222 staged only.txt\x00" +
		"1 .D N... 100644 100644 000000 1111111111111111111111111111111111111111 1111111111111111111111111111111111111111 gone.txt\x00" +
		"2 RM N... 100644 100644 100644 1111111111111111111111111111111111111111 1111111111111111111111111111111111111111 R100 new name.txt\x00old name.txt\x00" +
		"2 R. N... 100644 100644 100644 1111111111111111111111111111111111111111 1111111111111111111111111111111111111111 R100 moved.txt\x00was.txt\x00" +
		"u UU N... 100644 100644 100644 100644 1111111111111111111111111111111111111111 2222222222222222222222222222222222222222 3333333333333333333333333333333333333333 both.txt\x00" +
		"? new dir/file.txt\x00? nested/\x00"
	got, ok := ChangedPaths([]byte(status))
	want := []string{"edited.txt", "gone.txt", "new name.txt", "both.txt", "new dir/file.txt", "nested"}
	if !ok || !slices.Equal(got, want) {
		t.Fatalf("ChangedPaths: %q, %v; want %q", got, ok, want)
	}
	if _, ok := ChangedPaths([]byte("1 .M short\x00")); ok {
		t.Error("a short record parsed")
	}
	if _, ok := ChangedPaths([]byte("x what\x00")); ok {
		t.Error("an unknown record parsed")
	}
}
