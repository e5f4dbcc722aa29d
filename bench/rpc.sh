#!/usr/bin/env bash
# JSON-RPC proxy benchmark (make bench runs it through bench/run.sh; it also runs on its own).
# Builds what it needs, starts its own servers on free loopback ports, stops them at the end.
#
# Against a fast fixed upstream (bench/fixed-upstream.c, answering eth_blockNumber with a fixed
# body), in one run:
#   direct     wrk straight to the upstream
#   nginx      nginx proxy_pass with keep-alive (bench/nginx-rpc.conf): any reverse proxy's ceiling
#   relay      lighttpd + bench/relay.c, a bare FastCGI relay with curl keep-alive: the ceiling
#              of this architecture (same lighttpd config and process count as Blockport)
#   blockport  lighttpd + fcgi/rpc.c: auth, limits, compute units and envelope checks on, with a
#              key on the enterprise plan (no finite limit: counted, never refused)
# and against the devchain (anvil): direct, through Blockport, and through Blockport with a key
# on a plan of finite limits too high to refuse (devchain-limited: on a cluster every request of
# it is counted in Redis, where an unlimited key's is not; docs/limits.md).
# Each at 1 connection (wrk -t1 -c1) and 32 (wrk -t2 -c32), BENCH_SECONDS each (default 3), in
# BENCH_ROUNDS rounds (default 3) with the targets interleaved; the medians are shown, so a burst
# of other work on the machine skews one round, not the result.
# Goals: blockport >= 85% of relay's throughput; added p50 at 1 connection <= 0.2 ms over direct.
#
#   bash bench/rpc.sh            BENCH_SECONDS=5 BENCH_ROUNDS=5 BLOCKPORT_PROCS=4 bash bench/rpc.sh
#   bash bench/rpc.sh --serve    start everything, print the URLs and the key, wait (profiling)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. scripts/lib.sh
. bench/lib.sh
secs=${BENCH_SECONDS:-3}
rounds=${BENCH_ROUNDS:-3}
procs=${BLOCKPORT_PROCS:-4}
build=$top/build
bdir=$build/bench
jobs=$(nproc 2>/dev/null || echo 2)

for tool in wrk nginx lighttpd cc curl; do
	command -v "$tool" > /dev/null || { echo "rpc.sh: $tool is missing (make deps)" >&2; exit 1; }
done

