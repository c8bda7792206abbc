#!/usr/bin/env bash
# `git atlas list --json` over RUNS runs x EVENTS events against its floor: one
# `git for-each-ref refs/atlas/runs` plus one `git cat-file --batch` reading every
# tip's state.json. Goal: list <= 1.5x the floor. Uses hyperfine when installed.
# list is timed warm (its summary cache holds every tip, as after any listing) and
# cold (the cache deleted before each run: every tip's message is read).
# Usage: bench/list.sh [RUNS [EVENTS]]   (default 1000 50)
# NO_SUMMARY=1 writes the ledger without summary lines (as before they existed): the
# cold listing then reads every run's documents.
set -euo pipefail
runs=${1:-1000}
events=${2:-50}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -C "$root" -o "$tmp/bin/git-atlas" ./cmd/git-atlas
go build -C "$root" -o "$tmp/bin/listfixture" ./bench/listfixture
export PATH="$tmp/bin:$PATH" HOME="$tmp" GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@x GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@x
git init -q "$tmp/repo" && cd "$tmp/repo" && git commit -q --allow-empty -m first

t0=$(date +%s%N)
listfixture ${NO_SUMMARY:+-no-summary} . "$runs" "$events"
# fast-import deltifies each blob against the one before it, so every tip would sit at
# the end of a 50-deep delta chain; a repack (as `git gc` does) makes recent objects
# the bases, as in a real repository.
git repack -a -d -f -q
echo "fixture: $runs runs x $events events, repacked, in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
test "$(git for-each-ref refs/atlas/runs | wc -l)" = "$runs"
test "$(git atlas list --json | grep -c '"run_id"')" = "$runs"

floor="git for-each-ref --format='%(objectname):state.json' refs/atlas/runs | git cat-file --batch >/dev/null"
# What list must read at least: the header too (kind, baseline, created_at, intent).
floor2="git for-each-ref --format='%(objectname):run.json%0a%(objectname):state.json' refs/atlas/runs | git cat-file --batch >/dev/null"
gogit="git atlas list --json >/dev/null"
cli="GIT_ATLAS_NO_GOGIT=1 git atlas list --json >/dev/null"
uncache="rm -f .git/atlas/cache/summaries"
if command -v hyperfine >/dev/null; then
  hyperfine --style basic --warmup 3 --min-runs 30 --export-csv "$tmp/list.csv" \
    --prepare true -n floor "$floor" --prepare true -n floor-both "$floor2" \
    --prepare true -n list "$gogit" --prepare true -n list-cli "$cli" \
    --prepare "$uncache" -n list-cold "$gogit" >&2
  mean() { awk -F, -v n="$1" '$1 == n { print $2 }' "$tmp/list.csv"; }
  f=$(mean floor) f2=$(mean floor-both) g=$(mean list) c=$(mean list-cli) k=$(mean list-cold)
else
  time_of() { local t0 i; sh -c "$2"; t0=$(date +%s%N); for ((i = 0; i < 20; i++)); do sh -c "$2"; sh -c "$1"; done; awk -v ns=$(( $(date +%s%N) - t0 )) 'BEGIN { print ns / 20 / 1e9 }'; }
  f=$(time_of "$floor" true) f2=$(time_of "$floor2" true) g=$(time_of "$gogit" true) c=$(time_of "$cli" true)
  k=$(time_of "$gogit" "$uncache")  # includes the rm: a little high
fi
awk -v f="$f" -v f2="$f2" -v g="$g" -v c="$c" -v k="$k" 'BEGIN {
  printf "floor: for-each-ref + cat-file state.json:  %7.1f ms\n", f * 1000
  printf "floor reading run.json and state.json:      %7.1f ms   %.2fx the floor\n", f2 * 1000, f2 / f
  printf "git atlas list --json (go-git repository):  %7.1f ms   %.2fx the floor\n", g * 1000, g / f
  printf "git atlas list --json (CLI fallback):       %7.1f ms   %.2fx the floor\n", c * 1000, c / f
  printf "git atlas list --json, no summary cache:    %7.1f ms   %.2fx the floor\n", k * 1000, k / f }'
