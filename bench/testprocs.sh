#!/usr/bin/env bash
# The processes the test suite starts (issue 34): every test binary runs under
# `strace -f` (through `go test -exec`), which records each execve and the forks that
# lead to it; each successful execve is counted for its package and, where its working
# directory, arguments or environment name a test's temporary directory (t.TempDir's
# /tmp/TestName…, testscript's script-NAME), for that test, else for the test that
# started its parent. Prints the processes per package, the top tests and the top
# transcripts. The go command's own builds are not counted; the test binaries and
# everything they start are. Needs strace.
#
#   bash bench/testprocs.sh                         # the README's test command: -race ./...
#   PKGS="./recovery ./ops" bash bench/testprocs.sh
#   RUN='TestScript/(demo|undo)$' PKGS=. bash bench/testprocs.sh
#   RACE=0 TOP=30 KEEP=/tmp/traces bash bench/testprocs.sh
#   TAGS=sweeps RUN='^TestRemoteFleet$' PKGS=. bash bench/testprocs.sh
#
# Knobs: PKGS (packages, default ./...), RUN (a -run filter, default all), SKIP (a
# -skip filter, default TestCrashStates: it runs strace itself, which cannot trace a
# process strace already traces; count it apart, if at all), TIMEOUT (go test's, default
# 60m: under strace every process start is slower), RACE (1: with -race like the
# README's command; 0: without), TOP (rows of the test tables, default 15), KEEP (a
# directory to keep the traces in; default a temporary one, removed),
# REPORT (a directory KEEP filled before: print its report again, run nothing),
# TAGS (go test's -tags; TAGS=sweeps: the sweeps' full sizes). A test that fails is
# reported by go test as usual; the counts are printed either way.
set -euo pipefail
export LC_ALL=C
command -v strace >/dev/null || { echo "bench/testprocs.sh needs strace" >&2; exit 1; }
here=$(cd "$(dirname "$0")/.." && pwd)
PKGS=${PKGS:-./...}
RUN=${RUN:-}
SKIP=${SKIP-TestCrashStates}
TIMEOUT=${TIMEOUT:-60m}
RACE=${RACE:-1}
TOP=${TOP:-15}
if [ -n "${REPORT:-}" ]; then
  traces=$REPORT
