#!/usr/bin/env bash
# `git atlas web`'s runs page (and /api/runs) over RUNS runs x EVENTS events against
# `git atlas list --json` on the same fixture (bench/listfixture): the page is served
# from the same summaries listing, so it should cost about one `list` plus rendering.
# Uses hyperfine when installed, else a loop of ROUNDS.
# Usage: bench/web.sh [RUNS [EVENTS [ROUNDS]]]   (default 1000 50 20)
set -euo pipefail
runs=${1:-1000}
events=${2:-50}
rounds=${3:-20}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
server=
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
go build -C "$root" -o "$tmp/bin/git-atlas" ./cmd/git-atlas
go build -C "$root" -o "$tmp/bin/listfixture" ./bench/listfixture
export PATH="$tmp/bin:$PATH" HOME="$tmp" GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@x GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@x
git init -q "$tmp/repo" && cd "$tmp/repo" && git commit -q --allow-empty -m first
listfixture -finished-every 10 . "$runs" "$events"
git repack -a -d -f -q
git atlas list --all --json >/dev/null # warm the summaries cache, as any listing does
echo "fixture: $runs runs x $events events"

git atlas web --no-token --json >"$tmp/url.json" &
server=$!
for _ in $(seq 100); do [ -s "$tmp/url.json" ] && break; sleep 0.1; done
url=$(sed -n 's/.*"url": *"\([^"]*\)".*/\1/p' "$tmp/url.json")
test -n "$url"
test "$(curl -fsS "$url" | grep -c 'data-run=')" = "$runs"
echo "page: $(curl -fsS "$url" | wc -c) bytes; /api/runs: $(curl -fsS "${url}api/runs" | wc -c) bytes"

list="git atlas list --all --json >/dev/null"
page="curl -fsS '$url' >/dev/null"
api="curl -fsS '${url}api/runs' >/dev/null"
if command -v hyperfine >/dev/null; then
  hyperfine --style basic --warmup 3 --min-runs "$rounds" -n list "$list" -n web-page "$page" -n web-api "$api"
else
  for name in list page api; do
    cmd=${!name}
    t0=$(date +%s%N)
    for _ in $(seq "$rounds"); do sh -c "$cmd"; done
    echo "$name: $(( ($(date +%s%N) - t0) / rounds / 1000000 )) ms mean of $rounds"
  done
fi
