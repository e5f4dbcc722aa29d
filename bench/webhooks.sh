#!/usr/bin/env bash
# Webhooks (docs/webhooks.md), bench/webhooks.mjs against the release build behind lighttpd:
# signed deliveries per second from cron/deliver to a local HTTPS receiver that verifies each
# signature (goal >= 2,000/s; baseline: node's own keep-alive client to the same receiver), and
# the time from a mined block to the receiver's arrival at confirmations 0 with the indexer and
# the worker in loop mode (goal p50 <= 1 s; baseline: the receipt's own wait).
# Format A's throughput, then B's the same way; the latency of both on the same blocks, a webhook
# of each watching one address (docs/webhooks.md). Runs on its own: bash bench/webhooks.sh.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. bench/lib.sh
N=${BENCH_WEBHOOK_EVENTS:-20000}
M=${BENCH_WEBHOOK_BLOCKS:-30}
bench_start bench-webhooks
# The stack's worker steps aside: the driver runs its own against the receiver's CA.
[ -f "$dir/deliver.pid" ] && kill "$(cat "$dir/deliver.pid")" 2>/dev/null || true
cat >> "$dir/blockport.ini" <<EOT

[webhooks]
ca_file = $dir/webhook-ca.pem
EOT
ln -sfn ../devchain/node_modules bench/node_modules 2>/dev/null || true
PG_URL=$PG_URL BASE_URL=$BASE_URL CHAIN_URL=$CHAIN_URL BLOCKPORT_CONFIG=$BLOCKPORT_CONFIG BENCH_KEY=$key STACK_DIR=$dir BLOCKPORT_BUILD=$top/build BLOCKPORT_STACK=$dir \
	node bench/webhooks.mjs "$N" "$M" 256
