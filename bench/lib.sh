# Sourced by the benchmark scripts: a throwaway work directory (removed on exit), a
# git-atlas built from this checkout first on PATH, and a pinned git environment (no
# user or system config, a fixed identity) so both sides of a comparison run the same
# git. Sets $here (the repository root) and $work.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/bin"
# Build before HOME moves: the Go caches live under it.
(cd "$here" && go build -o "$work/bin/git-atlas" ./cmd/git-atlas)
export PATH="$work/bin:$PATH"
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=Bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=Bench GIT_COMMITTER_EMAIL=bench@example.com

# now is the time in nanoseconds; median reads numbers, one a line, and prints their median.
now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
