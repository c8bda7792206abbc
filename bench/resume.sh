#!/usr/bin/env bash
# `git atlas resume --brief` and `resume --plan` against git's own floors
# (bench/results/2026-12-05.md, "## Resume").
#
#   bash bench/resume.sh                         # both parts, default sizes
#   PART=brief RUNS=300 ROUNDS=21 bash bench/resume.sh
#   GIT_ATLAS=/path/to/git-atlas bash bench/resume.sh   # time another build
#   BASE=/path/to/old/git-atlas PART=brief bash bench/resume.sh   # before/after
#
# 1. brief: `git atlas resume --brief` (it runs at every agent session start) in
#    repositories of 0, 10 and RUNS runs (bench/listfixture through one fast-import,
#    then repacked; every FINISHED_EVERY-th run completed, the others running with a
#    driver lease that expired: interrupted), against `git rev-parse HEAD` in the same
#    repository and against the read floor: `for-each-ref refs/atlas/runs` into one
#    `cat-file --batch` of every tip's run.json and state.json. Then bench/briefprobe
#    splits the time in-process: git.Open, ref scan, blob reads, JSON decode.
# 2. plan: `git atlas resume RUN --plan` on a graph run of JOBS jobs and NODES managed
#    worktrees (`git atlas worktree add`) of a FILES-file repository, DIRTY of them
#    dirty, RUNNING jobs claimed with --ttl 1ms (the run is not live), some jobs done;
#    against `git status --porcelain` in each of the NODES worktrees in turn (floor),
#    and `git atlas worktree list RUN` (the same checks, in parallel).
#
# Timing: ROUNDS rounds (after 3 discarded), each running every command of a part once
# in turn, so that the load of a shared machine falls on all alike; medians. hyperfine
# runs one command's batch after another's, which on a loaded machine skews ratios.
# Knobs: PART (all|brief|plan), RUNS (1000), EVENTS (20 per run), FINISHED_EVERY (5),
# JOBS (200), NODES (20), DIRTY (5), RUNNING (10), FILES (2000), ROUNDS (41), GIT_ATLAS,
# BASE (another build whose --brief on RUNS runs is timed in the same rounds).
set -euo pipefail
export LC_ALL=C
PART=${PART:-all}
RUNS=${RUNS:-1000}
EVENTS=${EVENTS:-20}
FINISHED_EVERY=${FINISHED_EVERY:-5}
JOBS=${JOBS:-200}
NODES=${NODES:-20}
DIRTY=${DIRTY:-5}
RUNNING=${RUNNING:-10}
FILES=${FILES:-2000}
ROUNDS=${ROUNDS:-41}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/bin" "$tmp/home"
# Build before HOME moves: the Go caches live under it.
if [ -n "${GIT_ATLAS:-}" ]; then
  cp "$GIT_ATLAS" "$tmp/bin/git-atlas"
else
  go build -C "$root" -o "$tmp/bin/git-atlas" ./cmd/git-atlas
fi
if [ -n "${BASE:-}" ]; then mkdir -p "$tmp/base" && cp "$BASE" "$tmp/base/git-atlas"; fi
go build -C "$root" -o "$tmp/bin/listfixture" ./bench/listfixture
go build -C "$root" -o "$tmp/bin/briefprobe" ./bench/briefprobe
export PATH="$tmp/bin:$PATH"
# No user or system config, no terminal: the same git for both sides, headless.
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" GIT_CONFIG_NOSYSTEM=1 CI=true NO_COLOR=1
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@x GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@x
unset ATLAS_SESSION

# --- timing ---------------------------------------------------------------------------
declare -A samples
usec() { if [ -n "${EPOCHREALTIME:-}" ]; then echo "${EPOCHREALTIME/./}"; else echo $(($(date +%s%N) / 1000)); fi; }
# rounds NAME=FUNCTION...: ROUNDS interleaved rounds of every function, 3 discarded.
rounds() {
  local r pair t0 t1
  for ((r = -3; r < ROUNDS; r++)); do
    for pair in "$@"; do
      t0=$(usec)
      "${pair#*=}" >/dev/null 2>&1 || { echo "${pair#*=} failed" >&2; exit 1; }
      t1=$(usec)
      ((r < 0)) || samples[${pair%%=*}]+="$((t1 - t0)) "
    done
  done
}
ms() { tr ' ' '\n' <<<"${samples[$1]}" | grep . | sort -n | awk '{a[NR] = $1} END {printf "%.1f", a[int((NR + 1) / 2)] / 1000}'; }
ratio() { awk -v a="$(ms "$1")" -v b="$(ms "$2")" 'BEGIN {printf "%.2f", a / b}'; }
row() { printf '  %-52s %8s ms  %s\n' "$1" "$(ms "$2")" "${3:-}"; }

