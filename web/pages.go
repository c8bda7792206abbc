package web

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/git-atlas/git-atlas/internal/confine"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ops"
	"github.com/git-atlas/git-atlas/views"
)

//go:embed assets
var assets embed.FS

// The templates are parsed on the first page served, not when the binary starts:
// every other command pays nothing for them.
var (
	tmplOnce sync.Once
	tmpl     *template.Template
	tmplErr  error
)

func templates() (*template.Template, error) {
	tmplOnce.Do(func() {
		tmpl, tmplErr = template.New("").Funcs(template.FuncMap{
			"age": age, "json": indentJSON,
		}).ParseFS(assets, "assets/*.html")
	})
	return tmpl, tmplErr
}

func (s *Server) routes() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", s.runsPage)
	m.HandleFunc("GET /runs/{id}", s.runPage)
	m.HandleFunc("GET /static/{name}", s.static)
	m.HandleFunc("GET /events", s.events)
	m.HandleFunc("GET /api/runs", s.apiRuns)
	m.HandleFunc("GET /api/runs/{id}", s.apiShow)
	m.HandleFunc("GET /api/runs/{id}/log", s.apiLog)
	m.HandleFunc("GET /api/runs/{id}/graph", s.apiGraph)
	m.HandleFunc("GET /api/runs/{id}/plan", s.apiPlan)
	return m
}

