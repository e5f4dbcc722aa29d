#!/usr/bin/env bash
# /v1/tokens through lighttpd against the bare FastCGI program (bench/bare.c, the ceiling of this
# architecture) served by the same lighttpd in the same run, with an Enterprise key:
#   GET /v1/tokens/ethereum/balances/HOLDER?limit=100: an address holding 100 ERC-20 tokens
#       (bench/tokens-fill.mjs deploys and mints them; the indexer picks them up), every entry
#       rendered: the index's head, the thread's sorted list for that block (rebuilt at most
#       every 5 s: the holdings, one Multicall3 call of 100 balanceOf, 100 cached metadata rows)
#   GET /v1/tokens/ethereum/metadata/TOKEN: a cached token, one SQLite read
# Goals (issue 9): balances >= 30% and metadata >= 70% of the bare program's rate.
# Runs on its own: bash bench/tokens.sh (BENCH_SECONDS=3, BENCH_ROUNDS=3, BLOCKPORT_PROCS=4).
# Each figure is the best of BENCH_ROUNDS runs, interleaved with the other rows' runs.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. bench/lib.sh
SECS=${BENCH_SECONDS:-3}
ROUNDS=${BENCH_ROUNDS:-3}
bench_start bench-tokens

holder=0x70000000000000000000000000000000000000b7
fill=$(node bench/tokens-fill.mjs --rpc "$CHAIN_URL" --tokens 100 --holder "$holder")
token=$(sed -n 's/.*"tokens":\["\(0x[0-9a-f]*\)".*/\1/p' <<<"$fill")
list="$BASE_URL/v1/tokens/ethereum/balances/$holder?limit=100"
meta="$BASE_URL/v1/tokens/ethereum/metadata/$token"
for ((i = 0; i < 150; i++)); do	# the indexer (200 ms passes) picks the mints up
	curl -sf -H "X-API-Key: $key" "$list" | grep -q '"total":100,' && break
	sleep 0.2
done
curl -sf -H "X-API-Key: $key" "$list" | grep -q '"total":100,' ||
	{ echo "bench: the balance list of $holder does not hold 100 tokens" >&2; exit 1; }
curl -sf -o /dev/null -H "X-API-Key: $key" "$meta" ||
	{ echo "bench: GET metadata does not answer 200" >&2; exit 1; }

echo "tokens: lighttpd, $(nproc) cores, best of $ROUNDS interleaved ${SECS}s runs, ${BLOCKPORT_PROCS:-4} processes, wrk on the same machine"
echo "fill: $fill" | cut -c1-60
names=("bare FastCGI" "GET balances (100 tokens)" "GET metadata (cached)")
urls=("$BASE_URL/bench/bare/x" "$list" "$meta")
best_rows 32 1
echo "GET balances / bare (c=32): $(ratio "${rps[1/32]}" "${rps[0/32]}")  (goal >= 30%)"
echo "GET metadata / bare (c=32): $(ratio "${rps[2/32]}" "${rps[0/32]}")  (goal >= 70%)"
echo "GET balances / bare (c=1):  $(ratio "${rps[1/1]}" "${rps[0/1]}")"
echo "GET metadata / bare (c=1):  $(ratio "${rps[2/1]}" "${rps[0/1]}")"
