#!/usr/bin/env bash
# make bench: every bench/*.sh but lib.sh and this file, each printing its figures and ratios
# against baselines measured in the same run. Not part of make test.
set -uo pipefail
cd "$(dirname "$0")/.."
rc=0
declare -A seen
for b in bench/platform.sh bench/*.sh; do
	case $b in bench/run.sh|bench/lib.sh) continue ;; esac
	[ -n "${seen[$b]:-}" ] 2>/dev/null && continue
	echo "== $b"
	seen[$b]=1
	bash "$b" || { echo "$b failed"; rc=1; }
	echo
done
exit $rc
