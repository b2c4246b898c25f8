#!/usr/bin/env bash
# cost.sh NAME COMMAND...: runs COMMAND, then prints what it cost, passed or
# failed: its wall time and the CPU-seconds (user and system) of every
# process it started. make test prints its own this way. Exits with
# COMMAND's status.
#
# The CPU is read from a cpuacct cgroup of its own when this user may make
# one (root, cgroup v1 or v2), which counts every process, those left
# orphaned included; run inside another cost.sh, from that one's group.
# Elsewhere it is the kernel's accounting of the processes that were
# waited for, which misses the orphans: make test's were about a fifth of
# its CPU.
set -uo pipefail

name=$1
shift
start=$EPOCHREALTIME

# usage prints the CPU nanoseconds the group has used.
usage() {
	if [[ -f $group/cpuacct.usage ]]; then
		cat "$group/cpuacct.usage"
	else
		awk '$1 == "usage_usec" { printf "%.0f", $2 * 1000 }' "$group/cpu.stat"
	fi
}

group=
for root in /sys/fs/cgroup/cpuacct /sys/fs/cgroup; do
	[[ -f $root/cpuacct.usage || -f $root/cgroup.controllers ]] || continue
	# This process's group in that hierarchy (v1: the cpuacct line; v2: 0::).
	own=$(awk -F: '$2 ~ /(^|,)cpuacct(,|$)/ || $1 == 0 && $2 == "" { print $3; exit }' /proc/self/cgroup)
	if [[ $own == */quire-cost-* ]]; then
		group=$root$own
	elif mkdir "$root/quire-cost-$$" 2>/dev/null; then
		group=$root/quire-cost-$$
		made=1
		(echo "$BASHPID" >"$group/cgroup.procs") 2>/dev/null || { rmdir "$group"; group=; }
	fi
	break
done

if [[ -n $group ]]; then
	before=$(usage)
	(echo "$BASHPID" >"$group/cgroup.procs" && exec "$@")
	status=$?
	cpu=$(awk -v a="$before" -v b="$(usage)" 'BEGIN { printf "%.0f", (b - a) / 1e9 }')
	how="every process"
	[[ -z ${made:-} ]] || rmdir "$group" 2>/dev/null || true # not while an orphan runs on in it
else
	"$@"
	status=$?
	# times prints the shell's own user and system time, then its
	# children's; into a file, as a subshell would have no children.
	times=$(mktemp)
	times >"$times"
	cpu=$(awk 'NR == 2 {
		s = 0
		for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); s += t[1] * 60 + t[2] }
		printf "%.0f", s
	}' "$times")
	rm -f "$times"
	how="the processes waited for"
fi

wall=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
echo "$name: $wall s wall, $cpu CPU-seconds ($how)$([[ $status == 0 ]] || echo ", failed ($status)")"
exit "$status"
