#!/usr/bin/env bash
# The processes one command starts, counted as `strace -f` counts execve: the command
# itself, every process it starts and theirs. The one place the benchmarks count
# processes (bench/processes.sh per command, bench/rounds per row).
#
#   bash bench/procs.sh COUNT COMMAND [ARGS...]
#
# runs COMMAND (its standard input, output and exit status its own) and writes the
# count to the file COUNT, or "-" when strace is not installed or cannot trace here.
set -u
count=$1
shift
if ! command -v strace >/dev/null; then
  echo - >"$count"
  exec "$@"
fi
strace -f -qq -e trace=execve -o "$count.trace" "$@"
status=$?
if [ -s "$count.trace" ]; then
  grep -c 'execve(' "$count.trace" >"$count"
else
  echo - >"$count"
fi
rm -f "$count.trace"
exit "$status"
