#!/usr/bin/env bash
# The post-checkout hook's cost: `git checkout` with and without it.
#
#   bash bench/hooks.sh            # 100 runs (10 interrupted), 2,000 files, 30 checkouts
#   RUNS=1000 FILES=20000 REPS=20 bash bench/hooks.sh
#
# Each repetition switches the user's checkout between two branches that differ in one
# file, once with no hook and once with the hook installed (interleaved, so that noise
# falls on both), then does the same inside a managed worktree (a detach and a re-attach
# to its branch; the first detach marks it untrusted, later ones find it marked).
# Prints milliseconds per checkout and the difference.
set -euo pipefail

RUNS=${RUNS:-100}
FILES=${FILES:-2000}
REPS=${REPS:-30}
. "$(dirname "$0")/lib.sh"


repo="$work/repo"
git init -q -b main "$repo"
cd "$repo"
mkdir -p src
for i in $(seq 1 "$FILES"); do echo "file $i" >"src/f$i.txt"; done
git add -A && git commit -q -m initial
git checkout -q -b other && echo changed >src/f1.txt && git commit -q -am other && git checkout -q main

# RUNS runs: every tenth left interrupted (no holder), the rest finished.
for i in $(seq 1 "$RUNS"); do
	git atlas start --id "r$i" --stages a,b >/dev/null
	if ((i % 10 != 0)); then git atlas finish "r$i" --status completed >/dev/null; fi
done
run=r10
wt=$(git atlas worktree add "$run" a)

mkdir -p "$(git rev-parse --git-common-dir)/hooks"
hookdir="$(git rev-parse --path-format=absolute --git-common-dir)/hooks"

# time_ms DIR CMD...: milliseconds of one command, its output discarded.
time_ms() {
	local dir=$1; shift
	local t0 t1
	t0=$(now); (cd "$dir" && "$@" >/dev/null 2>&1); t1=$(now)
	echo $(((t1 - t0) / 1000))
}

declare -A sum
for k in user_off user_on wt_off wt_on; do sum[$k]=0; done
for r in $(seq 1 "$REPS"); do
	for mode in off on; do
		if [[ $mode == on ]]; then git atlas hooks install >/dev/null; else rm -f "$hookdir/post-checkout"; fi
		a=$(time_ms "$repo" git checkout -q other); b=$(time_ms "$repo" git checkout -q main)
		sum[user_$mode]=$((sum[user_$mode] + a + b))
		a=$(time_ms "$wt" git checkout -q --detach); b=$(time_ms "$wt" git checkout -q "atlas/$run/node/a")
		sum[wt_$mode]=$((sum[wt_$mode] + a + b))
	done
done
n=$((REPS * 2))
report() {
	awk -v off="${sum[$1_off]}" -v on="${sum[$1_on]}" -v n="$n" -v what="$2" \
		'BEGIN { printf "%-36s %7.1f ms %7.1f ms %+7.1f ms\n", what, off / n / 1000, on / n / 1000, (on - off) / n / 1000 }'
}
echo "runs: $RUNS ($((RUNS / 10)) interrupted), files: $FILES, checkouts per cell: $n"
printf "%-36s %10s %10s %10s\n" "" "no hook" "hook" "added"
report user "git checkout (user's checkout)"
report wt "git checkout (managed worktree)"
git atlas log "$run" | grep -c worktree_untrusted | sed 's/^/worktree_untrusted events: /'
