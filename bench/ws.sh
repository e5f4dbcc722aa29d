#!/usr/bin/env bash
# WebSocket subscriptions (docs/websocket.md): BENCH_WS_SUBSCRIBERS (1000) newHeads subscribers
# on /v1/ws/ethereum/devnet through lighttpd and websocketd, and the same on anvil's own
# WebSocket endpoint as the baseline, while the devchain mines a block a second
# (bench/ws-subscribers.mjs): the time from asking for a block to its arrival at the last
# subscriber, and the memory per connection: the PSS of the per-connection processes plus
# websocketd's, over N (PSS counts a shared page once in all; RSS sums count it N times), and
# anvil's RSS growth over N. Goals (issue "WebSocket"): p99 <= 1 s, <= 2 MiB a connection.
# Runs on its own: bash bench/ws.sh.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. bench/lib.sh
N=${BENCH_WS_SUBSCRIBERS:-1000}
BLOCKS=${BENCH_WS_BLOCKS:-10}
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
bench_start bench-ws

pss_kib() {	# PID...: the sum of their PSS in KiB
	local p sum=0 v
	for p in "$@"; do
		v=$(awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup" 2>/dev/null || echo 0)
		sum=$((sum + ${v:-0}))
	done
	echo "$sum"
}
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

run_one() {	# NAME URL MEMCMD
	local fifo="$dir/$1.in" out="$dir/$1.out"
	mkfifo "$fifo"
	node bench/ws-subscribers.mjs "$2" "$CHAIN_URL" "$N" "$BLOCKS" < "$fifo" > "$out" 2> "$dir/$1.err" &
	local pid=$!
	exec 9> "$fifo"
	for _ in $(seq 600); do grep -q ready "$dir/$1.err" 2>/dev/null && break; sleep 0.1; done
	grep ready "$dir/$1.err" || { cat "$dir/$1.err"; exit 1; }
	$3
	echo go >&9
	exec 9>&-
	wait "$pid"
	echo "$1: $(cat "$out")"
}

ws_pid=$(cat "$dir/ws.pid")
mem_blockport() {
	local kids wsd total
	kids=$(pgrep -P "$ws_pid" | tr '\n' ' ')
	total=$(pss_kib $kids)
	wsd=$(pss_kib "$ws_pid")
	echo "blockport memory: $(echo "$kids" | wc -w) processes, $((total / N)) KiB PSS each" \
		"+ websocketd $((wsd / 1024)) MiB PSS = $(((total + wsd) / N)) KiB a connection" \
		"(one process's RSS: $(rss_kib "${kids%% *}") KiB)"
}
anvil_before=$(rss_kib "$(cat "$dir/devchain.pid")")
mem_anvil() {
	local a
	a=$(rss_kib "$(cat "$dir/devchain.pid")")
	echo "anvil memory: $(((a - anvil_before) / N)) KiB RSS growth a connection"
}
run_one anvil "ws://${CHAIN_URL#http://}" mem_anvil
run_one blockport "ws://${BASE_URL#http://}/v1/ws/ethereum/devnet?apiKey=$key" mem_blockport