echo "git-atlas resume benchmarks: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(git --version)"

# --- 1. resume --brief -----------------------------------------------------------------
if [ "$PART" = all ] || [ "$PART" = brief ]; then
  for n in 0 10 "$RUNS"; do
    git init -q -b main "$tmp/runs$n"
    git -C "$tmp/runs$n" commit -q --allow-empty -m first
    if [ "$n" -gt 0 ]; then
      t0=$(usec)
      (cd "$tmp/runs$n" && listfixture -finished-every "$FINISHED_EVERY" -driver . "$n" "$EVENTS" && git repack -adfq)
      echo "fixture: $n runs x $EVENTS events, every ${FINISHED_EVERY}th finished, repacked, in $((($(usec) - t0) / 1000)) ms"
    fi
  done
  big=$tmp/runs$RUNS
  interrupted=$((RUNS - RUNS / FINISHED_EVERY))
  git -C "$big" atlas resume --brief | grep -q "^git-atlas: $((interrupted - 3)) more interrupted run" ||
    { echo "resume --brief did not find $interrupted interrupted runs" >&2; exit 1; }
  test -z "$(git -C "$tmp/runs0" atlas resume --brief)"

  revparse() { git -C "$big" rev-parse HEAD; }
  start() { git-atlas --version; }
  dispatch() { git -C "$big" atlas --version; }
  brief0() { git -C "$tmp/runs0" atlas resume --brief; }
  brief10() { git -C "$tmp/runs10" atlas resume --brief; }
  brief() { git -C "$big" atlas resume --brief; }
  briefjson() { git -C "$big" atlas resume --brief --json; }
  floor() {
    git -C "$big" for-each-ref --format='%(objectname):run.json%0a%(objectname):state.json' refs/atlas/runs |
      git -C "$big" cat-file --batch --buffer
  }
  ab=()
  if [ -n "${BASE:-}" ]; then
    direct() { git-atlas -C "$big" resume --brief; }
    base() { "$tmp/base/git-atlas" -C "$big" resume --brief; }
    ab=(direct=direct base=base)
  fi
  rounds revparse=revparse start=start dispatch=dispatch brief0=brief0 brief10=brief10 brief=brief briefjson=briefjson floor=floor "${ab[@]}"
  echo
  echo "resume --brief: median of $ROUNDS interleaved rounds"
  row "git rev-parse HEAD" revparse "1"
  row "git-atlas --version (process start)" start "$(ratio start revparse)x rev-parse"
  row "git atlas --version (through git's dispatch)" dispatch "$(ratio dispatch revparse)x rev-parse"
  row "git atlas resume --brief, 0 runs" brief0 "$(ratio brief0 revparse)x rev-parse"
  row "git atlas resume --brief, 10 runs" brief10 "$(ratio brief10 revparse)x rev-parse"
  row "git atlas resume --brief, $RUNS runs" brief "$(ratio brief revparse)x rev-parse, $(ratio brief floor)x the read floor"
  row "git atlas resume --brief --json, $RUNS runs" briefjson "$(ratio briefjson revparse)x rev-parse"
  row "floor: for-each-ref | cat-file run.json+state.json" floor "$(ratio floor revparse)x rev-parse"
  if [ -n "${BASE:-}" ]; then
    row "git-atlas -C REPO resume --brief, $RUNS runs: BASE" base "1"
    row "git-atlas -C REPO resume --brief, $RUNS runs: this build" direct "$(ratio direct base)x BASE"
  fi
  echo
  briefprobe -n "$ROUNDS" "$big" | sed 's/^/  /'
fi

