// Command listfixture fills a repository with ledger runs for bench/list.sh and
// bench/resume.sh: RUNS runs of EVENTS events each, byte-for-byte the documents
// git-atlas writes (the gitstate encoders), streamed through one `git fast-import`
// (0.2 ms a commit instead of a durable write each).
//
//	go run ./bench/listfixture [-finished-every K] [-driver] [-no-summary] REPO [RUNS [EVENTS]]
//
// Every run is left running with no driver lease (interrupted, as a killed agent
// leaves it) unless -finished-every K finishes every K-th run (`git atlas finish
// --status completed`) or -driver gives the running ones an expired driver lease.
// -no-summary leaves the summary line out of every message, as in a ledger written
// before git-atlas kept one: listing then reads the documents.
package main

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/gitid"
	"github.com/git-atlas/git-atlas/ledger"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "listfixture:", err)
		os.Exit(1)
	}
}

// Fixture options.
var (
	finishedEvery int  // every k-th run (k > 0) ends completed
	expiredDriver bool // running runs carry a driver lease that has expired
	noSummary     bool // messages without the summary line, as before git-atlas wrote one
)

func run(args []string) error {
	fs := flag.NewFlagSet("listfixture", flag.ContinueOnError)
	fs.IntVar(&finishedEvery, "finished-every", 0, "finish every `K`-th run (status completed); 0: none")
	fs.BoolVar(&expiredDriver, "driver", false, "give the running runs a driver lease that expired")
	fs.BoolVar(&noSummary, "no-summary", false, "write ledger messages without the summary line (older ledgers)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	args = fs.Args()
	if len(args) < 1 {
		return fmt.Errorf("usage: listfixture [-finished-every K] [-driver] [-no-summary] REPO [RUNS [EVENTS]]")
	}
	repo, runs, events := args[0], 1000, 50
	var err error
	if len(args) > 1 {
		if runs, err = strconv.Atoi(args[1]); err != nil {
			return err
		}
	}
	if len(args) > 2 {
		if events, err = strconv.Atoi(args[2]); err != nil {
			return err
		}
	}
	out, err := exec.Command("git", "-C", repo, "rev-parse", "HEAD").Output()
	if err != nil {
		return fmt.Errorf("rev-parse HEAD: %w", err)
	}
	head, err := gitid.ParseOID(strings.TrimSpace(string(out)))
	if err != nil {
		return fmt.Errorf("rev-parse HEAD: %w", err)
	}

	fi := exec.Command("git", "-C", repo, "fast-import", "--quiet", "--done")
	fi.Stdout, fi.Stderr = os.Stderr, os.Stderr
	pipe, err := fi.StdinPipe()
	if err != nil {
		return err
	}
	if err := fi.Start(); err != nil {
		return err
	}
	w := bufio.NewWriterSize(pipe, 1<<20)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mark := 0
	for i := 0; i < runs; i++ {
		if err := writeRun(w, &mark, i, events, head, start.Add(time.Duration(i)*time.Minute)); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "done")
	if err := w.Flush(); err != nil {
		return err
	}
	pipe.Close()
	return fi.Wait()
}

// writeRun streams one run: run.json once (one blob for the chain), then a commit per
// event, each with the state after it, as `start`, `transition` and `event` make them.
func writeRun(w *bufio.Writer, mark *int, i, events int, head gitid.OID, t0 time.Time) error {
	id := fmt.Sprintf("%s-%06x", t0.Format("20060102T150405Z"), i)
	stages := []ledger.StageDef{{Name: "plan", MaxRetries: 2}, {Name: "code", MaxRetries: 2, Scope: []string{"src/**"}}, {Name: "check", MaxRetries: 2, Verify: "go test ./...", VerifySafe: true, Gate: "human", ReworkTo: "code"}}
	h := ledger.Header{Schema: ledger.Schema, RunID: id, Kind: ledger.KindSingle, CreatedAt: ledger.Stamp(t0),
		Intent: "benchmark run " + id, Criteria: []string{"tests pass", "no new dependencies"}, Baseline: head, Stages: stages, Session: "bench-session"}
	st := ledger.State{Schema: ledger.Schema, RunID: id, Status: ledger.RunRunning}
	for _, d := range stages {
		st.Stages = append(st.Stages, ledger.StageState{Name: d.Name, Status: ledger.StagePending})
	}
	hb, err := gitstate.MarshalHeader(&h)
	if err != nil {
		return err
	}
	*mark++
	runMark := *mark
	fmt.Fprintf(w, "blob\nmark :%d\ndata %d\n%s\n\n", runMark, len(hb)+1, hb)
	r := &ledger.Run{Header: h, State: st}
	// The stage walk: plan and code dispatched, passed, completed; then check
	// dispatched; notes in between.
	walk := [][2]string{{"plan", "dispatched"}, {"plan", "passed"}, {"plan", "completed"}, {"code", "dispatched"}, {"code", "passed"}, {"code", "completed"}, {"check", "dispatched"}}
	finished := finishedEvery > 0 && i%finishedEvery == finishedEvery-1
	next := 0
	for n := 1; n <= events; n++ {
		at := t0.Add(time.Duration(n) * time.Second)
		about := ledger.About{Time: ledger.Stamp(at)}
		var ev ledger.Event
		switch {
		case n == 1:
			ev = ledger.RunStartedEvent(about, ledger.RunStartedData{Baseline: head})
			if expiredDriver {
				r.State.Driver = &ledger.Lease{Holder: "agent-" + id, ExpiresAt: ledger.Stamp(at.Add(10 * time.Minute))}
			}
		case n == events && finished: // as `git atlas finish --status completed`
			from := r.State.Status
			r.State.Status, r.State.Driver = ledger.RunCompleted, nil
			ev = ledger.RunFinishedEvent(about, ledger.RunFinishedData{From: from, Status: r.State.Status})
		case next < len(walk) && n%2 == 0:
			step := walk[next]
			next++
			_, s, _ := r.Stage(step[0])
			from := s.Status
			if err := ledger.ApplyStageTransition(r, step[0], step[1], "", head, ledger.Stamp(at), ledger.RandomNonce()); err != nil {
				return err
			}
			about.Stage = step[0]
			ev = ledger.StageTransitionEvent(about, ledger.StageTransitionData{From: from, To: step[1]})
		default:
			ev = ledger.UserEvent(about, ledger.EventNote, json.RawMessage(fmt.Sprintf(`{"msg":"progress","n":%d}`, n)))
		}
		r.State.Seq, r.State.UpdatedAt = n, ledger.Stamp(at)
		ev.Schema, ev.Seq, ev.Epoch = ledger.Schema, n, r.State.Epoch
		sb, err := gitstate.MarshalState(&r.State)
		if err != nil {
			return err
		}
		eb, err := gitstate.MarshalEvent(&ev)
		if err != nil {
			return err
		}
		// The message names the commit's tree (the summary line `list` reads), which
		// fast-import computes only later: hash it here as git will.
		tree := treeID(hb, sb, eb)
		msg, err := gitstate.LedgerMessage(r, &ev, tree)
		if err != nil {
			return err
		}
		if noSummary {
			msg, _, _ = strings.Cut(msg, "\n")
			msg += "\n"
		}
		fmt.Fprintf(w, "commit %s%s\ncommitter git-atlas <git-atlas@localhost> %d +0000\ndata %d\n%s", gitstate.RunsPrefix, id, at.Unix(), len(msg), msg)
		fmt.Fprintf(w, "M 100644 :%d run.json\n", runMark)
		fmt.Fprintf(w, "M 100644 inline state.json\ndata %d\n%s\n", len(sb)+1, sb)
		fmt.Fprintf(w, "M 100644 inline event.json\ndata %d\n%s\n\n", len(eb)+1, eb)
	}
	fmt.Fprintf(w, "reset %s\nfrom %s\n\n", gitstate.PinRef(id, "baseline"), head)
	return nil
}

// treeID is the id of the ledger tree holding the documents (each written with the
// newline that ends every document), as git computes it in a sha1 repository.
func treeID(header, state, event []byte) string {
	var tree bytes.Buffer
	for _, e := range []struct {
		name string
		doc  []byte
	}{{"event.json", event}, {"run.json", header}, {"state.json", state}} { // git's order
		id := objectID("blob", append(slices.Clip(e.doc), '\n'))
		tree.WriteString("100644 " + e.name + "\x00")
		tree.Write(id[:])
	}
	id := objectID("tree", tree.Bytes())
	return hex.EncodeToString(id[:])
}

func objectID(kind string, data []byte) [sha1.Size]byte {
	return sha1.Sum(append([]byte(fmt.Sprintf("%s %d\x00", kind, len(data))), data...))
}
