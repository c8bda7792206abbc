package gitatlas_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestTakeOverRace: 8 processes race `heartbeat --take-over` on one run driven by
// agent-a. A take-over replaces the driver the command saw: whoever finds another
// one at its write loses with exit 3 and writes nothing. At the end exactly one holder
// drives; the ledger's driver_taken_over events form one chain (each replaces the
// previous one's new driver, the first agent-a), one per winner, and the last one's
// new driver is the run's driver.
func TestTakeOverRace(t *testing.T) {
	t.Parallel() // its own repository and processes; no package globals, no Setenv
	dir, env := stressRepo(t)
	bin := filepath.Join(atlasBinary(t), "git-atlas") // itself: `git atlas` would start a git only to start it
	atlas := func(args ...string) ([]byte, []byte, int) {
		c := exec.Command(bin, args...)
		c.Dir, c.Env = dir, env
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		code := 0
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.Bytes(), errb.Bytes(), code
	}
	if _, e, code := atlas("start", "--id", "r", "--stages", "code", "--holder", "agent-a", "--session", "sa", "--ttl", "1h"); code != 0 {
		t.Fatalf("start: exit %d: %s", code, e)
	}
	const n = 8
	codes := make([]int, n)
	stderrs := make([][]byte, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, stderrs[i], codes[i] = atlas("heartbeat", "r", "--holder", fmt.Sprintf("h%d", i), "--session", fmt.Sprintf("s%d", i), "--take-over", "--ttl", "1h", "--json")
		})
	}
	wg.Wait()
	winners := map[string]bool{}
	for i, code := range codes {
		switch code {
		case 0:
			winners[fmt.Sprintf("h%d", i)] = true
		case 3:
			var e struct {
				Error struct {
					Kind   string            `json:"kind"`
					Driver map[string]string `json:"driver"`
				} `json:"error"`
			}
			if err := json.Unmarshal(stderrs[i], &e); err != nil || e.Error.Kind != "conflict" || e.Error.Driver["holder"] == "" {
				t.Errorf("loser h%d: %v, error %s: want a conflict naming the driver", i, err, stderrs[i])
			}
		default:
			t.Errorf("h%d: exit %d: %s", i, code, stderrs[i])
		}
	}
	if len(winners) == 0 {
		t.Fatal("no take-over won")
	}
	out, e, code := atlas("log", "r", "--type", "driver_taken_over", "--json")
	if code != 0 {
		t.Fatalf("log: exit %d: %s", code, e)
	}
	var log struct {
		Events []struct {
			Holder string `json:"holder"`
			Data   struct {
				Old struct{ Holder, Session string } `json:"old"`
				New struct{ Holder, Session string } `json:"new"`
			} `json:"data"`
		} `json:"events"`
	}
	if err := json.Unmarshal(out, &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Events) != len(winners) {
		t.Fatalf("%d driver_taken_over events for %d winners (%v)", len(log.Events), len(winners), codes)
	}
	prev := "agent-a"
	for k, ev := range log.Events {
		if ev.Data.Old.Holder != prev || !winners[ev.Data.New.Holder] || ev.Holder != ev.Data.New.Holder {
			t.Fatalf("take-over %d replaced %q with %q (by %q), want %q replaced by a winner", k, ev.Data.Old.Holder, ev.Data.New.Holder, ev.Holder, prev)
		}
		delete(winners, ev.Data.New.Holder) // each winner takes over once
		prev = ev.Data.New.Holder
	}
	out, e, code = atlas("show", "r", "--json")
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, e)
	}
	var show struct {
		Holder string `json:"holder"`
		Live   bool   `json:"live"`
	}
	if err := json.Unmarshal(out, &show); err != nil {
		t.Fatal(err)
	}
	if !show.Live || show.Holder != prev {
		t.Fatalf("driver at the end: %q (live %v), want %q, the last take-over's: %s", show.Holder, show.Live, prev, strings.TrimSpace(string(out)))
	}
}