wait_port() {	# PORT [NAME]: until something listens (30 s)
	local i
	for ((i = 0; i < 300; i++)); do
		ss -Htln "sport = :$1" 2>/dev/null | grep -q . && return 0
		sleep 0.1
	done
	echo "rpc.sh: nothing listens on $1${2:+ ($2)}; the logs end:" >&2
	tail -n 5 "$dir"/*.log "$dir"/*/*.out "$dir"/nginx/*.log 2> /dev/null >&2
	return 1
}

echo "== build"
make -s -j"$jobs" build/blockport build/fcgi/rpc.fcgi build/bench/relay.fcgi \
	build/bench/fixed-upstream.fcgi
# Each lighttpd gets a directory with its one program, so both run the same process count.
mkdir -p "$bdir/relay-bin" "$bdir/blockport-bin"
ln -sfn "$bdir/relay.fcgi" "$bdir/relay-bin/rpc.fcgi"
ln -sfn "$build/fcgi/rpc.fcgi" "$bdir/blockport-bin/rpc.fcgi"

dir=$(mktemp -d /tmp/blockport-bench.XXXXXX)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2> /dev/null || true
	done
	wait 2> /dev/null || true
	bench_engine_stop "$dir"
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM
bench_engine "$dir"	# BENCH_ENGINE=pg: PostgreSQL and Redis (bench/cluster.sh)

echo "== start (state in $dir)"
up=$(free_port)
"$bdir/fixed-upstream.fcgi" "$up" & pids+=($!)
wait_port "$up" fixed-upstream

ng=$(free_port)
mkdir -p "$dir/nginx"
sed -e "s|@DIR@|$dir/nginx|g" -e "s|@PORT@|$ng|g" -e "s|@UPSTREAM_PORT@|$up|g" \
	bench/nginx-rpc.conf > "$dir/nginx/nginx.conf"
nginx -p "$dir/nginx" -c "$dir/nginx/nginx.conf" -e "$dir/nginx/nginx-error.log" & pids+=($!)
wait_port "$ng" nginx

chain=""
if [ -x devchain/start.sh ] && [ -d devchain/node_modules ]; then
	cport=$(free_port)
	devchain/start.sh "$cport" --cache-path "$dir/anvil-cache" > "$dir/devchain.log" 2>&1 & pids+=($!)
	wait_port "$cport" devchain
	chain="http://127.0.0.1:$cport"
fi

cat > "$dir/blockport.ini" <<EOT
# Written by bench/rpc.sh.
[server]
database = $dir/blockport.db

[chain bench.fixed]
kind = evm
chain_id = 1
testnet = true
index = false
upstream = http://127.0.0.1:$up
EOT
if [ -n "$chain" ]; then
	printf '\n[chain bench.devchain]\nkind = evm\nchain_id = 31337\ntestnet = true\nindex = false\nupstream = %s\n' \
		"$chain" >> "$dir/blockport.ini"
fi
# Finite limits on every axis, far above what the bench sends: counted, never refused.
printf '\n[plan benchlimited]\nrps = 1000000000\nrpd = 1000000000000\ncups = 1000000000\n' \
	>> "$dir/blockport.ini"
[ -z "$PG_URL" ] || cat "$dir/engine.ini" >> "$dir/blockport.ini"
export BLOCKPORT_CONFIG=$dir/blockport.ini
"$build/blockport" migrate > /dev/null 2>&1
"$build/blockport" account create --email bench@localhost --plan enterprise > /dev/null
key=$("$build/blockport" key create bench@localhost --test --name bench 2> /dev/null)
"$build/blockport" account create --email limited@localhost --plan benchlimited > /dev/null
lkey=$("$build/blockport" key create limited@localhost --test --name bench 2> /dev/null)

start_lighttpd() {	# RUNDIR PORT BINDIR
	mkdir -p "$1"
	BLOCKPORT_PORT=$2 BLOCKPORT_BIN=$3 BLOCKPORT_RUN=$1 BLOCKPORT_CONFIG=$BLOCKPORT_CONFIG \
	BLOCKPORT_PROCS=$procs BLOCKPORT_LIGHTTPD_DIR=$top/lighttpd BLOCKPORT_WS_PORT= \
		lighttpd -D -f "$top/lighttpd/blockport.conf" > "$1/lighttpd.out" 2>&1 &
	pids+=($!)
	wait_port "$2" "lighttpd in $1"
}
bp=$(free_port)
start_lighttpd "$dir/bp" "$bp" "$bdir/blockport-bin"
rl=$(free_port)
start_lighttpd "$dir/relay" "$rl" "$bdir/relay-bin"

body='{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}'
for k in post:$key limited:$lkey; do
	cat > "$dir/${k%%:*}.lua" <<EOT
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-API-Key"] = "${k#*:}"
EOT
done
declare -A LUA=([devchain-limited]=$dir/limited.lua)	# the others: post.lua
lua() { echo "${LUA[$1]:-$dir/post.lua}"; }

# Every target must answer the call correctly before it is measured.
check() {	# NAME URL
	local out k=$key
	[ "$1" != devchain-limited ] || k=$lkey
	out=$(curl -s -m 5 -H 'Content-Type: application/json' -H "X-API-Key: $k" -d "$body" "$2")
	case $out in
	*'"result"'*) ;;
	*) echo "rpc.sh: $1 ($2) answered: $out" >&2; exit 1 ;;
	esac
}

to_us() {	# wrk's "123.45us" / "1.23ms" / "1.00s" -> microseconds
	awk '{ v = $1; u = 1
		if (v ~ /us$/) { sub(/us$/, "", v) }
		else if (v ~ /ms$/) { sub(/ms$/, "", v); u = 1000 }
		else if (v ~ /s$/) { sub(/s$/, "", v); u = 1000000 }
		printf "%.0f\n", v * u }'
}

declare -A RPS P50 P99
measure() {	# NAME URL THREADS CONNS: appends this round's figures
	local out k="$1/$4"
	out=$(wrk -t"$3" -c"$4" -d"${secs}s" --latency -s "$(lua "$1")" "$2")
	if grep -q 'Non-2xx\|Socket errors' <<< "$out"; then
		echo "rpc.sh: $1 at $4 connections had errors:" >&2
		grep 'Non-2xx\|Socket errors' <<< "$out" >&2
	fi
	RPS[$k]+="$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' <<< "$out") "
	P50[$k]+="$(awk '$1 == "50%" { print $2 }' <<< "$out" | to_us) "
	P99[$k]+="$(awk '$1 == "99%" { print $2 }' <<< "$out" | to_us) "
}

median() {	# the median of the numbers in $1
	tr ' ' '\n' <<< "$1" | grep . | sort -n | awk '{ v[NR] = $1 } END {
		if (NR % 2) print v[(NR + 1) / 2]; else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

declare -A URL=(
	[direct]="http://127.0.0.1:$up/"
	[nginx]="http://127.0.0.1:$ng/"
	[relay]="http://127.0.0.1:$rl/v1/rpc/bench/fixed"
	[blockport]="http://127.0.0.1:$bp/v1/rpc/bench/fixed"
)
targets=(direct nginx relay blockport)
if [ -n "$chain" ]; then
	URL[devchain-direct]=$chain
	URL[devchain-blockport]="http://127.0.0.1:$bp/v1/rpc/bench/devchain"
	URL[devchain-limited]=${URL[devchain-blockport]}
	targets+=(devchain-direct devchain-blockport devchain-limited)
fi
for t in "${targets[@]}"; do
	check "$t" "${URL[$t]}"
done

if [ "${1:-}" = "--serve" ]; then
	for t in "${targets[@]}"; do
		printf '  %-18s %s\n' "$t" "${URL[$t]}"
	done
	echo "  key                $key (devchain-limited: $lkey)"
	echo "  body               $body"
	echo "  wrk script         $dir/post.lua"
	echo "serving until interrupted"
	while :; do sleep 1; done
fi

echo "== warm-up"
for t in "${targets[@]}"; do
	wrk -t2 -c32 -d1s -s "$(lua "$t")" "${URL[$t]}" > /dev/null
done

echo "== measure: eth_blockNumber, ${secs}s each, $rounds rounds (targets interleaved, medians" \
	"shown), $procs FastCGI processes per program, $(nproc) cores"
for ((round = 1; round <= rounds; round++)); do
	for c in 1 32; do
		for t in "${targets[@]}"; do
			measure "$t" "${URL[$t]}" $((c == 1 ? 1 : 2)) "$c"
		done
	done
done
for c in 1 32; do
	for t in "${targets[@]}"; do
		k="$t/$c"
		RPS[$k]=$(median "${RPS[$k]}")
		P50[$k]=$(median "${P50[$k]}")
		P99[$k]=$(median "${P99[$k]}")
		printf '  %-18s c=%-3s %8s req/s   p50 %6s us   p99 %6s us\n' "$t" "$c" "${RPS[$k]}" \
			"${P50[$k]}" "${P99[$k]}"
	done
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
echo
echo "== ratios"
printf '  %-46s %6s   (goal >= 0.85)\n' "blockport / relay, req/s at 32 connections" \
	"$(ratio "${RPS[blockport/32]}" "${RPS[relay/32]}")"
printf '  %-46s %6s\n' "blockport / relay, req/s at 1 connection" \
	"$(ratio "${RPS[blockport/1]}" "${RPS[relay/1]}")"
printf '  %-46s %6s\n' "relay / nginx, req/s at 32 connections" \
	"$(ratio "${RPS[relay/32]}" "${RPS[nginx/32]}")"
printf '  %-46s %6s\n' "nginx / direct, req/s at 32 connections" \
	"$(ratio "${RPS[nginx/32]}" "${RPS[direct/32]}")"
printf '  %-46s %6s\n' "blockport / direct, req/s at 32 connections" \
	"$(ratio "${RPS[blockport/32]}" "${RPS[direct/32]}")"
printf '  %-46s %6s us (goal <= 200)\n' "blockport p50 - direct p50, 1 connection" \
	"$((P50[blockport/1] - P50[direct/1]))"
printf '  %-46s %6s us\n' "relay p50 - direct p50, 1 connection" \
	"$((P50[relay/1] - P50[direct/1]))"
printf '  %-46s %6s us\n' "nginx p50 - direct p50, 1 connection" \
	"$((P50[nginx/1] - P50[direct/1]))"
if [ -n "$chain" ]; then
	printf '  %-46s %6s\n' "devchain: blockport / direct, req/s at 32" \
		"$(ratio "${RPS[devchain-blockport/32]}" "${RPS[devchain-direct/32]}")"
	printf '  %-46s %6s us\n' "devchain: blockport p50 - direct p50, 1 conn" \
		"$((P50[devchain-blockport/1] - P50[devchain-direct/1]))"
	printf '  %-46s %6s\n' "devchain: limited key / unlimited, req/s at 32" \
		"$(ratio "${RPS[devchain-limited/32]}" "${RPS[devchain-blockport/32]}")"
fi
