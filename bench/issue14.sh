#!/usr/bin/env bash
# The commands that run most (issue 14), each against its floor, in one run:
#
#   bash bench/issue14.sh                       # every part
#   PART=startup,brief ROUNDS=51 bash bench/issue14.sh
#   BASE=/path/to/old/git-atlas bash bench/issue14.sh    # the old build in the same rounds
#
# Parts (PART, comma-separated; default all):
#   startup  git-atlas --version against a Go binary that prints one line; beside them,
#            a binary that links git-atlas's libraries and prints one line ("libraries":
#            what start-up costs before any code of git-atlas runs), and that binary
#            without what only the MCP SDK brings ("no MCP SDK": the SDK's share)
#   brief    resume --brief with 0 runs and with RUNS runs x EVENTS events (listfixture:
#            every 5th finished, the others interrupted), against git rev-parse HEAD
#   agent    agent hook claude (an event on stdin) against resume --brief, same repos
#   detect   resume --detect --json on the RUNS-run repository against for-each-ref into
#            one cat-file --batch of every tip's state.json; peak RSS of each
#   hook     git checkout (toggling branches) without the hook and with it: HOOK_RUNS
#            runs all finished (the common case), then with every tenth interrupted, and
#            in managed worktrees (one on its branch, one marked untrusted); FILES files
#   remove   worktree remove of a dirty worktree (REMOVE_FILES files, REMOVE_CHANGED of
#            them changed, with new bytes each round: snapshot, verify, remove) against a
#            temporary index + add -A + write-tree + the diff --binary patch, then git
#            worktree remove --force of a plain worktree of the same files; REMOVE_ROUNDS
#            rounds, the worktrees made again (untimed) each round
#
# Timing: bench/rounds runs every command of a row once per round, in turn (ROUNDS
# rounds after 3 discarded), with no shell in between, and prints medians, the ratio of
# each to the row's first command (its floor), the median CPU time (user and system, its
# processes and those they waited for) and its ratio to the floor's, the peak RSS of its
# largest process and the processes it starts (bench/procs.sh: strace -f's execve
# count, "-" without strace).
# On the shared 2-core machine trust the ratios within one run, not absolute times.
set -euo pipefail
export LC_ALL=C
PART=${PART:-startup,brief,agent,detect,hook,remove}
ROUNDS=${ROUNDS:-31}
RUNS=${RUNS:-1000}
EVENTS=${EVENTS:-50}
HOOK_RUNS=${HOOK_RUNS:-100}
FILES=${FILES:-2000}
REMOVE_FILES=${REMOVE_FILES:-20000}
REMOVE_CHANGED=${REMOVE_CHANGED:-1000}
REMOVE_ROUNDS=${REMOVE_ROUNDS:-5}
# The floors' git flushes what git-atlas's does (docs/contract.md §11.12): objects and refs, one
# fsync per file.
durable="-c core.fsync=objects,derived-metadata,reference -c core.fsyncMethod=fsync"
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/home" "$tmp/base"
# As the README installs it (CGO_ENABLED=0: a static binary, no dynamic loader at
# start-up); the startup row also times the default build, which links libc for
# os/user (kong) and net (the MCP SDK).
CGO_ENABLED=0 go build -C "$root" -o "$tmp/bin/git-atlas" ./cmd/git-atlas
go build -C "$root" -o "$tmp/git-atlas-cgo" ./cmd/git-atlas
go build -C "$root" -o "$tmp/bin/listfixture" ./bench/listfixture
go build -C "$root" -o "$tmp/rounds" ./bench/rounds
if [ -n "${BASE:-}" ]; then cp "$BASE" "$tmp/base/git-atlas"; fi
cat >"$tmp/hello.go" <<'EOF'
package main

import "os"

