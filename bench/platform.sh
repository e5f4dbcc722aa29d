#!/usr/bin/env bash
# The request pipeline (parse, auth, limits, routing, uniform error body) against two baselines
# served by the same lighttpd in the same run: a static file, and a bare C FastCGI program that
# answers a fixed body (bench/bare.c, the ceiling of this architecture).
# Goal (issue "Platform"): Blockport >= 70% of the bare program's rate, with auth and limits on.
# BENCH_REDIS=1 runs it with the counters in Redis (issue 25: >= 60% of the mapped file's rate).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. bench/lib.sh
SECS=${BENCH_SECONDS:-5}
make -s -j2 ${BENCH_TARGETS:-all bench-bin} >/dev/null
dir=$(mktemp -d /tmp/blockport-bench.XXXXXX)
trap 'bash scripts/stack.sh stop "$dir" >/dev/null 2>&1; bash scripts/redis.sh stop "$dir/redis"
	bench_engine_stop "$dir"; rm -rf "$dir"' EXIT
# BENCH_REDIS=1: the same head with its counters in a throwaway Redis (docs/scale.md).
extra=()
if [ "${BENCH_REDIS:-0}" = 1 ]; then
	printf '[server]\nlimits = %s\n' "$(bash scripts/redis.sh start "$dir/redis")" \
		> "$dir/redis.ini"
	extra=(--extra-config "$dir/redis.ini")
fi
# BENCH_ENGINE=pg: the head on PostgreSQL and Redis (bench/cluster.sh compares the engines).
bench_engine "$dir"
[ ${#engine_extra[@]} = 0 ] || extra=("${engine_extra[@]}")
BLOCKPORT_BENCH_BIN=$top/build/bench BLOCKPORT_PROCS=${BLOCKPORT_PROCS:-4} \
	bash scripts/stack.sh start "$dir" --server lighttpd "${extra[@]}" >/dev/null 2>&1
. "$dir/env"
export BLOCKPORT_CONFIG
# An Enterprise key: the counters run on every request but never refuse, so wrk measures work.
blockport=$top/build/blockport
$blockport account create --email bench@localhost --plan enterprise >/dev/null
key=$($blockport key create bench@localhost --test 2>/dev/null)
mkdir -p "$dir/static"
printf '{"error":{"code":"not_found","message":"no such endpoint","status":404}}' \
	> "$dir/static/404.json"
for u in "$BASE_URL/static/404.json" "$BASE_URL/bench/bare/x" "$BASE_URL/v1/nope"; do
	curl -sf -o /dev/null -H "X-API-Key: $key" "$u" ||
		[ "$(curl -s -o /dev/null -w '%{http_code}' -H "X-API-Key: $key" "$u")" = 404 ] ||
		{ echo "bench: $u does not answer" >&2; exit 1; }
done
ROUNDS=${BENCH_ROUNDS:-3}
echo "platform: lighttpd, $(nproc) cores, ${SECS}s per run, $ROUNDS interleaved rounds (medians),"
echo "          4 FastCGI processes per program, wrk on the same machine"
names=("static file" "bare FastCGI" "Blockport authed 404")
urls=("$BASE_URL/static/404.json" "$BASE_URL/bench/bare/x" "$BASE_URL/v1/nope")
declare -A rps p50 p99
for c in 32 1; do
	for ((round = 0; round < ROUNDS; round++)); do
		for i in 0 1 2; do
			read -r _ a b d < <(wrk_run x "${urls[$i]}" "$c" "$SECS" -H "X-API-Key: $key")
			rps[$c,$i]+="$a "
			p50[$c,$i]+="$b "
			p99[$c,$i]+="$d "
		done
	done
done
median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
printf '%-34s %10s %9s %9s   %s\n' "run" "req/s" "p50(us)" "p99(us)" "req/s of each round"
declare -A med
for c in 32 1; do
	for i in 0 1 2; do
		med[$c,$i]=$(median "${rps[$c,$i]}")
		printf '%-34s %10s %9s %9s   %s\n' "${names[$i]} (c=$c)" "${med[$c,$i]}" \
		    "$(median "${p50[$c,$i]}")" "$(median "${p99[$c,$i]}")" "${rps[$c,$i]}"
	done
done
echo "Blockport / bare FastCGI (c=32): $(ratio "${med[32,2]}" "${med[32,1]}")  (goal >= 70%)"
echo "Blockport / static file  (c=32): $(ratio "${med[32,2]}" "${med[32,0]}")"
echo "bare FastCGI / static    (c=32): $(ratio "${med[32,1]}" "${med[32,0]}")"
echo "Blockport / bare FastCGI (c=1):  $(ratio "${med[1,2]}" "${med[1,1]}")"
echo "Blockport p50 - bare p50 (c=1):  $(( $(median "${p50[1,2]}") - $(median "${p50[1,1]}") )) us"
