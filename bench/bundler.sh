#!/usr/bin/env bash
# The bundler (/v1/bundler, cron/bundle) side by side with the Alto bundler (npm
# @pimlico/alto 0.0.20, installed here into bench/alto/ by this script, run with
# --safe-mode false, one Alto for both EntryPoints) on the same devchain (anvil, automine) in
# the same run. The load (bench/bundler-load.mjs) is the same for both: N first ops of fresh
# self-funded SimpleAccounts, signed in advance, sent C at a time; then LAT ops one after
# another; once for v0.6 (initCode), once for v0.7 (the PackedUserOperation's RPC form:
# factory/factoryData, v0.7 userOpHash); then Blockport alone with v0.6 ops from accounts
# deployed beforehand (blockport/dep: no initCode).
#   accepted ops/s   N / time until every eth_sendUserOperation answered
#   bundled ops/s    N / time from the first send until every op has a receipt
#   latency          send to receipt of one op alone, p50 and p90 (ms)
# Goals (issue 12, and "ERC-4337 as clients use it today" for v0.7): ahead of Alto on all three;
# send to receipt <= one block + 1 s (automine: 1 s).
# Alto 0.0.20 serves v0.7 as is: it deploys its EntryPointSimulations with the utility key at
# startup. Alto's safe mode does not run on anvil (its JS tracer's results refuse v0.6 ops with
# "0x00..00"), so the pair is untraced on both sides: trace_validation = false (BENCH_TRACE).
# Measured (2 loaded cores, load average 3.8-6.8, N=200), Blockport / Alto: v0.6 274.8 / 61.2
# accepted, 52.3 / 15.7 bundled op/s, p50 57 / 1,001 ms; v0.7 234.6 / 65.3, 70.2 / 13.5,
# 61 / 1,023 ms (docs/bundler.md, "Benchmark": the figures, and before the pool wake-up).
# Runs on its own: bash bench/bundler.sh (BENCH_OPS=200, BENCH_CONC=16, BENCH_LAT=10).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. bench/lib.sh
. scripts/lib.sh
N=${BENCH_OPS:-200}
C=${BENCH_CONC:-16}
LAT=${BENCH_LAT:-10}

# Like with like: Alto runs with --safe-mode false (no ERC-7562 tracing), so Blockport's devnet
# runs with trace_validation = false (BENCH_TRACE=auto: the rules, traced on anvil).
# BENCH_EXTRA_CONFIG's lines (bench/lib.sh) come after that one.
extra=$(mktemp /tmp/blockport-bench-bundler.XXXXXX.ini)
printf '[chain ethereum.devnet]\ntrace_validation = %s\n' "${BENCH_TRACE:-false}" > "$extra"
[ -z "${BENCH_EXTRA_CONFIG:-}" ] || cat "$BENCH_EXTRA_CONFIG" >> "$extra"
BENCH_EXTRA_CONFIG=$extra

# BENCH_ALTO=0: Blockport's figures alone (bench/cluster.sh: the pool's work on each engine).
if [ "${BENCH_ALTO:-1}" != 0 ] && [ ! -x bench/alto/node_modules/.bin/alto ]; then
	echo "bench: installing @pimlico/alto 0.0.20 into bench/alto/" >&2
	(cd bench/alto && npm install --no-audit --no-fund --loglevel=error >&2)
fi
[ -d devchain/node_modules ] || (cd devchain && npm ci --no-audit --no-fund --loglevel=error)

bench_start bench-bundler
alto_pid=
trap '[ -z "$alto_pid" ] || kill "$alto_pid" 2>/dev/null; bash scripts/stack.sh stop "$dir" >/dev/null 2>&1; bench_engine_stop "$dir"; rm -rf "$dir" "$extra"' EXIT
# The load script runs from the state directory, with the devchain's pinned viem.
ln -s "$top/devchain/node_modules" "$dir/node_modules"
cp bench/bundler-load.mjs "$dir/"
EP06=0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789
EP07=0x0000000071727De22E5E9d8BAf0edAc6f37da032

