#!/usr/bin/env bash
# /v1/nfts through lighttpd against the bare FastCGI program (bench/bare.c, the ceiling of this
# architecture) served by the same lighttpd in the same run, with an Enterprise key, for an
# address holding 1,000 NFTs (500 ERC-721 tokens, 500 ERC-1155 ids; bench/nfts-fill.mjs):
#   GET /v1/nfts/ethereum/owned/{address}            page 1 of 50: one count and one page
#       query on the index, and per entry the cached metadata and collection (SQLite only)
#   GET /v1/nfts/ethereum/owned/{address}?page=10&limit=100   the last page of 100
#   the 20 pages of 50 in turn: more questions than a thread keeps answers for (8), so every
#   request reads the index and the caches again (what many different addresses cost)
# cron/nftmeta has filled the metadata cache before the runs (names of the ERC-1155 ids from a
# data: URI; the ERC-721 fetches fail and back off), so the worker is idle while they run.
# Goal (issue 9): owned >= 50% of the bare program's rate.
# Runs on its own: bash bench/nfts.sh (BENCH_SECONDS=3, BENCH_ROUNDS=3, BLOCKPORT_PROCS=4).
# Each figure is the best of BENCH_ROUNDS runs, interleaved with the other rows' runs.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. bench/lib.sh
SECS=${BENCH_SECONDS:-3}
ROUNDS=${BENCH_ROUNDS:-3}
bench_start bench-nfts

owner=0x00000000000000000000000000000000000b3c41
node bench/nfts-fill.mjs --rpc "$CHAIN_URL" --owner "$owner" --count 1000 > "$dir/fill.json"
url=$BASE_URL/v1/nfts/ethereum/owned/$owner
total() {	# the owned list's total, or 0
	curl -s -H "X-API-Key: $key" "$url?limit=1" | sed -n 's/.*"total":\([0-9]*\).*/\1/p'
}
cached() {	# metadata rows cron/nftmeta has written
	sqlite3 -cmd '.timeout 5000' "$dir/blockport.db" "SELECT count(*) FROM nft_metadata"
}
for _ in $(seq 300); do
	[ "$(total)" = 1000 ] && [ "$(cached)" -ge 1000 ] && break
	sleep 0.2
done
[ "$(total)" = 1000 ] || { echo "bench: the index has $(total) of 1000 NFTs" >&2; exit 1; }
[ "$(cached)" -ge 1000 ] || echo "bench: the metadata cache has only $(cached) rows" >&2
for p in $(seq 10); do curl -s -H "X-API-Key: $key" "$url?limit=100&page=$p"; done |
	grep -q '"name":"Bench Multi"' ||
	{ echo "bench: the owned list shows no cached names" >&2; exit 1; }

# wrk script: page 1, 2, ..., 20, 1, ... per connection.
cat > "$dir/pages.lua" <<EOT
local n = 0
function request()
	n = n % 20 + 1
	return wrk.format("GET", "/v1/nfts/ethereum/owned/$owner?page=" .. n)
end
EOT

echo "nfts: lighttpd, $(nproc) cores, best of $ROUNDS interleaved ${SECS}s runs, ${BLOCKPORT_PROCS:-4} processes, wrk on the same machine"
names=("bare FastCGI" "GET owned, page 1 of 50" "GET owned, page 10 of 100"
	"GET owned, 20 pages of 50 in turn")
urls=("$BASE_URL/bench/bare/x" "$url" "$url?page=10&limit=100" "$url")
scripts=("" "" "" "$dir/pages.lua")
best_rows 32 1
echo "GET owned (50) / bare  (c=32): $(ratio "${rps[1/32]}" "${rps[0/32]}")  (goal >= 50%)"
echo "GET owned (100) / bare (c=32): $(ratio "${rps[2/32]}" "${rps[0/32]}")"
echo "GET owned, no reuse / bare (c=32): $(ratio "${rps[3/32]}" "${rps[0/32]}")"
echo "GET owned (50) / bare  (c=1):  $(ratio "${rps[1/1]}" "${rps[0/1]}")"
