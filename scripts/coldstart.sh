#!/usr/bin/env bash
# coldstart.sh — whole-process start-up cost of `shirube search` and
# `shirube ask` (extractive: API keys are unset) on one index: every run is a
# fresh process, timed by /usr/bin/time. One untimed warm-up run first (it
# fills the page cache and, on a new machine, writes the flat dictionary to
# the user cache dir). Prints min / median / max of wall time, CPU time
# (user+sys) and peak RSS, and the load average, which wall time depends on.
#
#   scripts/coldstart.sh [-n RUNS] [-b BINARY] INDEX_DIR [QUERY]
#
# Example: make build && scripts/coldstart.sh -n 7 .demo/index
set -euo pipefail

runs=5
bin=bin/shirube
while getopts "n:b:" o; do
	case $o in
	n) runs=$OPTARG ;;
	b) bin=$OPTARG ;;
	*) echo "usage: $0 [-n RUNS] [-b BINARY] INDEX_DIR [QUERY]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-n RUNS] [-b BINARY] INDEX_DIR [QUERY]" >&2; exit 2; }
index=$1
query=${2:-梅雨はいつ始まる}
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# stats FILE COLUMN: "min median max" of one column of numbers.
stats() {
	sort -g -k"$2" "$1" | awk -v c="$2" '{v[NR]=$c} END {
		m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2
		printf "%s / %s / %s", v[1], m, v[NR] }'
}

measure() { # name, command...
	local name=$1
	shift
	env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY "$@" >/dev/null 2>&1 || {
		echo "$name: command failed: $*" >&2
		exit 1
	}
	: >"$tmp/$name"
	for _ in $(seq "$runs"); do
		env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY /usr/bin/time -f '%e %U %S %M' -o "$tmp/one" "$@" >/dev/null 2>&1
		awk '{printf "%s %.2f %.1f\n", $1, $2 + $3, $4 / 1024}' "$tmp/one" >>"$tmp/$name"
	done
	printf '%-7s wall s %s   cpu s %s   max RSS MiB %s\n' "$name" \
		"$(stats "$tmp/$name" 1)" "$(stats "$tmp/$name" 2)" "$(stats "$tmp/$name" 3)"
}

echo "index $index, $runs runs each (min / median / max), query: $query"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
measure search "$bin" search --index "$index" "$query"
measure ask "$bin" ask --index "$index" --logs "$tmp/logs" "$query"
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
