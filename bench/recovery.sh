#!/usr/bin/env bash
# Recovery snapshot benchmarks (bench/results/2026-12-05.md, "## Recovery").
#
#  1. Snapshot time: `git atlas recover` of a 20,000-file checkout with 1,000 changed
#     files (snapshot through a temporary index, read-back check of every file, pinned
#     commit, binary patch, ledger event), against the floor: `git add -A` into a
#     fresh temporary index plus `git write-tree` on the same tree. Median of N runs;
#     each snapshot run changes one byte first, so none is a reuse.
#  2. Peak memory of the same command on a checkout holding a 50 MB binary, with
#     /usr/bin/time -v (the largest process of the tree: git-atlas or a git it ran).
#
# Usage: bench/recovery.sh [N]   (from the repository root; needs go, git, GNU time)
set -euo pipefail
N=${1:-5}
. "$(dirname "$0")/lib.sh"
export CI=true NO_COLOR=1


# --- 1. 20,000 files, 1,000 changed ---------------------------------------------------
repo=$work/big
mkdir -p "$repo" && cd "$repo"
git init -q -b main
for d in $(seq -w 0 199); do
  mkdir -p "src/d$d"
  for f in $(seq -w 0 99); do printf 'package d%s // file %s\n%0200d\n' "$d" "$f" 0 > "src/d$d/f$f.go"; done
done
git add -A && git commit -q -m baseline
# 1,000 changed: 400 unstaged edits, 300 staged edits, 200 untracked, 100 deletions.
i=0
for p in $(git ls-files | awk 'NR % 20 == 0' | head -1000); do
  i=$((i + 1))
  if   [ $i -le 400 ]; then echo "edit $i" >> "$p"
  elif [ $i -le 700 ]; then echo "staged $i" >> "$p"; git add "$p"
  elif [ $i -le 900 ]; then echo "new $i" > "$p.new"
  else rm "$p"
  fi
done
git atlas start --id bench --stages code >/dev/null
git status --porcelain >/dev/null # settle the index's stat data, as any user's is

floor=()
for k in $(seq "$N"); do
  rm -f "$work/floor.index"
  t0=$(now)
  GIT_INDEX_FILE=$work/floor.index git add -A
  GIT_INDEX_FILE=$work/floor.index git write-tree >/dev/null
  floor+=($(( $(now) - t0 )))
done
snap=()
for k in $(seq "$N"); do
  echo "run $k" >> src/d000/f00.go.new
  t0=$(now)
  git atlas recover bench --stage code >/dev/null
  snap+=($(( $(now) - t0 )))
done
fm=$(printf '%s\n' "${floor[@]}" | median)
sm=$(printf '%s\n' "${snap[@]}" | median)
printf 'snapshot, 20,000 files, 1,000 changed: %d ms; floor (add -A + write-tree, fresh temporary index): %d ms; ratio %.2f\n' \
  $((sm / 1000000)) $((fm / 1000000)) "$(echo "$sm / $fm" | bc -l)"

# --- 2. peak memory with a 50 MB binary -------------------------------------------
repo=$work/mem
mkdir -p "$repo" && cd "$repo"
git init -q -b main
echo base > README && git add -A && git commit -q -m baseline
head -c $((50 << 20)) /dev/urandom > big.bin
git atlas start --id mem --stages code >/dev/null
peak() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident set size/ {print $2}'; }
fpeak=$(GIT_INDEX_FILE=$work/mem.index peak git add -A)
spk=$(peak git atlas recover mem --stage code)
# The same state again reuses the snapshot and keeps its patch: no diff-tree runs, so
# this peak is git-atlas's own process or `git add -A`, whichever is larger.
rpk=$(peak git atlas recover mem --stage code)
printf 'peak RSS with a 50 MB binary: snapshot %d MB; floor (git add -A) %d MB; ratio %.2f\n' \
  $((spk / 1024)) $((fpeak / 1024)) "$(echo "$spk / $fpeak" | bc -l)"
printf 'peak RSS of the same snapshot again (reused, no patch to write): %d MB\n' $((rpk / 1024))
printf 'patch of the 50 MB binary: %d MB\n' $(( $(stat -c %s .git/atlas/recovery/mem/*.patch) >> 20 ))
