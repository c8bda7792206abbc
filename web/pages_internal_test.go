package web

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A page shows at most maxShownData bytes of one event's data, cut on a character
// boundary, and says how many there are; smaller data whole.
func TestShownDataIsBounded(t *testing.T) {
	t.Parallel()
	if got := shownData([]byte(`{"a":1}`)); got != `{"a":1}` {
		t.Errorf("small data: %q", got)
	}
	big := []byte(`{"t":"` + strings.Repeat("é", maxShownData) + `"}`)
	got := shownData(big)
	if len(got) > maxShownData+100 || !utf8.ValidString(got) || !strings.Contains(got, "bytes in all") {
		t.Errorf("big data shown as %d bytes, valid UTF-8 %v: %.80q", len(got), utf8.ValidString(got), got)
	}
}
