#!/usr/bin/env bash
# resume of three dirty worktrees in a 15,000-file repository (issue 10, item 16;
# bench/results/2026-12-05.md, "## Resume of dirty worktrees").
#
# A graph run with three jobs, each claimed and given its worktree, each worktree then
# dirtied (100 edited files, 20 untracked), the leases run out: `git atlas resume g`
# snapshots the three (verified against the bytes on disk) and makes them clean at the
# baseline. Against the floor, the same work in plain git: per worktree a temporary
# index + `add -A` + `write-tree` (the snapshot), then `reset --hard` + `clean -ffdx`;
# and, with BASE=<git-atlas binary>, against an older build on the same state
# (interleaved rounds, medians).
#
# Usage: [BASE=/path/to/old/git-atlas] bash bench/resume_dirty.sh [ROUNDS]
set -euo pipefail
ROUNDS=${1:-5}
FILES=${FILES:-15000}
. "$(dirname "$0")/lib.sh"
export CI=true NO_COLOR=1


repo=$work/big
mkdir -p "$repo" && cd "$repo"
git init -q -b main
dirs=$((FILES / 100))
for d in $(seq 1 "$dirs"); do
  mkdir -p "src/d$d"
  for f in $(seq 1 100); do printf 'package d%s // file %s\n%0200d\n' "$d" "$f" 0 > "src/d$d/f$f.go"; done
done
git add -A && git commit -q -m baseline

# setup BIN: a fresh run g with three dirty worktrees whose leases ran out.
setup() {
  local bin=$1
  for p in $("$bin" worktree list --json 2>/dev/null | awk -F'"' '/"path"/ {print $4}'); do git worktree remove -f -f "$p" 2>/dev/null || true; done
  git worktree prune
  git for-each-ref --format='delete %(refname)' refs/atlas refs/heads/atlas | git update-ref --stdin
  rm -rf .git/atlas
  "$bin" start --id g --graph --gas 100 >/dev/null
  for j in a b c; do
    "$bin" job add g "$j" >/dev/null
    lease=$("$bin" job claim g --job "$j" --holder w --ttl 1ms --json | awk -F'"' '/"lease"/ {print $4; exit}')
    path=$("$bin" worktree add g "$j" --lease "$lease")
    (cd "$path" && for f in $(seq 1 100); do echo "edit $j $f" >> "src/d$(( (f - 1) % dirs + 1 ))/f$(( (f - 1) / dirs + 1 )).go"; done &&
      for f in $(seq 1 20); do echo "new $j $f" > "new-$f.txt"; done)
  done
  sleep 0.01
}

floor_round() {
  for j in a b c; do
    local path=$work/floor-$j
    [ -d "$path" ] || git worktree add -q --detach "$path" HEAD
    (cd "$path" && for f in $(seq 1 100); do echo "edit $j $f" >> "src/d$(( (f - 1) % dirs + 1 ))/f$(( (f - 1) / dirs + 1 )).go"; done &&
      for f in $(seq 1 20); do echo "new $j $f" > "new-$f.txt"; done)
  done
  local t0; t0=$(now)
  for j in a b c; do
    local path=$work/floor-$j
    rm -f "$work/floor.index"
    cp "$(git -C "$path" rev-parse --git-dir)/index" "$work/floor.index"
    (cd "$path" && GIT_INDEX_FILE=$work/floor.index git add -A && GIT_INDEX_FILE=$work/floor.index git write-tree >/dev/null &&
      git reset -q --hard && git clean -ffdxq)
  done
  echo $(( $(now) - t0 ))
}

atlas_round() {
  local bin=$1
  setup "$bin"
  local t0; t0=$(now)
  "$bin" resume g --json > "$work/resume.json"
  local t=$(( $(now) - t0 ))
  local snaps; snaps=$(awk '/"snapshots"/ {on=1; next} on && /\]/ {exit} on {n++} END {print n+0}' "$work/resume.json")
  [ "$snaps" = 3 ] || { echo "resume took $snaps snapshots, not 3: the fixture is wrong" >&2; exit 1; }
  echo "$t"
}

new=() base=() floor=()
for k in $(seq "$ROUNDS"); do
  floor+=($(floor_round))
  new+=($(atlas_round "$work/bin/git-atlas"))
  if [ -n "${BASE:-}" ]; then base+=($(atlas_round "$BASE")); fi
done
fm=$(printf '%s\n' "${floor[@]}" | median)
nm=$(printf '%s\n' "${new[@]}" | median)
printf 'resume of 3 dirty worktrees, %d files: %d ms; floor (plain git: temporary index + add -A + write-tree, reset --hard, clean -ffdx): %d ms; ratio %.2f\n' \
  "$FILES" $((nm / 1000000)) $((fm / 1000000)) "$(echo "$nm / $fm" | bc -l)"
if [ -n "${BASE:-}" ]; then
  bm=$(printf '%s\n' "${base[@]}" | median)
  printf 'the same with BASE (%s): %d ms; this build / BASE %.2f\n' "$BASE" $((bm / 1000000)) "$(echo "$nm / $bm" | bc -l)"
fi
