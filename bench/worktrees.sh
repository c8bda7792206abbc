#!/usr/bin/env bash
# Managed worktrees against plain git, on a generated repository.
#
#   bash bench/worktrees.sh            # 20 nodes, 20,000 files, 5 repetitions
#   FILES=5000 NODES=8 REPS=3 bash bench/worktrees.sh
#
# 1. `git atlas worktree add` (ledger write, branch + pin, locked worktree) for NODES
#    nodes against as many plain `git worktree add -b`, interleaved so that noise and
#    cache warmth fall on both alike.
# 2. `git atlas worktree list RUN` (dirtiness of every node, checked in parallel,
#    without refreshing any index) against `git status --porcelain` run in each of
#    the same worktrees in turn; some worktrees are dirty.
# Ratios are git-atlas / plain git: below 1 means git-atlas is faster.
set -euo pipefail

FILES=${FILES:-20000}
NODES=${NODES:-20}
REPS=${REPS:-5}
. "$(dirname "$0")/lib.sh"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
add() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a + b }'; }

# A repository of FILES small files in directories of 100, in one fast-import commit.
repo="$work/repo"
git init -q -b main "$repo"
awk -v n="$FILES" 'BEGIN {
	printf "commit refs/heads/main\ncommitter Bench <bench@example.com> 1700000000 +0000\ndata 6\nbench\n"
	for (i = 0; i < n; i++) {
		c = sprintf("line %d of a generated file\n", i)
		printf "M 100644 inline d%04d/f%06d.txt\ndata %d\n%s", int(i / 100), i, length(c), c
	}
	printf "\n"
}' | git -C "$repo" fast-import --quiet
git -C "$repo" reset -q --hard
cd "$repo"
git atlas start --id bench >/dev/null
# Warm the object store and the page cache for both sides.
git worktree add -q --detach "$work/warm" main && git worktree remove --force "$work/warm"

echo "repository: $(git ls-files | wc -l) files; $NODES worktrees of each kind"

atlas_add=0 plain_add=0
for i in $(seq 1 "$NODES"); do
	t0=$(now); git atlas worktree add bench "n$i" >/dev/null; t1=$(now)
	git worktree add -q -b "plain/n$i" "$work/plain/n$i" main; t2=$(now)
	atlas_add=$(add "$atlas_add" "$(elapsed "$t0" "$t1")")
	plain_add=$(add "$plain_add" "$(elapsed "$t1" "$t2")")
done
printf 'worktree add x%d      git atlas %7.3fs   git worktree add %7.3fs   ratio %s\n' \
	"$NODES" "$atlas_add" "$plain_add" "$(ratio "$atlas_add" "$plain_add")"

# Some work in progress: a changed file in every fourth node, an untracked one in every fifth.
wts=()
for i in $(seq 1 "$NODES"); do
	wt="$repo/.git/atlas/worktrees/bench/n$i"
	wts+=("$wt")
	if (( i % 4 == 0 )); then echo change >>"$wt/d0000/f000000.txt"; fi
	if (( i % 5 == 0 )); then echo new >"$wt/untracked.txt"; fi
done
sleep 1 # so that a refreshed index is not racy with the checkout's last files

serial_status() { for wt in "${wts[@]}"; do git -C "$wt" status --porcelain >/dev/null; done; }

# Fresh: just created, indexes racily clean, so every status re-reads file contents.
# git atlas never rewrites an index, so it pays this each time until the worktree's
# own git (the agent's) refreshes it; plain status refreshes it on its first run.
t0=$(now); git atlas worktree list bench >/dev/null; t1=$(now); serial_status; t2=$(now)
fa=$(elapsed "$t0" "$t1") fp=$(elapsed "$t1" "$t2")
printf 'dirtiness, fresh       git atlas %7.3fs   git status x%-2d    %7.3fs   ratio %s\n' \
	"$fa" "$NODES" "$fp" "$(ratio "$fa" "$fp")"

# Settled: every index refreshed (by the serial status above).
la=0 lp=0
for _ in $(seq 1 "$REPS"); do
	t0=$(now); git atlas worktree list bench >/dev/null; t1=$(now); serial_status; t2=$(now)
	la=$(add "$la" "$(elapsed "$t0" "$t1")")
	lp=$(add "$lp" "$(elapsed "$t1" "$t2")")
done
la=$(awk -v a="$la" -v n="$REPS" 'BEGIN { printf "%.3f", a / n }')
lp=$(awk -v a="$lp" -v n="$REPS" 'BEGIN { printf "%.3f", a / n }')
printf 'dirtiness, settled     git atlas %7.3fs   git status x%-2d    %7.3fs   ratio %s   (mean of %d)\n' \
	"$la" "$NODES" "$lp" "$(ratio "$la" "$lp")" "$REPS"
dirty=$(git atlas worktree list bench --json | grep -c '"dirty": true' || true)
echo "git atlas saw $dirty dirty worktrees of $NODES"