func main() { os.Stdout.WriteString("hello 1\n") }
EOF
(cd "$tmp" && GO111MODULE=off go build -o "$tmp/hello" hello.go)
# The libraries alone: a binary that links every package git-atlas links from other
# modules (blank imports; a module's internal packages come with their importers) and
# prints one line. Their package initialisers and the pages of their code are what
# start-up costs before any code of git-atlas runs. Built through an overlay, so
# nothing is written into the tree.
{
  echo 'package main'
  echo 'import ('
  echo '	"os"'
  go list -C "$root" -deps -f '{{if not .Standard}}{{.ImportPath}}{{end}}' ./cmd/git-atlas |
    grep -v '^github.com/git-atlas/git-atlas' | grep -v '/internal\(/\|$\)' | sed 's/.*/	_ "&"/'
  echo ')'
  echo 'func main() { os.Stdout.WriteString("hello 1\n") }'
} >"$tmp/libsonly.go"
printf '{"Replace":{"%s":"%s"}}\n' "$root/bench/internal/libsonly/main.go" "$tmp/libsonly.go" >"$tmp/overlay.json"
CGO_ENABLED=0 go build -C "$root" -overlay="$tmp/overlay.json" -o "$tmp/libsonly" ./bench/internal/libsonly
# The same without what only the MCP SDK brings (`git atlas mcp`'s library): its
# packages and those no other library imports (jsonschema-go, segmentio's JSON,
# oauth2, golang.org/x/sys/cpu, ...), with every standard package git-atlas's own
# packages import added, so that only the SDK's share is taken away ("no MCP SDK").
nonstd() { go list -C "$root" -deps -f '{{if not .Standard}}{{.ImportPath}}{{end}}' "$@"; }
libs=$(nonstd ./cmd/git-atlas | grep -v '^github.com/git-atlas/git-atlas')
sdk=$(nonstd $(grep '^github.com/modelcontextprotocol/go-sdk' <<<"$libs") | sort -u)
keep=$(nonstd $(comm -23 <(sort -u <<<"$libs") <(cat <<<"$sdk")) | sort -u)
own=$(nonstd ./cmd/git-atlas | grep '^github.com/git-atlas/git-atlas')
std=$(go list -C "$root" -f '{{join .Imports "\n"}}' $own | awk -F/ '$1 !~ /\./' | sort -u)
{
  echo 'package main'
  echo 'import ('
  echo '	"os"'
  { grep -v '/internal\(/\|$\)' <<<"$keep"; grep -vx 'os' <<<"$std"; } | sed 's/.*/	_ "&"/'
  echo ')'
  echo 'func main() { os.Stdout.WriteString("hello 1\n") }'
} >"$tmp/libsnomcp.go"
printf '{"Replace":{"%s":"%s"}}\n' "$root/bench/internal/libsonly/main.go" "$tmp/libsnomcp.go" >"$tmp/overlay-nomcp.json"
CGO_ENABLED=0 go build -C "$root" -overlay="$tmp/overlay-nomcp.json" -o "$tmp/libsnomcp" ./bench/internal/libsonly
export PATH="$tmp/bin:$PATH"
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" GIT_CONFIG_NOSYSTEM=1 CI=true NO_COLOR=1
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@x GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@x
unset ATLAS_SESSION
want() { case ",$PART," in *",$1,"*) return 0 ;; esac; return 1; }
rounds() { "$tmp/rounds" -n "$ROUNDS" -procs "$root/bench/procs.sh" "$@"; }
base() { [ -n "${BASE:-}" ]; }

echo "issue 14 benchmarks: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(git --version), $(go version | cut -d' ' -f3)"
echo "binary: $(stat -c %s "$tmp/bin/git-atlas") bytes$(base && echo ", BASE $(stat -c %s "$tmp/base/git-atlas") bytes")"

if want startup; then
  echo; echo "== git-atlas --version against a Go binary that prints one line (goal <= 2x)"
  B=(); base && B=(base="$tmp/base/git-atlas --version")
  rounds hello="$tmp/hello" libraries="$tmp/libsonly" 'no MCP SDK'="$tmp/libsnomcp" \
    git-atlas="$tmp/bin/git-atlas --version" cgo="$tmp/git-atlas-cgo --version" "${B[@]}"
fi

r0=$tmp/runs0 rn=$tmp/runs$RUNS
if want brief || want agent || want detect; then
  for d in "$r0" "$rn"; do git init -q -b main "$d" && git -C "$d" commit -q --allow-empty -m first; done
  (cd "$rn" && listfixture -finished-every 5 -driver . "$RUNS" "$EVENTS" && git repack -adfq)
  git -C "$rn" atlas list >/dev/null # as any earlier listing would: the summary cache
  printf '{"session_id":"s-bench","source":"startup","hook_event_name":"SessionStart","cwd":"%s"}\n' "$r0" >"$tmp/event0.json"
  printf '{"session_id":"s-bench","source":"startup","hook_event_name":"SessionStart","cwd":"%s"}\n' "$rn" >"$tmp/eventn.json"
