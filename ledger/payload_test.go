package ledger

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// DecodeData gives the typed payload and refuses a type whose payload is another.
func TestDecodeData(t *testing.T) {
	t.Parallel()
	ev := JobClaimedEvent(About{Job: "a", Holder: "w"}, JobClaimedData{Lease: "a#1@1.c", Attempt: 1, ExpiresAt: "2026-01-01T00:10:00Z"})
	if ev.Type != EventJobClaimed || ev.Job != "a" || ev.Holder != "w" {
		t.Fatalf("event %+v", ev)
	}
	d, err := DecodeData[JobClaimedData](&ev)
	if err != nil || d.Lease != "a#1@1.c" || d.Attempt != 1 {
		t.Fatalf("DecodeData = %+v, %v", d, err)
	}
	if _, err := DecodeData[JobRenewedData](&ev); err == nil || !strings.Contains(err.Error(), "job_claimed") {
		t.Fatalf("DecodeData of another type = %v", err)
	}
	note := UserEvent(About{}, EventNote, json.RawMessage(`{"anything":[1]}`))
	if p, err := note.Payload(); p != nil || err != nil {
		t.Fatalf("a note's data is the person's own: %v, %v", p, err)
	}
}

// Members a newer git-atlas added to a payload, at the top or in a nested item, are
// kept when it is decoded and written back unchanged.
func TestPayloadKeepsNewerMembers(t *testing.T) {
	t.Parallel()
	data := `{"jobs":[{"attempts":1,"cascaded":[],"id":"a","lease":"a#1@1.c","next":{"n":1},"to":"PENDING"}],"reason":"finish --force","why":"newer"}`
	ev := Event{Type: EventJobReaped, Data: json.RawMessage(data)}
	d, err := DecodeData[JobReapedData](&ev)
	if err != nil {
		t.Fatal(err)
	}
	if string(d.Extra["why"]) != `"newer"` || string(d.Jobs[0].Extra["next"]) != `{"n":1}` {
		t.Fatalf("kept %v and %v", d.Extra, d.Jobs[0].Extra)
	}
	again := JobReapedEvent(About{}, *d)
	if string(again.Data) != data {
		t.Fatalf("written back as %s, want %s", again.Data, data)
	}
	// Through an embedded part too: a member of it is known, not kept twice.
	data = `{"action":"advance","exit_code":3,"later":true,"timed_out":false,"verify_result":"fail"}`
	ev = Event{Type: EventStageResumed, Data: json.RawMessage(data)}
	sr, err := DecodeData[StageResumedData](&ev)
	if err != nil || sr.StageVerified == nil || sr.ExitCode != 3 || len(sr.Extra) != 1 || string(sr.Extra["later"]) != "true" {
		t.Fatalf("stage_resumed = %+v, %v", sr, err)
	}
	if again := StageResumedEvent(About{}, *sr); string(again.Data) != data {
		t.Fatalf("written back as %s, want %s", again.Data, data)
	}
}

// Data of the wrong shape for its type is an error naming the type and the member.
func TestPayloadOfTheWrongShape(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		typ        EventType
		data, want string
	}{
		{EventJobClaimed, `{"attempt":1,"expires_at":"x"}`, "job_claimed data has no lease"},
		{EventJobClaimed, `{"lease":5,"expires_at":"x"}`, "job_claimed data member lease is number, not a string"},
		{EventJobReaped, `{"jobs":[{"id":7}]}`, "job_reaped data member jobs.id is number, not a string"},
		{EventStageTransition, `[1,2]`, "stage_transition data is array, not a JSON object"},
		{EventStageTransition, `{"from":"a","to":"b","verified":"yes"}`, "stage_transition data member verified is string, not true or false"},
		{EventDriverTakenOver, `{"new":{"holder":"b","expires_at":"x"}}`, "driver_taken_over data has no old"},
		{EventWorktreeAdded, ``, "worktree_added data has no branch"},
	} {
		ev := Event{Type: tc.typ, Data: json.RawMessage(tc.data)}
		if _, err := ev.Payload(); err == nil || err.Error() != tc.want {
			t.Errorf("%s %s: %v, want %q", tc.typ, tc.data, err, tc.want)
		}
	}
}

// A payload's members are declared in sorted order of their JSON names, as the maps
// that wrote them before encoded them (and as a payload with kept members encodes):
// only undone and the driver changes keep the order of the structs they came from.
func TestPayloadMembersSorted(t *testing.T) {
	t.Parallel()
	for _, e := range Events() {
		if e.Payload == nil || e.Type == EventUndone || e.Type == EventDriverTakenOver || e.Type == EventDriverRenamed {
			continue
		}
		var names []string
		var walk func(reflect.Type)
		walk = func(t reflect.Type) {
			for f := range t.Fields() {
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				switch {
				case name == "-":
				case f.Anonymous:
					walk(embeddedStruct(f.Type))
				default:
					names = append(names, name)
				}
			}
		}
		walk(e.Payload)
		if !slices.IsSorted(names) {
			t.Errorf("%s: members %v are not sorted", e.Type, names)
		}
	}
}