elif [ -n "${KEEP:-}" ]; then
  traces=$KEEP
  mkdir -p "$traces"
  rm -f "$traces"/*.trace "$traces"/*.tests
else
  traces=$(mktemp -d)
  trap 'rm -rf "$traces"' EXIT
fi

# The -exec wrapper: go test runs it in the package's directory as `wrapper pkg.test
# ARGS`. It lists the package's top-level tests (to split a temporary directory's name
# into test and subtest), then runs the binary under strace, execve, chdir and the
# forks traced (seccomp-bpf: only those calls stop the tracee).
cat >"$traces/exec.sh" <<'EOF'
#!/bin/sh
rel=${PWD#"$TESTPROCS_ROOT"}
rel=${rel#/}
name=$(printf '%s' "${rel:-_}" | tr / %)   # the root package is _
"$1" -test.list '.*' 2>/dev/null | grep '^Test' >"$TESTPROCS_DIR/$name.tests" || true
exec strace -f -qq --seccomp-bpf -v -s 400 -e signal=none \
  -e trace=execve,chdir,clone,clone3,fork,vfork -o "$TESTPROCS_DIR/$name.trace" "$@"
EOF
chmod +x "$traces/exec.sh"

race=()
[ "$RACE" = 1 ] && race=(-race)
tags=()
[ -n "${TAGS:-}" ] && tags=(-tags "$TAGS")
run=()
[ -n "$RUN" ] && run=(-run "$RUN")
[ -n "$SKIP" ] && run+=(-skip "$SKIP")
start=$(date +%s)
status=0
if [ -z "${REPORT:-}" ]; then
  (cd "$here" && TESTPROCS_ROOT=$here TESTPROCS_DIR=$traces \
    go test "${race[@]}" "${tags[@]}" -count=1 -timeout "$TIMEOUT" "${run[@]}" -exec "$traces/exec.sh" $PKGS) || status=$?
fi
wall=$(( $(date +%s) - start ))

# attribute FILE.trace: prints "package test transcript" for each successful execve.
# A process is its thread group's leader (tgid); a thread's clone maps it to its group.
attribute() {
  local trace=$1 base pkg
  base=$(basename "$trace" .trace)
  pkg=$(printf '%s' "$base" | tr % /)
  [ "$pkg" = _ ] && pkg=.
  awk -v pkg="$pkg" -v tests="$traces/$base.tests" -v dir="$here/$pkg" '
    BEGIN {
      while ((getline t < tests) > 0) known[t] = 1
    }
    function group(p) { return (p in tgid) ? tgid[p] : p }
    # label: the test a string names, or "".
    function label(s,   m, name, best, t, n) {
      if (match(s, /go-test-script[0-9]+\/script-[^\/"]+/)) {
        m = substr(s, RSTART, RLENGTH)
        sub(/.*\/script-/, "", m)
        if ((getline n < (dir "/testdata/golden/" m ".txtar")) >= 0) { close(dir "/testdata/golden/" m ".txtar"); return "TestGolden\t" m }
        return "TestScript\t" m
      }
      if (match(s, /\/Test[^\/"]*\//)) {
        name = substr(s, RSTART + 1, RLENGTH - 2)
        best = ""
        for (t in known) if (index(name, t) == 1 && length(t) > length(best)) best = t
        if (best == "") { best = name; sub(/[0-9]+$/, "", best) }
        return best "\t-"
      }
      return ""
    }
    {
      pid = $1
      line = $0
      if (line ~ /<\.\.\. (clone|clone3|fork|vfork) resumed>/ || line ~ /^[0-9]+ +(clone|clone3|fork|vfork)\(/) {
        if (line ~ /<unfinished \.\.\.>$/) { pendingclone[pid] = line; next }
        full = line
        if (line ~ /resumed>/) full = pendingclone[pid] line
        if (match(line, /= [0-9]+$/)) {
          child = substr(line, RSTART + 2) + 0
          if (full ~ /CLONE_THREAD/) tgid[child] = group(pid)
          else if (group(pid) in lab) lab[child] = lab[group(pid)]
        }
        next
      }
      if (line ~ /^[0-9]+ +chdir\(/) {
        l = label(line)
        if (l != "") lab[group(pid)] = l
        next
      }
      if (line ~ /^[0-9]+ +execve\(/) {
        if (line ~ /<unfinished \.\.\.>$/) { pendingexec[pid] = line; next }
        args = line
      } else if (line ~ /<\.\.\. execve resumed>/) {
        args = pendingexec[pid]
      } else next
      if (line !~ /= 0$/) next
      # An execve that succeeds in a multi-threaded process reports the group leader.
      l = label(args)
      if (l != "") lab[pid] = l
      out = (pid in lab) ? lab[pid] : "(none)\t-"
      print pkg "\t" out
    }
  ' "$trace"
}

counts=$traces/counts
: >"$counts"
for f in "$traces"/*.trace; do
  [ -e "$f" ] || continue
  attribute "$f" >>"$counts"
done

echo "== processes per package (each test binary and everything it started)"
awk -F'\t' '{n[$1]++; t++} END {for (p in n) printf "%8d  %s\n", n[p], p; printf "%8d  total\n", t}' "$counts" | sort -k1,1nr
echo
echo "== top $TOP tests (package test)"
awk -F'\t' '{n[$1 " " $2]++} END {for (k in n) printf "%8d  %s\n", n[k], k}' "$counts" | sort -k1,1nr | head -n "$TOP"
echo
echo "== top $TOP transcripts (TestScript and TestGolden)"
awk -F'\t' '$3 != "-" {n[$2 "/" $3]++} END {for (k in n) printf "%8d  %s\n", n[k], k}' "$counts" | sort -k1,1nr | head -n "$TOP"
echo
echo "wall ${wall}s (under strace; the machine's load included), go test exit $status"
exit "$status"
