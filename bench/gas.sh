#!/usr/bin/env bash
# /v1/gas through lighttpd against the bare FastCGI program (bench/bare.c, the ceiling of this
# architecture) served by the same lighttpd in the same run, with an Enterprise key:
#   GET  /v1/gas/ethereum/prices: the stored sample (cron/gas keeps it fresh), one SQLite read
#   POST /v1/gas/sponsor: parse the op, the rules, one eth_call (the paymaster's senderNonce)
#        to the devchain, getHash and a secp256k1 signature in C, one BEGIN IMMEDIATE
#        transaction that counts and records the sponsorship (shared by the sponsorships a
#        process's threads have ready: lib/core/db_batch.c)
#   and, as the ceiling of the sponsor row, that eth_call sent to the node directly
#   POST /v1/gas/sponsor on the v0.7 EntryPoint: the same without the eth_call (its paymaster's
#        hash has no sender nonce); goal >= 25% of bare, as v0.6's
# Goals (issue "Gas"): prices >= 70% and sponsor >= 25% of the bare program's rate.
# Runs on its own: bash bench/gas.sh (BENCH_SECONDS=3, BENCH_ROUNDS=3, BLOCKPORT_PROCS=4).
# Each figure is the best of BENCH_ROUNDS runs, interleaved with the other rows' runs.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. bench/lib.sh
SECS=${BENCH_SECONDS:-3}
ROUNDS=${BENCH_ROUNDS:-3}
bench_start bench-gas

id=$(post /v1/gas/policies '{"name":"bench","chain":"ethereum","rules":{"max_gas_usd":"1000000"}}' |
	sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
# SimpleAccount execute(token, 0, transfer(...)) from a counterfactual sender.
op='{"sender":"0x1111111111111111111111111111111111111111","nonce":"0x0","initCode":"0x",'
op+='"callData":"0xb61d27f60000000000000000000000005fbdb2315678afecb367f032d93f642f64180aa3'
op+='0000000000000000000000000000000000000000000000000000000000000000'
op+='0000000000000000000000000000000000000000000000000000000000000060'
op+='0000000000000000000000000000000000000000000000000000000000000044'
op+='a9059cbb00000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c8'
op+='0000000000000000000000000000000000000000000000000000000000000000'
op+='00000000000000000000000000000000000000000000000000000000",'
op+='"callGasLimit":"0x186a0","verificationGasLimit":"0x16e360","preVerificationGas":"0xea60",'
op+='"maxFeePerGas":"0x77359400","maxPriorityFeePerGas":"0x3b9aca00"}'
body="{\"chain\":\"ethereum\",\"policy_id\":\"$id\",\"user_operation\":$op}"
post /v1/gas/sponsor "$body" | grep -q paymasterAndData ||
	{ echo "bench: POST /v1/gas/sponsor does not answer 200" >&2; exit 1; }
# The same op in v0.7's form for the v0.7 EntryPoint: its VerifyingPaymaster's hash has no
# sender nonce, so the sponsorship makes no eth_call (issue "EntryPoint v0.7 and v0.8").
ep07=$(sed -n 's/^entry_point_v07 = //p' "$dir/devchain.ini")
op07=${op/\"initCode\":\"0x\",/}
op07=${op07/0x1111111111111111111111111111111111111111/0x2222222222222222222222222222222222222222}
body07="{\"chain\":\"ethereum\",\"policy_id\":\"$id\",\"entry_point\":\"$ep07\",\"user_operation\":$op07}"
post /v1/gas/sponsor "$body07" | grep -q paymasterData ||
	{ echo "bench: POST /v1/gas/sponsor (v0.7) does not answer 200" >&2; exit 1; }
curl -sf -o /dev/null -H "X-API-Key: $key" "$BASE_URL/v1/gas/ethereum/prices" ||
	{ echo "bench: GET /v1/gas/ethereum/prices does not answer 200" >&2; exit 1; }
# The node's own ceiling: the paymaster's senderNonce(sender) eth_call each sponsorship makes.
pm=$(sed -n 's/^paymaster = //p' "$dir/devchain.ini")
cat > "$dir/call.lua" <<EOT
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"$pm","data":"0x9c90b4430000000000000000000000001111111111111111111111111111111111111111"},"latest"]}'
EOT
cat > "$dir/sponsor.lua" <<EOT
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '$body'
EOT
cat > "$dir/sponsor07.lua" <<EOT
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '$body07'
EOT

echo "gas: lighttpd, $(nproc) cores, best of $ROUNDS interleaved ${SECS}s runs, ${BLOCKPORT_PROCS:-4} processes, wrk on the same machine"
names=("bare FastCGI" "GET prices" "POST sponsor (signing)" "node eth_call (senderNonce)"
	"POST sponsor v0.7 (signing)")
urls=("$BASE_URL/bench/bare/x" "$BASE_URL/v1/gas/ethereum/prices" "$BASE_URL/v1/gas/sponsor"
	"$CHAIN_URL" "$BASE_URL/v1/gas/sponsor")
scripts=("" "" "$dir/sponsor.lua" "$dir/call.lua" "$dir/sponsor07.lua")
best_rows 32 1
# Only answered sponsorships are recorded: their count shows the runs were not refusals.
n=$(sqlite3 "$dir/blockport.db" "SELECT count(*) FROM gas_sponsorships")
echo "sponsorships recorded: $n"
echo "GET prices / bare   (c=32): $(ratio "${rps[1/32]}" "${rps[0/32]}")  (goal >= 70%)"
echo "POST sponsor / bare (c=32): $(ratio "${rps[2/32]}" "${rps[0/32]}")  (goal >= 25%)"
echo "node eth_call / bare (c=32): $(ratio "${rps[3/32]}" "${rps[0/32]}")  (the node's ceiling for sponsor)"
echo "POST sponsor v0.7 / bare (c=32): $(ratio "${rps[4/32]}" "${rps[0/32]}")  (goal >= 25%)"
echo "GET prices / bare   (c=1):  $(ratio "${rps[1/1]}" "${rps[0/1]}")"
echo "POST sponsor / bare (c=1):  $(ratio "${rps[2/1]}" "${rps[0/1]}")"
