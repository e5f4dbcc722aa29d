#!/usr/bin/env bash
# Solana's JSON-RPC through Blockport against the Solana devnet directly (devchain/solana.mjs,
# LiteSVM behind a Node HTTP server), as bench/rpc.sh does for EVM against the devchain:
#   direct     getBalance POSTed to the devnet
#   blockport  the same through lighttpd + fcgi/rpc: auth, limits, compute units, the envelope
#              checks and the cache lookup (getBalance at the default commitment, finalized, is
#              state: kept only with a cache_ttl_ms, 0 here, so every call reaches the node)
# with an Enterprise key. The devnet is one Node process, so it is the ceiling: the ratio says
# what Blockport costs on top of it.
# Runs on its own: bash bench/solana.sh (BENCH_SECONDS=3, BENCH_ROUNDS=3, BLOCKPORT_PROCS=4).
# Each figure is the best of BENCH_ROUNDS runs, interleaved with the other row's runs.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. bench/lib.sh
SECS=${BENCH_SECONDS:-3}
ROUNDS=${BENCH_ROUNDS:-3}
[ -d devchain/node_modules/litesvm ] ||
	{ echo "bench: devchain/node_modules/litesvm is missing (make deps)" >&2; exit 1; }
bench_start bench-solana
[ -n "${SOLANA_URL:-}" ] || { echo "bench: the stack started no Solana devnet" >&2; exit 1; }

body='{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["11111111111111111111111111111111"]}'
post /v1/rpc/solana/devnet "$body" | grep -q '"value"' ||
	{ echo "bench: getBalance through Blockport does not answer a value" >&2; exit 1; }
cat > "$dir/balance.lua" <<EOT
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '$body'
EOT

echo "solana: lighttpd, $(nproc) cores, best of $ROUNDS interleaved ${SECS}s runs, ${BLOCKPORT_PROCS:-4} processes, wrk on the same machine"
names=("devnet direct (getBalance)" "through Blockport (getBalance)")
urls=("$SOLANA_URL" "$BASE_URL/v1/rpc/solana/devnet")
scripts=("$dir/balance.lua" "$dir/balance.lua")
best_rows 32 1
echo "blockport / direct, req/s (c=32): $(ratio "${rps[1/32]}" "${rps[0/32]}")"
echo "blockport / direct, req/s (c=1):  $(ratio "${rps[1/1]}" "${rps[0/1]}")"
echo "blockport p50 - direct p50 (c=1): $((p50s[1/1] - p50s[0/1])) us"
