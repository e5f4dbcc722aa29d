#!/usr/bin/env bash
# The bundler (/v1/bundler, cron/bundle) side by side with the Alto bundler (npm
# @pimlico/alto 0.0.20, installed here into bench/alto/ by this script, run with
# --safe-mode false) on the same devchain (anvil, automine) in the same run. The load
# (bench/bundler-load.mjs) is the same for both: N first ops of fresh self-funded
# SimpleAccounts v0.6, signed in advance, sent C at a time; then LAT ops one after another.
#   accepted ops/s   N / time until every eth_sendUserOperation answered
#   bundled ops/s    N / time from the first send until every op has a receipt
#   latency          send to receipt of one op alone, p50 and p90 (ms)
# Goals (issue 12): accepted >= Alto's; send to receipt <= one block + 1 s (automine: 1 s).
# Runs on its own: bash bench/bundler.sh (BENCH_OPS=200, BENCH_CONC=16, BENCH_LAT=10).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. bench/lib.sh
. scripts/lib.sh
N=${BENCH_OPS:-200}
C=${BENCH_CONC:-16}
LAT=${BENCH_LAT:-10}

# BENCH_ALTO=0: Blockport's figures alone (bench/cluster.sh: the pool's work on each engine).
if [ "${BENCH_ALTO:-1}" != 0 ] && [ ! -x bench/alto/node_modules/.bin/alto ]; then
	echo "bench: installing @pimlico/alto 0.0.20 into bench/alto/" >&2
	(cd bench/alto && npm install --no-audit --no-fund --loglevel=error >&2)
fi
[ -d devchain/node_modules ] || (cd devchain && npm ci --no-audit --no-fund --loglevel=error)

bench_start bench-bundler
alto_pid=
trap '[ -z "$alto_pid" ] || kill "$alto_pid" 2>/dev/null; bash scripts/stack.sh stop "$dir" >/dev/null 2>&1; bench_engine_stop "$dir"; rm -rf "$dir"' EXIT
# The load script runs from the state directory, with the devchain's pinned viem.
ln -s "$top/devchain/node_modules" "$dir/node_modules"
cp bench/bundler-load.mjs "$dir/"

load() {	# NAME URL [KEY]
	node "$dir/bundler-load.mjs" "$1" "$2" "$CHAIN_URL" "$N" "$C" "$LAT" "${3:-}"
}

bp=$(load blockport "$BASE_URL/v1/bundler/ethereum/devnet" "$key")
read -r _ bacc bbun bp50 bp90 <<<"$bp"
printf '%-10s %14s %14s %12s %12s\n' bundler "accepted op/s" "bundled op/s" "p50 ms" "p90 ms"
printf '%-10s %14s %14s %12s %12s\n' blockport "$bacc" "$bbun" "$bp50" "$bp90"
[ "${BENCH_ALTO:-1}" != 0 ] || exit 0

# Alto: executor and utility keys are dev accounts 5 and 6 (Blockport's submitter is 7).
keys=$(node --input-type=module -e 'import { account } from "'"$top"'/devchain/dev.mjs";
	console.log(account(5).privateKey, account(6).privateKey)')
aport=$(free_port)
bench/alto/node_modules/.bin/alto --entrypoints 0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789 \
	--executor-private-keys "${keys% *}" --utility-private-key "${keys#* }" \
	--rpc-url "$CHAIN_URL" --port "$aport" --safe-mode false > "$dir/alto.log" 2>&1 &
alto_pid=$!
for _ in $(seq 100); do
	curl -s -m 1 -H 'Content-Type: application/json' \
		-d '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' \
		"http://127.0.0.1:$aport/rpc" | grep -q result && break
	sleep 0.2
done
alto=$(load alto "http://127.0.0.1:$aport/rpc")

read -r _ aacc abun ap50 ap90 <<<"$alto"
printf '%-10s %14s %14s %12s %12s\n' alto "$aacc" "$abun" "$ap50" "$ap90"
echo "blockport / alto: accepted $(ratio "$bacc" "$aacc"), bundled $(ratio "$bbun" "$abun")," \
	"latency p50 $(ratio "$bp50" "$ap50") (N=$N, C=$C)"