fi
if want brief; then
  echo; echo "== resume --brief, 0 runs, against git rev-parse HEAD (goal <= 3x)"
  B=(); base && B=(base="$tmp/base/git-atlas -C $r0 resume --brief")
  rounds revparse="git -C $r0 rev-parse HEAD" 'git-atlas'="git-atlas -C $r0 resume --brief" \
    'git atlas'="git -C $r0 atlas resume --brief" "${B[@]}"
  echo; echo "== resume --brief, $RUNS runs x $EVENTS events, against git rev-parse HEAD (goal <= 5x)"
  B=(); base && B=(base="$tmp/base/git-atlas -C $rn resume --brief")
  rounds revparse="git -C $rn rev-parse HEAD" 'git-atlas'="git-atlas -C $rn resume --brief" \
    'git atlas'="git -C $rn atlas resume --brief" "${B[@]}"
fi
if want agent; then
  echo; echo "== agent hook claude against resume --brief (goal <= 1.1x), 0 runs, then $RUNS"
  B=(); base && B=(base="$tmp/base/git-atlas agent hook claude <$tmp/event0.json")
  rounds -dir "$r0" brief="git-atlas -C $r0 resume --brief --session s-bench" hook="git-atlas agent hook claude <$tmp/event0.json" \
    "${B[@]}"
  B=(); base && B=(base="$tmp/base/git-atlas agent hook claude <$tmp/eventn.json")
  rounds -dir "$rn" brief="git-atlas -C $rn resume --brief --session s-bench" hook="git-atlas agent hook claude <$tmp/eventn.json" \
    "${B[@]}"
fi
if want detect; then
  echo; echo "== resume --detect --json, $RUNS runs, against for-each-ref | cat-file --batch of state.json (goal <= 1.2x, <= 20 MiB)"
  B=(); base && B=(base="$tmp/base/git-atlas -C $rn resume --detect --json")
  rounds floor="git -C $rn for-each-ref --format=%(objectname):state.json refs/atlas/runs | git -C $rn cat-file --batch" \
    detect="git-atlas -C $rn resume --detect --json" "${B[@]}"
fi

if want hook; then
  h=$tmp/hook
  git init -q -b main "$h"
  mkdir -p "$h/src"
  for i in $(seq 1 "$FILES"); do echo "file $i" >"$h/src/f$i.txt"; done
  git -C "$h" add -A && git -C "$h" commit -q -m initial
  git -C "$h" checkout -q -b other && echo changed >"$h/src/f1.txt" && git -C "$h" commit -q -am other && git -C "$h" checkout -q main
  (cd "$h" && for i in $(seq 1 "$HOOK_RUNS"); do
    git atlas start --id "r$i" --stages a,b >/dev/null
    git atlas finish "r$i" --status completed >/dev/null
  done)
  mkdir -p "$h/.git/hooks"
  on="git-atlas -C $h hooks install" off="git-atlas -C $h hooks uninstall"
  hookrow() { # NAME DIR [WHAT TO CHECK OUT, default -]
    local to=${3:--}
    local pre=(-pre "no hook=$off" -pre "hook=$on") cmds=("no hook=env PATH=$PATH git -C $2 checkout -q $to" "hook=env PATH=$PATH git -C $2 checkout -q $to")
    if base; then
      pre+=(-pre "base=$tmp/base/git-atlas -C $h hooks install")
      cmds+=("base=env PATH=$tmp/base:$PATH git -C $2 checkout -q $to")
    fi
    rounds "${pre[@]}" "${cmds[@]}"
  }
  echo; echo "== git checkout, $HOOK_RUNS runs, none interrupted (goal: <= +3 ms)"
  hookrow common "$h"
  (cd "$h" && for i in $(seq 10 10 "$HOOK_RUNS"); do git update-ref "refs/atlas/runs/r$i" "refs/atlas/runs/r$i~1"; done)
  echo; echo "== git checkout, $HOOK_RUNS runs, $((HOOK_RUNS / 10)) interrupted (goal: <= +8 ms)"
  hookrow interrupted "$h"
  git -C "$h" atlas finish r10 --status completed >/dev/null
  git -C "$h" update-ref refs/atlas/runs/r10 refs/atlas/runs/r10~1
  wt=$(git -C "$h" atlas worktree add r10 a)
  wtb=$(git -C "$h" atlas worktree add r10 b)
  echo; echo "== git checkout of its own branch in a managed worktree (goal: <= +8 ms)"
  hookrow managed-on-branch "$wtb" atlas/r10/node/b
  git -C "$wt" checkout -q --detach
  echo; echo "== git checkout in a managed worktree marked untrusted (goal: <= +8 ms)"
  hookrow managed "$wt"
