# Helpers of the shell tests (tests/shell/*.sh, run by scripts/test.sh; sourced, never run).
# Each test prints "ok - WHAT" or "not ok - WHAT"; finish prints "# pass N" and "# fail N", the
# lines scripts/test.sh adds up, and exits non-zero when something failed.
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$top/scripts/lib.sh"
build=${BLOCKPORT_BUILD:-$top/build/asan}
t_pass=0
t_fail=0

check() {	# WHAT COMMAND...: runs COMMAND; ok when it exits 0
	local what=$1
	shift
	if "$@"; then
		echo "ok - $what"
		t_pass=$((t_pass + 1))
	else
		echo "not ok - $what"
		t_fail=$((t_fail + 1))
	fi
}

finish() {
	echo "# pass $t_pass"
	echo "# fail $t_fail"
	[ "$t_fail" = 0 ]
}
