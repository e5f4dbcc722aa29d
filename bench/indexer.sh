#!/usr/bin/env bash
# The chain indexer (cron/indexer.c) against the raw fetch rate of the same data. Starts its own
# anvil (devchain/start.sh) on a free port, fills it with BLOCKS blocks of PER_BLOCK ERC-20
# transfers (bench/indexer-fill.mjs), then in one run measures:
#   baseline: bench/indexer_fetch.c, a plain C loop sending the indexer's JSON-RPC batches
#             (eth_getBlockByNumber(n, true) + eth_getLogs [+ eth_getBlockReceipts]) through the
#             same client, throwing the answers away;
#   indexer:  `cron/indexer --once` on a fresh database until caught up (checks, decoding,
#             SQLite writes, one transaction per batch).
# Both with receipts (the default) and without (index_receipts = false); each figure is the
# best of RUNS runs. Goal (issue "EVM primitives ... chain indexer"): indexer >= 80% of the
# raw fetch rate.
# Then, with receipts, the indexer again with 100 webhooks of five free-plan accounts (20 each,
# written straight into the table: the API's cap of 5 a free account is not what is measured)
# that match the fill's transfers: address_activity and token_transfer of the ten dev accounts
# the transfers go between. The plan's fences ([plan free] webhook_events_day, webhook_backlog;
# docs/webhooks.md, "Bounds") stop what one account may record. Goal (issue "tenant fences"
# item 2): >= 80% of the rate without webhooks.
#
#   bench/indexer.sh          BLOCKS=1000 PER_BLOCK=20 BATCH=100 RUNS=3 by default
#   WEBHOOKS=0 bench/indexer.sh   skips the webhook run
#   TRACES=1 bench/indexer.sh     adds a run with one INTERNAL_TRANSFER webhook: the indexer then
#                                 fetches every block's call traces too (debug_traceBlockByHash)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. bench/lib.sh
. scripts/lib.sh
BLOCKS=${BLOCKS:-1000}
PER_BLOCK=${PER_BLOCK:-20}
BATCH=${BATCH:-100}
RUNS=${RUNS:-3}

make -s -j2 all bench-bin >/dev/null
[ -d devchain/node_modules ] || (cd devchain && npm ci --no-audit --no-fund --loglevel=error)

dir=$(mktemp -d /tmp/blockport-bench-indexer.XXXXXX)
anvil_pid=""
cleanup() {
	[ -n "$anvil_pid" ] && kill "$anvil_pid" 2>/dev/null
	bench_engine_stop "$dir"
	rm -rf "$dir"
}
trap cleanup EXIT
# BENCH_ENGINE=pg: the index in PostgreSQL, a schema of its own each run (bench/cluster.sh).
bench_engine "$dir"
pg_base=$PG_URL
BENCH_DB=$dir/bench.db

port=$(free_port)
devchain/start.sh "$port" --gas-limit 100000000 --cache-path "$dir/anvil-cache" > "$dir/anvil.log" 2>&1 &
anvil_pid=$!
wait_http "http://127.0.0.1:$port" 100 || true	# only an anvil that died stops the run
kill -0 "$anvil_pid" 2>/dev/null || { cat "$dir/anvil.log" >&2; exit 1; }

fill=$(node bench/indexer-fill.mjs --rpc "http://127.0.0.1:$port" --blocks "$BLOCKS" \
	--per-block "$PER_BLOCK")
last=$(sed -E 's/.*"last":([0-9]+).*/\1/' <<<"$fill")
fill_s=$(sed -E 's/.*"seconds":([0-9.]+).*/\1/' <<<"$fill")

# config RECEIPTS: a config with a fresh database for one run.
config() {
	local db=$dir/bench.db
	rm -f "$db" "$db"-* "$db".*
	if [ -n "$pg_base" ]; then
		PG_URL=$pg_base bench_sql "DROP SCHEMA IF EXISTS bench CASCADE; CREATE SCHEMA bench"
		PG_URL="$pg_base?options=-csearch_path%3Dbench"
		db=$PG_URL
	fi
	cat > "$dir/bench.ini" <<EOT
[server]
database = $db
$([ -z "$pg_base" ] || echo "limits_file = $dir/limits")
max_response = 268435456

[chain ethereum.devnet]
kind = evm
chain_id = 31337
upstream = http://127.0.0.1:$port
index_batch = $BATCH
index_logs_range = $BATCH
index_receipts = $1
EOT
	BLOCKPORT_CONFIG=$dir/bench.ini build/blockport migrate >/dev/null 2>&1
}

