package worktrees

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
)

func jobs(spec ...string) []ledger.Job {
	var js []ledger.Job
	for _, s := range spec {
		id, needs, _ := strings.Cut(s, ":")
		j := ledger.Job{ID: id, State: ledger.JobDone}
		if needs != "" {
			j.Needs = strings.Split(needs, ",")
		}
		js = append(js, j)
	}
	return js
}

func TestOrder(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		jobs []ledger.Job
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
			t.Parallel()
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
	t.Parallel()
	for _, js := range [][]ledger.Job{jobs("a:b", "b:a", "c"), jobs("a:a"), jobs("a", "a")} {
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