load() {	# NAME URL VERSION [KEY [deployed]]
	node "$dir/bundler-load.mjs" "$1" "$2" "$CHAIN_URL" "$N" "$C" "$LAT" "$3" "${4:-}" "${5:-}"
}
row() {	# the load's line: NAME ACCEPTED BUNDLED P50 P90
	printf '%-14s %14s %14s %12s %12s\n' "$@"
}

echo "load average $(cut -d' ' -f1-3 /proc/loadavg); N=$N, C=$C, LAT=$LAT; Blockport" \
	"trace_validation = ${BENCH_TRACE:-false}, Alto --safe-mode false"
row bundler "accepted op/s" "bundled op/s" "p50 ms" "p90 ms"
# "blockport" first: bench/cluster.sh takes that line's accepted op/s.
out=$(load blockport "$BASE_URL/v1/bundler/ethereum/devnet" 0.6 "$key")	# a failed load ends the bench
read -r _ bacc bbun bp50 bp90 <<<"$out"
row blockport "$bacc" "$bbun" "$bp50" "$bp90"
out=$(load blockport/0.7 "$BASE_URL/v1/bundler/ethereum/devnet" 0.7 "$key")
read -r _ bacc7 bbun7 bp507 bp907 <<<"$out"
row blockport/0.7 "$bacc7" "$bbun7" "$bp507" "$bp907"
# The ops most traffic is: from accounts deployed already (no factory), v0.6 (BENCH_TRACE=auto:
# the static pass of the rules answers most of these without the steps' trace).
out=$(load blockport/dep "$BASE_URL/v1/bundler/ethereum/devnet" 0.6 "$key" deployed)
read -r _ bacc6d bbun6d bp506d bp906d <<<"$out"
row blockport/dep "$bacc6d" "$bbun6d" "$bp506d" "$bp906d"
[ "${BENCH_ALTO:-1}" != 0 ] || exit 0

# Alto: executor and utility keys are dev accounts 5 and 6 (Blockport's submitter is 7). One
# Alto serves both EntryPoints; for v0.7 it deploys its EntryPointSimulations (and
# PimlicoSimulations) contracts with the utility key through the CREATE2 deployer at startup
# (--deploy-simulations-contract, on by default), which it then eth_calls with a state override.
keys=$(node --input-type=module -e 'import { account } from "'"$top"'/devchain/dev.mjs";
	console.log(account(5).privateKey, account(6).privateKey)')
aport=$(free_port)
bench/alto/node_modules/.bin/alto --entrypoints "$EP06,$EP07" \
	--executor-private-keys "${keys% *}" --utility-private-key "${keys#* }" \
	--rpc-url "$CHAIN_URL" --port "$aport" --safe-mode false > "$dir/alto.log" 2>&1 &
alto_pid=$!
for _ in $(seq 150); do
	curl -s -m 1 -H 'Content-Type: application/json' \
		-d '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' \
		"http://127.0.0.1:$aport/rpc" | grep -q result && break
	sleep 0.2
done
out=$(load alto "http://127.0.0.1:$aport/rpc" 0.6)
read -r _ aacc abun ap50 ap90 <<<"$out"
row alto "$aacc" "$abun" "$ap50" "$ap90"
out=$(load alto/0.7 "http://127.0.0.1:$aport/rpc" 0.7)
read -r _ aacc7 abun7 ap507 ap907 <<<"$out"
row alto/0.7 "$aacc7" "$abun7" "$ap507" "$ap907"
echo "blockport / alto v0.6: accepted $(ratio "$bacc" "$aacc"), bundled $(ratio "$bbun" "$abun")," \
	"latency p50 $(ratio "$bp50" "$ap50"), p90 $(ratio "$bp90" "$ap90")"
echo "blockport / alto v0.7: accepted $(ratio "$bacc7" "$aacc7"), bundled $(ratio "$bbun7" "$abun7")," \
	"latency p50 $(ratio "$bp507" "$ap507"), p90 $(ratio "$bp907" "$ap907")"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