fi

if want remove; then
  r=$tmp/remove
  git init -q -b main "$r"
  awk -v n="$REMOVE_FILES" 'BEGIN {
    printf "commit refs/heads/main\ncommitter b <b@x> 1700000000 +0000\ndata 6\nbench\n"
    for (i = 0; i < n; i++) {
      c = sprintf("line %d of a generated file\n", i)
      printf "M 100644 inline d%04d/f%06d.txt\ndata %d\n%s", int(i / 100), i, length(c), c
    }
    printf "\n"
  }' | git -C "$r" fast-import --quiet
  git -C "$r" reset -q --hard
  git -C "$r" atlas start --id rm --stages a >/dev/null
  # dirty DIR: REMOVE_CHANGED files changed, a tenth of them new, settled by a status.
  cat >"$tmp/dirty.sh" <<EOF
set -e
cd "\$1"
n=0
round=\$(date +%s%N) # new bytes each round: the snapshot and the floor's blobs are written, not found
for f in \$(git ls-files | awk 'NR % int($REMOVE_FILES / $REMOVE_CHANGED) == 0' | head -n $((REMOVE_CHANGED * 9 / 10))); do echo "edit \$round" >>"\$f"; done
for i in \$(seq 1 $((REMOVE_CHANGED / 10))); do echo "new \$round" >"new-\$i.txt"; done
git status --porcelain >/dev/null
EOF
  cat >"$tmp/mk-atlas.sh" <<EOF
set -e
git -C "$r" atlas worktree remove rm a >/dev/null 2>&1 || :
wt=\$(git -C "$r" atlas worktree add rm a)
sh "$tmp/dirty.sh" "\$wt"
EOF
  cat >"$tmp/mk-plain.sh" <<EOF
set -e
git -C "$r" worktree remove --force "$tmp/plain" 2>/dev/null || rm -rf "$tmp/plain"
git -C "$r" worktree prune
git -C "$r" worktree add -q --detach "$tmp/plain" main
sh "$tmp/dirty.sh" "$tmp/plain"
EOF
  cat >"$tmp/floor.sh" <<EOF
set -e
cd "$tmp/plain"
gd=\$(git rev-parse --absolute-git-dir)
cp "\$gd/index" "\$gd/atlas-bench-index"
GIT_INDEX_FILE="\$gd/atlas-bench-index" git $durable add -A
tree=\$(GIT_INDEX_FILE="\$gd/atlas-bench-index" git $durable write-tree)
git diff --binary HEAD "\$tree" >"\$gd/atlas-bench.patch" # the snapshot's patch, as issue 34 defines the floor
rm -f "\$gd/atlas-bench-index" "\$gd/atlas-bench.patch"
cd /
git -C "$r" worktree remove --force "$tmp/plain"
EOF
  echo; echo "== worktree remove, $REMOVE_FILES files, $REMOVE_CHANGED changed, against temporary index + add -A + write-tree + diff --binary + worktree remove --force (goal <= 1.6x)"
  pre=(-pre "floor=sh $tmp/mk-plain.sh" -pre "remove=sh $tmp/mk-atlas.sh") cmds=(floor="sh $tmp/floor.sh" remove="git-atlas -C $r worktree remove rm a")
  if base; then pre+=(-pre "base=sh $tmp/mk-atlas.sh") cmds+=(base="$tmp/base/git-atlas -C $r worktree remove rm a"); fi
  "$tmp/rounds" -n "$REMOVE_ROUNDS" -warm 1 -procs "$root/bench/procs.sh" "${pre[@]}" "${cmds[@]}"
fi
echo; echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
