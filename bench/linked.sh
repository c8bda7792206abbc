#!/usr/bin/env bash
# What the git-atlas binary links and what that costs before main (issue 34: start-up).
# Builds the binary as the README installs it (CGO_ENABLED=0) and prints:
#   - its size, the sections the loader maps (code, read-only data, the function
#     table), its functions and itabs (runtime.itabsinit adds every itab at start-up;
#     moduledataverify1 walks the function table);
#   - code and read-only data per module (go tool nm -size), and per package (TOP rows);
#   - the package initialisers (GODEBUG=inittrace=1, each package's fastest of INITS
#     runs of --version): time, bytes and allocations, the total and the TOP largest;
#   - which outside modules each git-atlas package imports directly (what pulls what);
#   - the functions that keep every exported method of every type alive
#     (reflect's Method/MethodByName with a name not known at build time: the linker's
#     <ReflectMethod>), from -ldflags=-dumpdep;
#   - with perf: task-clock and page faults of --version (perf stat -r PERF).
#
#   bash bench/linked.sh
#   BIN=/path/to/git-atlas TOP=30 INITS=31 PERF=200 bash bench/linked.sh
#
# BIN: measure that binary instead of building one (the dumpdep part then builds the
# tree anyway). Timings on the shared machine are noisy; sizes, counts, bytes and
# allocations are not.
set -euo pipefail
export LC_ALL=C
root=$(cd "$(dirname "$0")/.." && pwd)
TOP=${TOP:-20}
# The top rows are cut by awk, which reads to the end: head would stop reading, and the
# writer's SIGPIPE end the script (pipefail).
INITS=${INITS:-15}
PERF=${PERF:-100}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=${BIN:-$tmp/git-atlas}
[ -n "${BIN:-}" ] || CGO_ENABLED=0 go build -C "$root" -o "$bin" ./cmd/git-atlas

echo "binary: $(stat -c %s "$bin") bytes ($(go version "$bin" | cut -d' ' -f2))"
readelf -S -W "$bin" | sed 's/^ *\[ *[0-9]*\]//' | while read -r name _ _ _ size _; do
  case $name in .text | .rodata | .gopclntab | .noptrdata | .data | .bss | .typelink | .itablink)
    printf "  %-11s %10d bytes\n" "$name" "$((16#$size))" ;;
  esac
done
go tool nm -size "$bin" >"$tmp/nm"
echo "  functions   $(awk '$3 == "T" || $3 == "t"' "$tmp/nm" | wc -l)"
echo "  itabs       $(grep -c ' go:itab\.' "$tmp/nm")"
echo "  packages    $(go list -C "$root" -deps ./cmd/git-atlas | wc -l)"

# The module of a symbol: the longest module path of the build that prefixes it (the
# standard library otherwise). Types, itabs and the runtime's tables are counted apart.
go version -m "$bin" | awk '$1 == "dep" || $1 == "mod" { print $2 }' >"$tmp/mods"
by() { # by module|package SECTIONS(nm letters)
  awk -v how="$1" -v kinds="$2" 'NR == FNR { mods[$1] = 1; next }
  index(kinds, $3) {
    name = $4; key = ""
    if (name ~ /^(type:|go:)/) key = "(types, itabs, runtime tables)"
    else {
      s = name; sub(/\[.*/, "", s); gsub(/^\(\*?|^\*/, "", s)
      slash = 0; for (i = length(s); i > 0; i--) if (substr(s, i, 1) == "/") { slash = i; break }
      dot = index(substr(s, slash + 1), "."); pkg = dot ? substr(s, 1, slash + dot - 1) : s
      if (how == "package") key = pkg
      else {
        key = "std"
        for (m in mods) if ((pkg == m || index(pkg, m "/") == 1) && length(m) > length(best)) best = m
        if (best != "") key = best
        best = ""
      }
    }
    size[key] += $2; total += $2
  }
  END { for (k in size) printf "%10d %5.1f%%  %s\n", size[k], 100 * size[k] / total, k }' "$tmp/mods" "$tmp/nm" | sort -rn
}
echo; echo "== code (T) and read-only data (R) per module"
by module TtRr
echo; echo "== code and read-only data per package (top $TOP)"
by package TtRr | awk -v n="$TOP" 'NR <= n'

echo; echo "== package initialisers: each package's fastest of $INITS runs of --version"
for _ in $(seq "$INITS"); do GODEBUG=inittrace=1 "$bin" --version 2>&1 >/dev/null | grep '^init ' || true; done |
  awk '{ p = $2; if (!(p in ms) || $5 < ms[p]) ms[p] = $5; b[p] = $8; a[p] = $10 }
  END { for (p in ms) { t += ms[p]; tb += b[p]; ta += a[p]; n++ }
    printf "total: %d packages, %.2f ms, %d bytes, %d allocations\n", n, t, tb, ta
    for (p in ms) printf "%8.3f ms %8d B %5d allocs  %s\n", ms[p], b[p], a[p], p }' >"$tmp/inits"
head -n 1 "$tmp/inits"
tail -n +2 "$tmp/inits" | sort -rn | awk -v n="$TOP" 'NR <= n'

echo; echo "== outside modules each git-atlas package imports directly"
go list -C "$root" -deps -f '{{if not .Standard}}{{.ImportPath}}{{range .Imports}} {{.}}{{end}}{{end}}' ./cmd/git-atlas |
  awk '$1 ~ /^github.com\/git-atlas\/git-atlas/ { out = ""
    for (i = 2; i <= NF; i++) if ($i !~ /^github.com\/git-atlas\/git-atlas/ && $i ~ /^[^\/]*\./) out = out " " $i
    if (out != "") { sub(/^github.com\/git-atlas\/git-atlas\/?/, "", $1); print ($1 == "" ? "." : $1) ":" out } }'

echo; echo "== functions that keep every exported method alive (<ReflectMethod>, reachable)"
CGO_ENABLED=0 go build -C "$root" -ldflags=-dumpdep -o "$tmp/dumpdep" ./cmd/git-atlas 2>&1 |
  awk '{ for (i = 2; i <= NF; i++) if ($i == "<ReflectMethod>") print $(i - 1) }' |
  grep -v '^reflect\.' | sort -u

if command -v perf >/dev/null && perf stat -e task-clock true >/dev/null 2>&1; then
  echo; echo "== perf stat -r $PERF --version (load $(cut -d' ' -f1 /proc/loadavg))"
  perf stat -r "$PERF" -e task-clock,page-faults "$bin" --version 2>&1 >/dev/null | grep -E 'task-clock|page-faults'
fi
