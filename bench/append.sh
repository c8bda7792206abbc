#!/usr/bin/env bash
# Durable event appends per second from one process, on one fresh run:
#   1. gitstate.Store.Update in-process (BenchmarkUpdate: go-git objects, and the CLI
#      fallback's forks);
#   2. `git atlas event RUN note` in a loop (a process per event), go-git and CLI;
#   3. the same ledger commit made by git plumbing processes: hash-object -w x2
#      (state.json, event.json), mktree, commit-tree, update-ref (CAS) -- with the
#      same flushes git-atlas asks for (core.fsync=loose-object,reference).
# Prints each rate and the ratios. Usage: bench/append.sh [EVENTS]   (default 200)
set -euo pipefail
n=${1:-200}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -C "$root" -o "$tmp/bin/git-atlas" ./cmd/git-atlas
bench=$(cd "$root" && go test -run '^$' -bench 'BenchmarkUpdate/(gogit|cli)$' -benchtime "${n}x" ./gitstate)
store_gogit=$(awk '/BenchmarkUpdate\/gogit/ { print $5 }' <<<"$bench")
store_cli=$(awk '/BenchmarkUpdate\/cli/ { print $5 }' <<<"$bench")
export PATH="$tmp/bin:$PATH" HOME="$tmp" GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@x GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@x
git init -q "$tmp/repo" && cd "$tmp/repo" && git commit -q --allow-empty -m first

now() { date +%s%N; }
rate() { awk -v n="$1" -v ns="$2" 'BEGIN { printf "%.1f", n / (ns / 1e9) }'; }

git atlas start --id r --stages plan,code >/dev/null
t0=$(now)
for ((i = 0; i < n; i++)); do git atlas event r note --stage code --data "{\"i\":$i}" >/dev/null; done
atlas=$(( $(now) - t0 ))

git atlas start --id c --stages plan,code >/dev/null
t0=$(now)
for ((i = 0; i < n; i++)); do GIT_ATLAS_NO_GOGIT=1 git atlas event c note --stage code --data "{\"i\":$i}" >/dev/null; done
cli=$(( $(now) - t0 ))

# The plumbing version writes the same three-file tree on the same chain shape.
git atlas start --id p --stages plan,code >/dev/null
g="git -c core.fsync=loose-object,reference -c core.fsyncMethod=fsync -c core.hooksPath=/dev/null"
tip=$(git rev-parse refs/atlas/runs/p)
runjson=$(git rev-parse "$tip:run.json")
t0=$(now)
for ((i = 0; i < n; i++)); do
  s=$(printf '{"schema":1,"run_id":"p","status":"running","seq":%d,"epoch":0,"updated_at":"%s","stages":[{"name":"plan","status":"pending"},{"name":"code","status":"pending"}]}\n' $((i + 2)) "$(date -u +%FT%T.%NZ)" | $g hash-object -w --stdin)
  e=$(printf '{"schema":1,"seq":%d,"type":"note","time":"%s","epoch":0,"stage":"code","data":{"i":%d}}\n' $((i + 2)) "$(date -u +%FT%T.%NZ)" $i | $g hash-object -w --stdin)
  tree=$(printf '100644 blob %s\tevent.json\n100644 blob %s\trun.json\n100644 blob %s\tstate.json\n' "$e" "$runjson" "$s" | $g mktree)
  c=$(echo "atlas: note p stage=code" | $g commit-tree "$tree" -p "$tip")
  $g update-ref refs/atlas/runs/p "$c" "$tip"
  tip=$c
done
plumbing=$(( $(now) - t0 ))

test "$(git rev-list --count refs/atlas/runs/r)" = $((n + 1))
test "$(git rev-list --count refs/atlas/runs/p)" = $((n + 1))
git fsck --no-dangling >/dev/null

pr=$(rate $n $plumbing)
echo "events per run:                         $n"
echo "Store.Update in-process (go-git):       $store_gogit events/s"
echo "Store.Update in-process (CLI fallback): $store_cli events/s"
echo "git atlas event loop (go-git):          $(rate $n $atlas) events/s"
echo "git atlas event loop (CLI fallback):    $(rate $n $cli) events/s"
echo "git plumbing, 5 processes per event:    $pr events/s"
awk -v sg="$store_gogit" -v sc="$store_cli" -v a="$(rate $n $atlas)" -v c="$(rate $n $cli)" -v p="$pr" 'BEGIN {
  print "speed against plumbing (>1 is faster):"
  printf "  Store.Update go-git %.2fx, CLI %.2fx; git atlas event go-git %.2fx, CLI %.2fx\n", sg / p, sc / p, a / p, c / p }'
