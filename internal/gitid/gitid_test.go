package gitid

import (
	"encoding/json"
	"strings"
	"testing"
)

// An OID member decodes only a full object id or "", encodes as the id's text (so a
// document holding one encodes as it did holding a string), and a refused value is
// reported by OIDError with the member's path and the value.
func TestOIDInJSON(t *testing.T) {
	t.Parallel()
	type doc struct {
		Stages []struct {
			Baseline OID `json:"baseline"`
		} `json:"stages"`
		Head OID `json:"head,omitzero"`
	}
	hex := strings.Repeat("ab", 20)
	var d doc
	if err := json.Unmarshal([]byte(`{"stages":[{"baseline":"`+hex+`"},{"baseline":""}]}`), &d); err != nil {
		t.Fatal(err)
	}
	if d.Stages[0].Baseline.String() != hex || !d.Stages[1].Baseline.IsZero() || !d.Head.IsZero() {
		t.Fatalf("decoded %+v", d)
	}
	if b, err := json.Marshal(d); err != nil || string(b) != `{"stages":[{"baseline":"`+hex+`"},{"baseline":""}]}` {
		t.Fatalf("encoded %s, %v", b, err)
	}
	for _, bad := range []string{`"--output=../README"`, `"abc1234"`, `"HEAD~1"`, `"` + strings.ToUpper(hex) + `"`, `7`} {
		err := json.Unmarshal([]byte(`{"stages":[{"baseline":`+bad+`}]}`), &doc{})
		msg, ok := OIDError(err)
		if !ok || !strings.HasPrefix(msg, "stages.baseline ") || !strings.Contains(msg, "is not an object id") {
			t.Errorf("%s: %q, %v (%v)", bad, msg, ok, err)
		}
	}
	if _, ok := OIDError(json.Unmarshal([]byte(`{"stages":1}`), &doc{})); ok {
		t.Error("an error of another member is not an OID's")
	}
}

func TestParseOptional(t *testing.T) {
	t.Parallel()
	if id, err := ParseOptional(""); err != nil || !id.IsZero() {
		t.Fatalf(`ParseOptional("") = %v, %v`, id, err)
	}
	if _, err := ParseOptional("-p"); err == nil {
		t.Fatal("ParseOptional accepted an option")
	}
}