# --- 2. resume --plan ------------------------------------------------------------------
if [ "$PART" = all ] || [ "$PART" = plan ]; then
  repo=$tmp/graph
  git init -q -b main "$repo"
  # FILES small files in directories of 100, one fast-import commit.
  awk -v n="$FILES" 'BEGIN {
    printf "commit refs/heads/main\ncommitter b <b@x> 1700000000 +0000\ndata 6\nbench\n"
    for (i = 0; i < n; i++) {
      c = sprintf("line %d of a generated file\n", i)
      printf "M 100644 inline d%04d/f%06d.txt\ndata %d\n%s", int(i / 100), i, length(c), c
    }
    printf "\n"
  }' | git -C "$repo" fast-import --quiet
  git -C "$repo" reset -q --hard
  cd "$repo"
  t0=$(usec)
  git atlas start --id g --graph >/dev/null
  # A DAG: the first 40 jobs need nothing, each later one the job 40 before it.
  for i in $(seq 1 "$JOBS"); do
    if ((i > 40)); then git atlas job add g "j$i" --needs "j$((i - 40))" >/dev/null; else git atlas job add g "j$i" >/dev/null; fi
  done
  # Ten jobs done (no worktree), RUNNING jobs claimed by a worker whose leases ran out.
  for i in $(seq 21 30); do
    lease=$(git atlas job claim g --job "j$i" --json | sed -n 's/^  "lease": "\(.*\)",$/\1/p')
    git atlas job done g "j$i" --lease "$lease" --status ok >/dev/null
  done
  for i in $(seq 1 "$RUNNING"); do git atlas job claim g --job "j$i" --holder w --ttl 1ms >/dev/null; done
  # NODES worktrees, for unfinished jobs; DIRTY of them with an edit and a new file.
  wts=()
  for i in $(seq 1 "$NODES"); do
    wts+=("$(git atlas worktree add g "j$i")")
  done
  for ((i = 0; i < DIRTY; i++)); do
    wt=${wts[$((i * NODES / DIRTY))]}
    echo change >>"$wt/d0000/f000000.txt"
    echo new >"$wt/untracked-$i.txt"
  done
  # Settle: a git run in each worktree (as its agent's would) refreshes the index that
  # checkout left racily clean; git atlas never writes an index itself.
  sleep 1
  for wt in "${wts[@]}"; do git -C "$wt" status --porcelain >/dev/null; done
  echo
  echo "fixture: graph run of $JOBS jobs ($RUNNING running, 10 done), $NODES worktrees of $(git ls-files | wc -l) files, $DIRTY dirty, in $((($(usec) - t0) / 1000)) ms"
  git atlas resume g --plan --json >"$tmp/plan.json"
  grep -q '"live": false' "$tmp/plan.json" || { echo "the run is live" >&2; exit 1; }
  test "$(grep -c '"action": "snapshot"' "$tmp/plan.json")" = "$DIRTY" || { echo "plan does not snapshot $DIRTY worktrees" >&2; exit 1; }
  test "$(tr -d ' \n' <"$tmp/plan.json" | sed 's/.*"reset_jobs":\[\([^]]*\)\].*/\1/' | tr ',' '\n' | grep -c j)" = "$RUNNING" ||
    { echo "plan does not reset $RUNNING jobs" >&2; exit 1; }

  plan() { git atlas resume g --plan; }
  status() { local wt; for wt in "${wts[@]}"; do git -C "$wt" status --porcelain; done; }
  # The git processes plan runs for each worktree, one after another.
  planforks() {
    local wt
    for wt in "${wts[@]}"; do
      git -C "$wt" rev-parse HEAD && git -C "$wt" symbolic-ref -q HEAD &&
        git -C "$wt" --no-optional-locks status --porcelain=v2 -z --untracked-files=all --ignore-submodules=none
    done
  }
  wtlist() { git atlas worktree list g; }
  revparse2() { git rev-parse HEAD; }
  rounds plan=plan status=status planforks=planforks wtlist=wtlist revparse2=revparse2
  echo "resume --plan: median of $ROUNDS interleaved rounds"
  row "git status --porcelain in the $NODES worktrees, serially" status "1"
  row "git atlas resume g --plan" plan "$(ratio plan status)x the status floor"
  row "plan's git processes: rev-parse, symbolic-ref, status" planforks "$(ratio planforks status)x the status floor"
  row "git atlas worktree list g (parallel checks)" wtlist "$(ratio wtlist status)x the status floor"
  row "git rev-parse HEAD" revparse2 "$(ratio plan revparse2)x: plan / rev-parse"
fi
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
