package par

import (
	"errors"
	"strings"
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
		now := running.Add(1)
		defer running.Add(-1)
		for {
			m := most.Load()
			if now <= m || most.CompareAndSwap(m, now) {
				break
			}
		}
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
