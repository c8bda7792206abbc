#!/usr/bin/env bash
# What durability costs the ledger's writes (issue 30): `start` and `transition` in a
# FILES-file repository against their floor, the git plumbing of one ledger write
# (three blobs, a tree, a commit, update-ref of two refs) run with the flushes
# git-atlas asks for (core.fsync objects and refs, core.fsyncMethod=fsync). The
# worktree remove row is bench/issue14.sh's (PART=remove), whose floor flushes alike.
#
#   bash bench/durable.sh
#   BASE=/path/to/old/git-atlas ROUNDS=21 bash bench/durable.sh
set -euo pipefail
export LC_ALL=C
ROUNDS=${ROUNDS:-21}
FILES=${FILES:-20000}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/home"
CGO_ENABLED=0 go build -C "$root" -o "$tmp/bin/git-atlas" ./cmd/git-atlas
go build -C "$root" -o "$tmp/rounds" ./bench/rounds
export PATH="$tmp/bin:$PATH" HOME="$tmp/home" GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@x GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@x
durable="-c core.fsync=objects,derived-metadata,reference -c core.fsyncMethod=fsync"
r=$tmp/repo
git init -q -b main "$r"
awk -v n="$FILES" 'BEGIN {
  printf "commit refs/heads/main\ncommitter b <b@x> 1700000000 +0000\ndata 6\nbench\n"
  for (i = 0; i < n; i++) {
    c = sprintf("line %d of a generated file\n", i)
    printf "M 100644 inline d%04d/f%06d.txt\ndata %d\n%s", int(i / 100), i, length(c), c
  }
  printf "\n"
}' | git -C "$r" fast-import --quiet
git -C "$r" reset -q --hard
# floor: one ledger write by git plumbing, new content every time (a nonce), flushed.
cat >"$tmp/floor.sh" <<EOF
set -e
cd "$r"
n=\$(date +%s%N)
a=\$(echo "{\"run\":\"\$n\"}" | git $durable hash-object -w --stdin)
b=\$(echo "{\"state\":\"\$n\"}" | git $durable hash-object -w --stdin)
c=\$(echo "{\"event\":\"\$n\"}" | git $durable hash-object -w --stdin)
t=\$(printf "100644 blob \$a\trun.json\n100644 blob \$b\tstate.json\n100644 blob \$c\tevent.json\n" | git $durable mktree)
k=\$(git $durable commit-tree -m ledger \$t)
printf "update refs/floor/run \$k\nupdate refs/floor/pin HEAD\n" | git $durable update-ref --stdin
EOF
cat >"$tmp/reset.sh" <<EOF
cd "$r" && git for-each-ref --format="delete %(refname)" refs/atlas refs/floor | git update-ref --stdin
EOF
cat >"$tmp/restart.sh" <<EOF
sh "$tmp/reset.sh" && "\$1" -C "$r" start --id t --stages code >/dev/null
EOF
base() { [ -n "${BASE:-}" ]; }
echo "== start, $FILES files, against one flushed ledger write by git plumbing"
pre=(-pre "start=sh $tmp/reset.sh") cmds=(floor="sh $tmp/floor.sh" start="git-atlas -C $r start --id s --stages code")
if base; then pre+=(-pre "base=sh $tmp/reset.sh"); cmds+=(base="$BASE -C $r start --id s --stages code"); fi
"$tmp/rounds" -n "$ROUNDS" -procs "$root/bench/procs.sh" "${pre[@]}" "${cmds[@]}"
echo; echo "== transition, $FILES files, against the same floor"
pre=(-pre "transition=sh $tmp/restart.sh $tmp/bin/git-atlas") cmds=(floor="sh $tmp/floor.sh" transition="git-atlas -C $r transition t code dispatched")
if base; then pre+=(-pre "base=sh $tmp/restart.sh $BASE"); cmds+=(base="$BASE -C $r transition t code dispatched"); fi
"$tmp/rounds" -n "$ROUNDS" -procs "$root/bench/procs.sh" "${pre[@]}" "${cmds[@]}"
echo; echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
