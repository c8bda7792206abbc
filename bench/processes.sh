#!/usr/bin/env bash
# The processes each command of issue 34's budget table (and `worktree list`, `union`) starts,
# counted as `strace -f` counts execve: git-atlas itself, the git processes it starts and theirs (no verify, no
# setup, no atlas.remote). The count does not depend on the machine, so it is the
# measure; TestProcessBudget (internal/cli) holds git-atlas's own starts to the budget
# in the test suite. Needs strace.
#
#   bash bench/processes.sh
#   BASE=/path/to/old/git-atlas bash bench/processes.sh   # a second column for BASE
#   CLONE=1 bash bench/processes.sh    # in a clone of the repository: its objects packed
set -euo pipefail
export LC_ALL=C
command -v strace >/dev/null || { echo "bench/processes.sh needs strace" >&2; exit 1; }
source "$(dirname "$0")/lib.sh"
export CI=true NO_COLOR=1

# count BIN DIR ARGS...: the execve calls of one command, run in DIR (bench/procs.sh).
count() {
  local bin=$1 dir=$2; shift 2
  (cd "$dir" && bash "$here/bench/procs.sh" "$work/count" "$bin" "$@" >"$work/out" 2>&1) || true
  cat "$work/count"
}

# scenario BIN: prints "name count" for each row, in a fresh repository.
scenario() {
  local bin=$1 repo
  repo=$(mktemp -d "$work/repo.XXXX")
  git -C "$repo" init -q && echo a >"$repo/a" && git -C "$repo" add a && git -C "$repo" commit -qm init
  if [ -n "${CLONE:-}" ]; then # a clone: every object packed, as a user's checkout
    git clone -q "file://$repo" "$repo.clone" && repo=$repo.clone
  fi
  row() { local name=$1; shift; echo "$name $(count "$bin" "$repo" "$@")"; }
  row "--version" --version
  row "resume --brief (no runs)" resume --brief
  "$bin" -C "$repo" start --id r1 --stages a,b --holder h >/dev/null
  row "start" start --id r2 --stages a,b --holder h
  row "show" show r1
  row "list" list
  row "resume --detect" resume --detect
  row "transition" transition r1 a dispatched --holder h
  row "event" event r1 note --holder h
  "$bin" -C "$repo" start --id g1 --graph --holder h >/dev/null
  "$bin" -C "$repo" job add g1 j1 --holder h >/dev/null
  row "job claim" job claim g1 --holder w --json
  local token
  token=$(sed -n 's/.*"lease": *"\([^"]*\)".*/\1/p' "$work/out" | head -n 1)
  row "job done" job done g1 j1 --lease "$token" --status ok --holder w
  local wt
  row "worktree add" worktree add r1 a --holder h
  wt=$(head -n 1 "$work/out")
  echo x >"$wt/n1"; echo y >"$wt/n2"; echo z >"$wt/n3"; echo b >>"$wt/a"
  row "worktree remove (dirty)" worktree remove r1 a --holder h
  wt=$("$bin" -C "$repo" worktree add r1 b --holder h)
  "$bin" -C "$repo" transition r1 b dispatched --holder h >/dev/null 2>&1 || true
  echo q >"$wt/n1"
  row "resume (one dirty worktree)" resume r1 --no-verify --yes --holder h2 --take-over
  wt=$("$bin" -C "$repo" path r1 b)
  git -C "$wt" commit -q --allow-empty -m "the node's work" && echo r >"$wt/n2"
  row "worktree list (one dirty, 1 ahead)" worktree list
  "$bin" -C "$repo" start --id u1 --graph --holder h >/dev/null
  local n
  for n in n1 n2 n3; do
    "$bin" -C "$repo" job add u1 "$n" --scope "$n/**" --holder h >/dev/null
    token=$("$bin" -C "$repo" job claim u1 --job "$n" --holder w --json | sed -n 's/.*"lease": *"\([^"]*\)".*/\1/p' | head -n 1)
    wt=$("$bin" -C "$repo" worktree add u1 "$n" --lease "$token" --holder w)
    mkdir "$wt/$n" && echo "$n" >"$wt/$n/f" && git -C "$wt" add "$n" && git -C "$wt" commit -qm "$n"
    "$bin" -C "$repo" job done u1 "$n" --lease "$token" --status ok --holder w >/dev/null
  done
  row "union (three scoped nodes)" union u1 --holder h
}

new=$(scenario "$work/bin/git-atlas")
if [ -n "${BASE:-}" ]; then
  old=$(scenario "$BASE")
  printf '%-36s %8s %8s\n' command processes base
  paste -d '|' <(echo "$new") <(echo "$old") | awk -F'|' '{
    n=split($1,a," "); m=split($2,b," "); name=a[1]; for(i=2;i<n;i++) name=name" "a[i]
    printf "%-36s %8s %8s\n", name, a[n], b[m] }'
else
  printf '%-36s %8s\n' command processes
  echo "$new" | awk '{ n=NF; name=$1; for(i=2;i<n;i++) name=name" "$i; printf "%-36s %8s\n", name, $n }'
fi
