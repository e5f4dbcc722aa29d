#!/usr/bin/env bash
# make test: builds everything with ASan and UBSan, runs the CUnit suites (the store modules'
# on PostgreSQL too), the shell tests
# (tests/shell: make install, make run), then the end-to-end suite against the real stack twice,
# behind lighttpd and behind Apache, after make lint. Sanitizer reports from any program fail the run. The last
# line sums up every suite: "N passed, N failed".
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=build/asan
passed=0
failed=0
jobs=$(nproc 2>/dev/null || echo 2)

# The TAP lines worth showing: the lines matching the extended regexp $1, and each failure's
# message, the indented block under "error: |-" (an assertion's message is there, on the lines
# after it: grep alone would show the "error: |-" line and drop what the assertion said).
tap_filter() {	# REGEXP
	awk -v re="$1" '
		blk { if ($0 ~ /^[ \t]*$/) next
		      if (match($0, /[^ ]/) > ind && n++ < 12) { print; next }
		      blk = 0 }
		/^ *error: [|>][-+]?$/ { print; blk = 1; n = 0; ind = match($0, /[^ ]/); next }
		$0 ~ re { print }'
}

echo "== build (ASan + UBSan)"
if ! make -s -j"$jobs" BUILD=$build SAN=1 all; then
	echo "build failed"
	echo "0 passed, 1 failed"
	exit 1
fi

# make lint: banned calls, folders that depend one way, one owner per table, no file past 900 lines.
echo "== lint"
if sh scripts/lint.sh; then
	passed=$((passed + 1))
else
	failed=$((failed + 1))
fi

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

run_unit() {	# [SUITE...]: the CUnit suites (all without names), counted into the totals
	local out rc u_run u_pass u_fail
	out=$(mktemp)
	$build/unit_tests "$@" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	read -r u_run u_pass u_fail < <(awk '$1 == "tests" { print $3, $4, $5 }' "$out")
	passed=$((passed + ${u_pass:-0}))
	failed=$((failed + ${u_fail:-0}))
	if [ "$rc" != 0 ] && [ "${u_fail:-0}" = 0 ]; then
		failed=$((failed + 1))	# a crash or a sanitizer report, not a failed assertion
		echo "unit tests exited $rc"
	fi
	rm -f "$out"
}

echo "== unit tests (CUnit)"
run_unit

# The store modules' suites again on PostgreSQL (docs/scale.md): a throwaway server
# (scripts/pg.sh), each suite in a schema of its own. Every suite that opens its database
# through tests/unit/unit_db.c is here; auth and db open SQLite files of their own.
echo "== unit tests on PostgreSQL"
pg_suites="db_engine account bundler bundler_reputation gas_policy index_feed index_read index_store metrics_db
nft_cache rpc_cache spam token wallets webhook worker worker_lease ws_follow ws_pending"
pg_dir=$(mktemp -d)
if pg_url=$(bash scripts/pg.sh start "$pg_dir"); then
	# shellcheck disable=SC2086
	BLOCKPORT_TEST_PG=$pg_url run_unit $pg_suites
else
	failed=$((failed + 1))
	echo "PostgreSQL did not start"
fi
bash scripts/pg.sh stop "$pg_dir"
rm -rf "$pg_dir"

# The same limit cases with the counters in Redis (docs/limits.md): a throwaway redis-server.
echo "== limits on Redis"
rdir=$(mktemp -d)
unit_out=$(mktemp)
if url=$(bash scripts/redis.sh start "$rdir"); then
	BLOCKPORT_TEST_REDIS=$url $build/unit_tests limits_redis head_mark_redis ws_slot_redis 2>&1 | tee "$unit_out"
	unit_rc=${PIPESTATUS[0]}
	read -r u_run u_pass u_fail < <(awk '$1 == "tests" { print $3, $4, $5 }' "$unit_out")
	passed=$((passed + ${u_pass:-0}))
	failed=$((failed + ${u_fail:-0}))
	if [ "$unit_rc" != 0 ] && [ "${u_fail:-0}" = 0 ]; then
		failed=$((failed + 1))	# the suite did not start, a crash or a sanitizer report
		echo "limits on Redis exited $unit_rc"
	fi
else
	failed=$((failed + 1))
fi
bash scripts/redis.sh stop "$rdir"
rm -rf "$rdir" "$unit_out"