# measure RECEIPTS: prints "base_s idx_s blocks logs" (best of RUNS each, same data).
measure() {
	local r=$1 best_b="" best_i="" out blocks logs s t0 t1 i
	for ((i = 0; i < RUNS; i++)); do
		config "$([ "$r" = 1 ] && echo true || echo false)"
		out=$(build/bench/indexer_fetch.fcgi "$dir/bench.ini" 0 "$last" "$BATCH" "$BATCH" "$r")
		read -r _ blocks _ logs _ s <<<"$out"
		best_b=$(awk -v a="$s" -v b="$best_b" 'BEGIN { print (b == "" || a < b) ? a : b }')
		t0=$(date +%s.%N)
		BLOCKPORT_CONFIG=$dir/bench.ini build/cron/indexer --once
		t1=$(date +%s.%N)
		s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
		best_i=$(awk -v a="$s" -v b="$best_i" 'BEGIN { print (b == "" || a < b) ? a : b }')
		# The indexer must have stored every block and every transfer.
		local got
		got=$(bench_sql "SELECT (SELECT count(*) FROM index_blocks) || ' ' ||
			(SELECT count(*) FROM index_transfers)")
		got=${got//|/ }
		[ "${got%% *}" = "$blocks" ] || { echo "indexer stored ${got%% *} of $blocks blocks" >&2; exit 1; }
	done
	echo "$best_b $best_i $blocks $logs"
}

# webhooks: 5 free accounts, 100 matching webhooks, in the fresh database of config.
webhooks() {
	local a i sql="BEGIN;"
	mapfile -t addrs < <(node --input-type=module -e "import { account } from '$top/devchain/dev.mjs';
		for (let i = 0; i < 10; i++) console.log(account(i).address.toLowerCase());")
	for ((a = 1; a <= 5; a++)); do
		BLOCKPORT_CONFIG=$dir/bench.ini build/blockport account create \
			--email "bench$a@example.test" --plan free >/dev/null
	done
	for ((i = 0; i < 100; i++)); do
		a=$((i % 5 + 1))
		sql+="INSERT INTO webhooks (id, account_id, url, chain, network, event_type, config,
			secret, status, created_at, updated_at) SELECT printf('wh_%024d', $i), id,
			'https://127.0.0.1:9/h', 'ethereum', 'ethereum.devnet',
			'$([ $((i % 2)) = 0 ] && echo address_activity || echo token_transfer)',
			'{\"addresses\":[\"${addrs[$((i % 10))]}\"]}', 'whsec_bench', 'active', 0, 0
			FROM accounts WHERE email = 'bench$a@example.test';"
	done
	sqlite3 "$dir/bench.db" "$sql COMMIT;"
}

# measure_with SETUP: the indexer's best time of RUNS, with receipts, each on a fresh database
# that SETUP fills first.
measure_with() {
	local best="" s t0 t1 i
	for ((i = 0; i < RUNS; i++)); do
		config true
		"$1"
		t0=$(date +%s.%N)
		BLOCKPORT_CONFIG=$dir/bench.ini build/cron/indexer --once
		t1=$(date +%s.%N)
		s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
		best=$(awk -v a="$s" -v b="$best" 'BEGIN { print (b == "" || a < b) ? a : b }')
	done
	echo "$best"
}

# measure_webhooks: prints "idx_s recorded dropped" (best of RUNS), with receipts.
measure_webhooks() {
	local best counts
	best=$(measure_with webhooks)
	counts=$(sqlite3 "$dir/bench.db" "SELECT sum(recorded) || ' ' ||
		(sum(dropped_day) + sum(dropped_backlog)) FROM webhook_counts")
	echo "$best $counts"
}

# trace_webhook: one INTERNAL_TRANSFER webhook, in the fresh database of config.
trace_webhook() {
	BLOCKPORT_CONFIG=$dir/bench.ini build/blockport account create \
		--email "trace@example.test" --plan enterprise >/dev/null
	sqlite3 "$dir/bench.db" "INSERT INTO webhooks (id, account_id, url, chain, network,
		event_type, event_types, config, secret, status, created_at, updated_at)
		SELECT 'wh_trace', id, 'https://127.0.0.1:9/h', 'ethereum', 'ethereum.devnet',
		'log', 'INTERNAL_TRANSFER',
		'{\"addresses\":[\"0x00000000000000000000000000000000000000be\"]}',
		'whsec_bench', 'active', 0, 0 FROM accounts WHERE email = 'trace@example.test'"
}

rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", n / s }'; }

echo "indexer: anvil, $(nproc) cores, blocks 0-$last ($BLOCKS filled with $PER_BLOCK ERC-20" \
	"transfers each, in ${fill_s}s), batches of $BATCH blocks, best of $RUNS runs"
printf '%-44s %9s %10s %10s\n' "run" "seconds" "blocks/s" "logs/s"
for r in 1 0; do
	read -r base idx blocks logs < <(measure "$r")
	label=$([ "$r" = 1 ] && echo "with receipts" || echo "without receipts")
	printf '%-44s %9s %10s %10s\n' "raw fetch, same batches ($label)" "$base" \
		"$(rate "$blocks" "$base")" "$(rate "$logs" "$base")"
	printf '%-44s %9s %10s %10s\n' "indexer --once, fresh db ($label)" "$idx" \
		"$(rate "$blocks" "$idx")" "$(rate "$logs" "$idx")"
	echo "indexer / raw fetch ($label): $(ratio "$(rate "$blocks" "$idx")" \
		"$(rate "$blocks" "$base")")  (goal >= 80%)"
	[ "$r" = 1 ] && idx_receipts=$idx
done
if [ "${WEBHOOKS:-1}" != 0 ] && [ -z "$pg_base" ]; then	# its webhooks are written by sqlite3
	read -r widx recorded dropped < <(measure_webhooks)
	printf '%-44s %9s %10s %10s\n' "indexer, 100 webhooks of 5 free accounts" "$widx" \
		"$(rate "$blocks" "$widx")" "$(rate "$logs" "$widx")"
	echo "events recorded $recorded, not recorded past the free plan's fences $dropped"
	echo "with webhooks / without (with receipts): $(ratio "$(rate "$blocks" "$widx")" \
		"$(rate "$blocks" "$idx_receipts")")  (goal >= 80%)"
fi
if [ "${TRACES:-0}" = 1 ]; then
	read -r tidx < <(measure_with trace_webhook)
	printf '%-44s %9s %10s %10s\n' "indexer, an INTERNAL_TRANSFER webhook" "$tidx" \
		"$(rate "$blocks" "$tidx")" "$(rate "$logs" "$tidx")"
	echo "with call traces / without (with receipts): $(ratio "$(rate "$blocks" "$tidx")" \
		"$(rate "$blocks" "$idx_receipts")")"
fi