// static serves the embedded style sheet and script.
func (s *Server) static(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	types := map[string]string{"style.css": "text/css; charset=utf-8", "app.js": "text/javascript; charset=utf-8"}
	ct, ok := types[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", ct)
	_, _ = w.Write(b)
}

// status is the HTTP status of an operation's error, by its fault kind.
func status(err error) int {
	switch {
	case errors.Is(err, fault.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, fault.ErrUsage):
		return http.StatusBadRequest
	case errors.Is(err, fault.ErrRefused), errors.Is(err, fault.ErrConflict):
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

// writeJSON writes v as the commands print it with --json: indented, with <, > and &
// as themselves (the document is served as application/json with nosniff, never as
// HTML).
func (s *Server) writeJSON(w http.ResponseWriter, v any, err error) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if err != nil {
		w.WriteHeader(status(err))
		msg, hint := s.errorText(err)
		v = map[string]any{"error": map[string]string{"message": msg, "hint": hint}}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// at is the ?at=SEQ of show --at.
func at(r *http.Request) (*int, error) {
	q := r.URL.Query().Get("at")
	if q == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(q)
	if err != nil || n < 0 {
		return nil, fault.Usage("at must be an event's sequence number, not %q", q)
	}
	return &n, nil
}

func (s *Server) apiRuns(w http.ResponseWriter, r *http.Request) {
	res, err := s.op().List(r.Context(), ops.ListRequest{All: r.URL.Query().Get("all") != "false"})
	s.writeJSON(w, res, err)
}

func (s *Server) apiShow(w http.ResponseWriter, r *http.Request) {
	n, err := at(r)
	if err != nil {
		s.writeJSON(w, nil, err)
		return
	}
	res, err := s.op().Show(r.Context(), ops.ShowRequest{Run: r.PathValue("id"), At: n})
	s.writeJSON(w, res, err)
}

func (s *Server) apiLog(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	last, _ := strconv.Atoi(q.Get("last"))
	res, err := s.op().Log(r.Context(), ops.LogRequest{Run: r.PathValue("id"), Type: q.Get("type"), Stage: q.Get("stage"),
		Last: last, Heartbeats: q.Get("heartbeats") == "true"})
	s.writeJSON(w, res, err)
}

func (s *Server) apiGraph(w http.ResponseWriter, r *http.Request) {
	n, err := at(r)
	if err != nil {
		s.writeJSON(w, nil, err)
		return
	}
	res, err := s.op().Graph(r.Context(), ops.ShowRequest{Run: r.PathValue("id"), At: n})
	s.writeJSON(w, res, err)
}

func (s *Server) apiPlan(w http.ResponseWriter, r *http.Request) {
	res, err := s.op().ResumePlan(r.Context(), ops.ResumeRequest{RunID: r.PathValue("id")})
	s.writeJSON(w, res, err)
}

// render executes the page template name with data.
func (s *Server) render(w http.ResponseWriter, name string, data any) {
	t, err := templates()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, name, data); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

func (s *Server) fail(w http.ResponseWriter, err error) {
	w.WriteHeader(status(err))
	msg, hint := s.errorText(err)
	s.render(w, "error.html", struct{ Title, Message, Hint string }{"error", msg, hint})
}

// runRow is one run of the runs page.
type runRow struct {
	ops.ListItem
	Interrupted bool
	LastEvent   string     // the age of its last event
	Lease       *ops.Lease // the driver lease, live or (an interrupted run's) expired
	LeaseLeft   string     // the driver lease's time left, or how long ago it expired
}

// statuses a filter offers, with "interrupted".
var filterStatuses = []string{"interrupted", "running", "blocked", "stopped", "completed", "failed"}

// runsPage is every run (docs/contract.md §16), interrupted first, then newest first; ?status=
// keeps one status ("interrupted": those a resume would pick up).
func (s *Server) runsPage(w http.ResponseWriter, r *http.Request) {
	res, err := s.op().List(r.Context(), ops.ListRequest{All: true})
	if err != nil {
		s.fail(w, err)
		return
	}
	filter := r.URL.Query().Get("status")
	rows := make([]runRow, 0, len(res.Runs))
	counts := map[string]int{}
	for _, it := range res.Runs {
		row := runRow{ListItem: it, LastEvent: age(it.UpdatedAt, res.Now)}
		if it.Run != nil {
			row.Interrupted = it.Run.Interrupted(res.Now)
			row.Lease = it.Run.State.Driver
		}
		if it.Driver != nil {
			row.Lease = it.Driver
		}
		if row.Lease != nil {
			row.LeaseLeft = left(row.Lease.ExpiresAt, res.Now)
		}
		counts[it.Status]++
		if row.Interrupted {
			counts["interrupted"]++
		}
		if filter != "" && it.Status != filter && (filter != "interrupted" || !row.Interrupted) {
			continue
		}
		rows = append(rows, row)
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Interrupted && !rows[j].Interrupted })
	type filterLink struct {
		Status string
		Count  int
		On     bool
	}
	var links []filterLink
	for _, st := range filterStatuses {
		links = append(links, filterLink{st, counts[st], st == filter})
	}
	s.render(w, "runs.html", struct {
		Title   string
		Runs    []runRow
		Filter  string
		Filters []filterLink
		Total   int
	}{"runs", rows, filter, links, len(res.Runs)})
}

// snapshotView is a snapshot with what it holds and its patch.
type snapshotView struct {
	ops.SnapshotView
	Show  *ops.RecoveryShowResult
	Diff  []diffLine
	Cut   bool
	Error string
}

type diffLine struct{ Class, Text string }

// maxPatch is how much of a patch a page shows.
const maxPatch = 256 << 10

// patch reads a snapshot's patch where git-atlas keeps it (the run and snapshot ids
// are names, confined under the recovery directory) and classifies its lines.
func (s *Server) patch(run, id string) ([]diffLine, bool, error) {
	if err := confine.Name(run); err != nil {
		return nil, false, err
	}
	if err := confine.Name(id); err != nil {
		return nil, false, err
	}
	root, err := confine.New(s.op().RecoveryDir(run))
	if err != nil {
		return nil, false, err
	}
	p, err := root.Join(id + ".patch")
	if err != nil {
		return nil, false, err
	}
	if err := confine.NoSymlink(p); err != nil {
		return nil, false, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	var out []diffLine
	sc := bufio.NewScanner(io.LimitReader(f, maxPatch+1))
	sc.Buffer(make([]byte, 64<<10), maxPatch+1)
	n := 0
	for sc.Scan() {
		t := sc.Text()
		n += len(t) + 1
		if n > maxPatch {
			return out, true, nil
		}
		c := ""
		switch {
		case strings.HasPrefix(t, "diff --git"), strings.HasPrefix(t, "+++"), strings.HasPrefix(t, "---"), strings.HasPrefix(t, "index "):
			c = "meta"
		case strings.HasPrefix(t, "@@"):
			c = "hunk"
		case strings.HasPrefix(t, "+"):
			c = "add"
		case strings.HasPrefix(t, "-"):
			c = "del"
		}
		out = append(out, diffLine{c, t})
	}
	return out, false, sc.Err()
}

// eventRow is one event of the log table.
type eventRow struct {
	ops.Event
	Subject string
	Data    string
}

// maxShownData is how much of one event's data a page shows: a pulled event may hold
// any amount (a write through git-atlas at most ops.MaxEventData), and a run's page
// shows every event.
const maxShownData = 4 << 10

// shownData is an event's data as a page shows it: whole, or its first maxShownData
// bytes (on a character boundary) and how many bytes there are.
func shownData(data []byte) string {
	if len(data) <= maxShownData {
		return string(data)
	}
	cut := maxShownData
	for cut > 0 && !utf8.RuneStart(data[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes in all: `git atlas log` shows them)", data[:cut], len(data))
}

// runPage is one run (docs/contract.md §16): its summary, stages or DAG, driver, attempts,
// budgets, next_action, worktrees, snapshots and events; ?at=SEQ shows the state
// right after that event, ?type= keeps the events of one type.
func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id := r.PathValue("id")
	n, err := at(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	show, err := s.op().Show(ctx, ops.ShowRequest{Run: id, At: n})
	if err != nil {
		s.fail(w, err)
		return
	}
	g, err := s.op().Graph(ctx, ops.ShowRequest{Run: id, At: n})
	if err != nil {
		s.fail(w, err)
		return
	}
	typ := r.URL.Query().Get("type")
	all, err := s.op().Log(ctx, ops.LogRequest{Run: id, Heartbeats: true})
	if err != nil {
		s.fail(w, err)
		return
	}
	var types []string
	for _, e := range all.Kept {
		if !slices.Contains(types, string(e.Type)) {
			types = append(types, string(e.Type))
		}
	}
	sort.Strings(types)
	kept := all.Kept
	if typ != "" {
		lg, err := s.op().Log(ctx, ops.LogRequest{Run: id, Type: typ, Heartbeats: true})
		if err != nil {
			s.fail(w, err)
			return
		}
		kept = lg.Kept
	}
	events := make([]eventRow, 0, len(kept))
	for _, e := range kept {
		subj := e.Stage
		if e.Job != "" {
			subj = e.Job
		}
		events = append(events, eventRow{Event: e, Subject: subj, Data: shownData(e.Data)})
	}
	data := runData{Title: id, Show: show, Graph: g, Events: events, Types: types, Type: typ, At: n, Now: show.Now}
	if g.Kind == ops.KindGraph && len(g.Nodes) > 0 {
		data.SVG = drawDAG(g, show.Run)
	}
	data.Attempts = attempts(show.Run, show.Now)
	for _, sv := range show.Stages {
		row := stageRow{StageView: sv}
		for i := range show.Run.State.Stages {
			if st := &show.Run.State.Stages[i]; st.Name == sv.Name {
				row.Result, row.Reason = st.Verify, st.Reason
			}
		}
		data.Stages = append(data.Stages, row)
	}
	if n == nil {
		s.current(ctx, id, &data)
	}
	s.render(w, "run.html", data)
}

// current fills what only the run as it is has: its plan, worktrees and snapshots.
// Each failing part says so in its place and hides nothing else.
func (s *Server) current(ctx context.Context, id string, data *runData) {
	if p, err := s.op().ResumePlan(ctx, ops.ResumeRequest{RunID: id}); err != nil {
		data.PlanError = err.Error()
	} else {
		data.Plan = p
	}
	if wl, err := s.op().WorktreeList(ctx, ops.WorktreeListRequest{Run: id}); wl != nil {
		data.Worktrees = wl.Worktrees
		if err != nil {
			data.WorktreeError = err.Error()
		}
	} else if err != nil {
		data.WorktreeError = err.Error()
	}
	rl, err := s.op().RecoveryList(ctx, ops.RecoveryListRequest{Run: id})
	if err != nil {
		data.SnapshotError = err.Error()
		return
	}
	for _, sn := range rl.Snapshots {
		v := snapshotView{SnapshotView: sn}
		if sh, err := s.op().RecoveryShow(ctx, ops.RecoveryShowRequest{Snapshot: sn.RunID + "/" + sn.ID}); err != nil {
			v.Error = err.Error()
		} else {
			v.Show = sh
		}
		if d, cut, err := s.patch(sn.RunID, sn.ID); err != nil {
			if v.Error == "" {
				v.Error = "patch: " + err.Error()
			}
		} else {
			v.Diff, v.Cut = d, cut
		}
		data.Snapshots = append(data.Snapshots, v)
	}
}

// runData is what run.html shows.
type runData struct {
	Title         string
	Show          *ops.ShowResult
	Graph         *views.Graph
	SVG           template.HTML
	Attempts      []attemptRow
	Stages        []stageRow
	Plan          *ops.Plan
	PlanError     string
	Worktrees     []ops.WorktreeItem
	WorktreeError string
	Snapshots     []snapshotView
	SnapshotError string
	Events        []eventRow
	Types         []string
	Type          string
	At            *int
	Now           time.Time
}

// stageRow is a stage of the timeline: show's view and its last verify result.
type stageRow struct {
	ops.StageView
	Result *ops.VerifyResult
	Reason string
}

// attemptRow is one attempt of a stage, with its heartbeat's age.
type attemptRow struct {
	Stage     string
	N         int
	Started   string
	Heartbeat string
	Holder    string
	Session   string
	Open      bool
}

// attempts lists the stages' attempts, newest last.
func attempts(r *ops.Run, now time.Time) []attemptRow {
	var out []attemptRow
	if r == nil {
		return out
	}
	for _, st := range r.State.Stages {
		for i, a := range st.Attempts {
			row := attemptRow{Stage: st.Name, N: a.N, Holder: a.Holder, Session: a.Session, Started: age(a.StartedAt, now),
				Heartbeat: age(a.HeartbeatAt, now)}
			row.Open = ops.OpenAttempt(&st) == &st.Attempts[i]
			out = append(out, row)
		}
	}
	return out
}

// age is how long before now stamp was ("" when it is not a time).
func age(stamp string, now time.Time) string {
	t, err := ops.ParseStamp(stamp)
	if err != nil || stamp == "" {
		return ""
	}
	d := now.Sub(t)
	if d < 0 {
		return "in " + short(-d)
	}
	return short(d) + " ago"
}

// left is the time from now to stamp ("expired" when it has passed).
func left(stamp string, now time.Time) string {
	t, err := ops.ParseStamp(stamp)
	if err != nil {
		return ""
	}
	if !now.Before(t) {
		return "expired " + short(now.Sub(t)) + " ago"
	}
	return short(t.Sub(now)) + " left"
}

func short(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + "d"
}

// indentJSON is v as indented JSON text (escaped by the template where it is shown).
func indentJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err.Error()
	}
	return b.String()
}

// errorText is err's message and hint for people: the request fields they name by
// their names, the steps as Options.Step writes them (the command line), else in
// neutral words.
func (s *Server) errorText(err error) (msg, hint string) {
	if s.step == nil {
		return err.Error(), fault.HintOf(err)
	}
	return fault.SpelledBy(err, fault.Spelling{Field: func(f string) string { return f }, Step: s.step})
}