# The shell and e2e tests import viem/ethers from the devchain's pinned packages.
ln -sfn ../../devchain/node_modules tests/e2e/node_modules

# Shell tests (tests/shell/*.sh): make install into a temporary tree, make run's lifecycle.
for t in tests/shell/*.sh; do
	[ "$t" != tests/shell/lib.sh ] || continue
	echo "== ${t#tests/}"
	out=$(mktemp)
	BLOCKPORT_BUILD=$top/$build bash "$t" 2>&1 | tee "$out"
	p=$(awk '/^# pass/ { print $3 }' "$out")
	f=$(awk '/^# fail/ { print $3 }' "$out")
	[ -n "$p" ] || { p=0; f=1; echo "$t did not finish"; }
	passed=$((passed + p))
	failed=$((failed + f))
	rm -f "$out"
done


# ThreadSanitizer (a build of its own): the unit tests, then many requests at once to the
# programs that serve several per process (tests/e2e/concurrency.test.mjs, the shared
# upstream health of tests/e2e/frozen.test.mjs, the response cache and head mark of
# tests/e2e/rpc-cache.test.mjs) behind lighttpd.
# A data race fails the run.
echo "== ThreadSanitizer: unit tests and concurrent requests"
tsan=build/tsan
if ! make -s -j"$jobs" BUILD=$tsan TSAN=1 $tsan/unit_tests $tsan/blockport \
	$(ls fcgi/*.c | sed "s|^fcgi/\(.*\)\.c$|$tsan/fcgi/\1.fcgi|"); then
	echo "ThreadSanitizer build failed"
	failed=$((failed + 1))
else
	dir=$(mktemp -d /tmp/blockport-tsan.XXXXXX)
	mkdir -p "$dir/san"
	chmod 777 "$dir/san"
	export TSAN_OPTIONS="halt_on_error=1:log_path=$dir/san/tsan"
	$tsan/unit_tests > "$dir/unit.out" 2>&1 || { failed=$((failed + 1)); tail -20 "$dir/unit.out"; }
	if bash scripts/stack.sh start "$dir" --test --server lighttpd --build "$top/$tsan"; then
		out=$( (set -a; . "$dir/env"; set +a
			node --test --test-reporter=tap --test-concurrency=1 tests/e2e/concurrency.test.mjs \
				tests/e2e/frozen.test.mjs tests/e2e/rpc-cache.test.mjs) 2>&1)
		p=$(awk '/^# pass/ { print $3 }' <<< "$out")
		# A cancelled test (a hook or the event loop gave out) is a failure too.
		f=$(awk '/^# (fail|cancelled)/ { n += $3; seen = 1 } END { if (seen) print n }' <<< "$out")
		[ -n "$p" ] || { p=0; f=1; }
		[ "$f" = 0 ] || tap_filter '^not ok|error:|expected|actual' <<< "$out" | head -40
		passed=$((passed + p))
		failed=$((failed + f))
	else
		echo "stack did not start with the ThreadSanitizer build"
		failed=$((failed + 1))
	fi
	bash scripts/stack.sh stop "$dir"
	if ls "$dir"/san/* > /dev/null 2>&1; then
		echo "ThreadSanitizer reports:"
		cat "$dir"/san/* | head -80
		failed=$((failed + 1))
	else
		rm -rf "$dir"
	fi
	unset TSAN_OPTIONS
fi

servers=${E2E_SERVERS:-lighttpd apache}
# The sanitizers of a stack's programs report into DIR/san (any file there fails the run).
san_dir() {	# DIR
	mkdir -p "$1/san"
	chmod 777 "$1/san"
	export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:log_path=$1/san/asan"
	export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$1/san/ubsan"
}

# Runs node's test runner on its arguments, shows the TAP lines that matter, and counts them
# into the totals; sets g to this run's failures (a cancelled test, or a runner that did not
# finish, is a failure too).
run_node() {	# WHAT ARG...
	local what=$1 out p
	shift
	out=$(mktemp)
	node --test --test-reporter=tap --test-concurrency=1 "$@" 2>&1 | tee "$out" |
		tap_filter '^(not ok|ok)|^# (pass|fail|cancelled|kill)|^ +(not ok|ok)|error:|expected|actual' |
		head -400
	p=$(awk '/^# pass/ { print $3 }' "$out")
	g=$(awk '/^# (fail|cancelled)/ { n += $3; seen = 1 } END { if (seen) print n }' "$out")
	[ -n "$p" ] || { p=0; g=1; echo "the $what runner did not finish"; tail -20 "$out"; }
	passed=$((passed + p))
	failed=$((failed + g))
	rm -f "$out"
}

# Fails the run on any sanitizer report left in DIR/san.
san_check() {	# DIR WHERE
	if ls "$1"/san/* >/dev/null 2>&1; then
		echo "sanitizer reports $2:"
		cat "$1"/san/* | head -80
		failed=$((failed + 1))
	fi
}

for server in $servers; do
	echo "== end-to-end tests behind $server"
	dir=$(mktemp -d /tmp/blockport-e2e.XXXXXX)
	san_dir "$dir"
	if ! bash scripts/stack.sh start "$dir" --test --server "$server" --build "$top/$build"; then
		echo "stack did not start behind $server; logs:"
		tail -n 20 "$dir"/*.log "$dir"/*.out 2>/dev/null
		failed=$((failed + 1))
		bash scripts/stack.sh stop "$dir"
		continue
	fi
	set -a
	# shellcheck disable=SC1091
	. "$dir/env"
	set +a
	run_node e2e tests/e2e/
	bash scripts/stack.sh stop "$dir"
	san_check "$dir" "behind $server"
	if [ "$g" != 0 ]; then
		echo "logs of the failed run are in $dir"
	else
		rm -rf "$dir"
	fi
done

# The e2e suite on a cluster (scripts/cluster.sh, docs/scale.md): two lighttpd heads on one
# PostgreSQL and one Redis behind HAProxy, the ASan build, every request through HAProxy; then
# the cluster's own cases (tests/cluster: the shared limits, a revoked key, Redis stopped, kill -9
# of a head). A subset of tests/e2e: not run again here are the files that test what neither
# the database nor the counters nor the balancer change, already run behind lighttpd and Apache:
# concurrency (the FastCGI thread pool), rpc-smuggling (the JSON-RPC envelope against a Go node
# stub) and frozen (a frozen upstream, one head's case: tests/cluster has the shared one). The files
# that need the workers run when the cluster starts them (CLUSTER_WORKERS=all, its default);
# the cases that assume one head are skipped with the reason (helpers.mjs's onCluster).
cluster_skip="concurrency rpc-smuggling frozen"
cluster_workers="bundler bundler-v07 indexer nfts tokens webhooks-delivery ws"
if [ "${E2E_CLUSTER:-1}" != 0 ]; then	# E2E_CLUSTER=0 leaves it out
	echo "== e2e on the cluster"
	dir=$(mktemp -d /tmp/blockport-cluster.XXXXXX)
	san_dir "$dir"
	ln -sfn ../../devchain/node_modules tests/cluster/node_modules
	if bash scripts/cluster.sh start "$dir" --test --build "$top/$build"; then
		set -a
		# shellcheck disable=SC1091
		. "$dir/env"
		set +a
		files=()
		for t in tests/e2e/*.test.mjs; do
			n=${t##*/}
			n=${n%.test.mjs}
			[[ " $cluster_skip " != *" $n "* ]] || continue
			if [ "$CLUSTER_WORKERS" != all ] && [[ " $cluster_workers " == *" $n "* ]]; then
				echo "skipped on the cluster: $t (CLUSTER_WORKERS=$CLUSTER_WORKERS: no workers)"
				continue
			fi
			files+=("$t")
		done
		# Two runs: the runner would order the files, and tests/cluster kills a head, last.
		f=0
		for group in e2e cluster; do
			if [ $group = e2e ]; then set -- "${files[@]}"; else set -- tests/cluster/*.test.mjs; fi
			run_node "$group" "$@"
			f=$((f + g))
		done
	else
		echo "the cluster did not start; logs:"
		tail -n 20 "$dir"/*.log "$dir"/head*/*.log 2>/dev/null
		f=1
		failed=$((failed + 1))
	fi
	bash scripts/cluster.sh stop "$dir"
	san_check "$dir" "on the cluster"
	if [ "$f" != 0 ]; then
		echo "logs of the failed run are in $dir"
	else
		rm -rf "$dir"
	fi
fi

echo "${passed} passed, ${failed} failed"
[ "$failed" = 0 ]
