#!/usr/bin/env bash
# cost.sh NAME COMMAND...: runs COMMAND, then prints what it cost, success or
# not: its wall time and its CPU-seconds (user and system), the kernel's
# accounting of every process of its tree that was waited for (a process
# left to run on, orphaned, is not counted). make test prints its own this
# way. Exits with COMMAND's status.
set -uo pipefail

name=$1
shift
start=$EPOCHREALTIME
"$@"
status=$?
# times prints the shell's own user and system time, then its children's;
# into a file, as a subshell would have no children.
times=$(mktemp)
times >"$times"
cpu=$(awk 'NR == 2 {
	s = 0
	for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); s += t[1] * 60 + t[2] }
	printf "%.0f", s
}' "$times")
rm -f "$times"
wall=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
echo "$name: $wall s wall, $cpu CPU-seconds$([[ $status == 0 ]] || echo ", failed ($status)")"
exit "$status"
