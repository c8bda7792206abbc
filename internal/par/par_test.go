package par

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Each runs every index once, never more than limit at a time, and keeps each error
// at its index; Join lists them in input order.
func TestEach(t *testing.T) {
	t.Parallel()
	const n, limit = 50, 3
	var running, most atomic.Int32
	seen := make([]int, n)
	errs := Each(n, limit, func(i int) error {
		defer enter(&running, &most)()
		seen[i]++
		if i%10 == 3 {
			return errors.New("fail " + string(rune('a'+i/10)))
		}
		return nil
	})
	for i, c := range seen {
		if c != 1 {
			t.Errorf("index %d ran %d times", i, c)
		}
	}
	if m := most.Load(); m > limit {
		t.Errorf("%d ran at once, limit %d", m, limit)
	}
	for i, e := range errs {
		if (e != nil) != (i%10 == 3) {
			t.Errorf("errs[%d] = %v", i, e)
		}
	}
	msg := Join(errs).Error()
	if !strings.Contains(msg, "5 errors") || strings.Index(msg, "fail a") > strings.Index(msg, "fail e") {
		t.Errorf("Join = %q: want the five in input order", msg)
	}
	if Join(make([]error, 3)) != nil || Join(nil) != nil {
		t.Error("Join of no errors is not nil")
	}
}

// Walk runs every root and every item added on the way exactly once, never more than
// limit at a time, and returns only when all of them have run.
func TestWalk(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{1, 2, 5} {
		// A tree of depth 4 with fan-out 3 below each of 2 roots: 2*(1+3+9+27) items.
		const depth, fan = 4, 3
		var ran, running, most atomic.Int32
		type item struct{ level, id int }
		seen := map[item]int{}
		var mu sync.Mutex
		Walk(limit, []item{{0, 0}, {0, 1}}, func(it item, add func(item)) {
			defer enter(&running, &most)()
			ran.Add(1)
			mu.Lock()
			seen[it]++
			mu.Unlock()
			if it.level+1 < depth {
				for c := range fan {
					add(item{it.level + 1, it.id*fan + c})
				}
			}
		})
		if want := int32(2 * (1 + 3 + 9 + 27)); ran.Load() != want || len(seen) != int(want) {
			t.Errorf("limit %d: %d ran, %d distinct, want %d", limit, ran.Load(), len(seen), want)
		}
		for it, n := range seen {
			if n != 1 {
				t.Errorf("limit %d: %v ran %d times", limit, it, n)
			}
		}
		if m := most.Load(); m > int32(limit) {
			t.Errorf("limit %d: %d ran at once", limit, m)
		}
	}
	Walk(3, nil, func(int, func(int)) { t.Error("ran with no items") })
}

// enter counts one more call running and keeps in most the most seen at once; the
// function it returns counts the call out.
func enter(running, most *atomic.Int32) func() {
	now := running.Add(1)
	for {
		m := most.Load()
		if now <= m || most.CompareAndSwap(m, now) {
			break
		}
	}
	return func() { running.Add(-1) }
}
