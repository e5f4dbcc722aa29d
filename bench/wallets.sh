#!/usr/bin/env bash
# /v1/wallets through lighttpd against the bare FastCGI program (bench/bare.c, the ceiling of
# this architecture) served by the same lighttpd in the same run, with an Enterprise key:
#   GET  /v1/wallets/{address}, counterfactual: SQLite only (auth, the wallet row, the indexer's
#        table); "no code there" is cached per process for 1 s, so no chain read
#   GET  /v1/wallets/{address}, deployed: one eth_call (EntryPoint getNonce) to the devchain
#        per request, never cached (docs/wallets.md)
#   POST /v1/wallets/create, a new wallet each request: CREATE2 in C, one batch to the devchain
#        (eth_blockNumber + eth_getCode), one INSERT
#   POST /v1/wallets/create, the same wallet again: the same, with the existing row
# Goal (issue "Wallets"): the counterfactual GET >= 50% of the bare program's rate.
# Runs on its own: bash bench/wallets.sh (BENCH_SECONDS=3, BENCH_ROUNDS=3, BLOCKPORT_PROCS=4).
# Each figure is the best of BENCH_ROUNDS runs, interleaved with the other rows' runs.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. bench/lib.sh
SECS=${BENCH_SECONDS:-3}
ROUNDS=${BENCH_ROUNDS:-3}
bench_start bench-wallets

field() {	# NAME: a string member of the JSON on stdin
	sed -n "s/.*\"$1\":\"\\([^\"]*\\)\".*/\\1/p"
}
rpc() {		# METHOD PARAMS: a JSON-RPC call straight to the devchain
	curl -sf -H 'Content-Type: application/json' \
		-d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$1\",\"params\":$2}" "$CHAIN_URL"
}

owner=0x70997970c51812dc3a010c7d01b50e0d17dc79c8	# dev account 1: anvil signs for it
cf=$(post /v1/wallets/create "{\"owner\":\"$owner\",\"chain\":\"ethereum\",\"salt\":\"1\"}" |
	field address)
# A deployed wallet: its createAccount calldata is its init_code without the factory's 20 bytes.
made=$(post /v1/wallets/create "{\"owner\":\"$owner\",\"chain\":\"ethereum\",\"salt\":\"2\"}")
dep=$(field address <<<"$made")
init=$(field init_code <<<"$made")
factory=0x${init:2:40}
rpc eth_sendTransaction "[{\"from\":\"$owner\",\"to\":\"$factory\",\"data\":\"0x${init:42}\",\"gas\":\"0xf4240\"}]" >/dev/null
for _ in $(seq 30); do	# a process that saw no code there trusts it for up to a second
	status=$(curl -sf -H "X-API-Key: $key" "$BASE_URL/v1/wallets/$dep" | field status)
	[ "$status" = deployed ] && break
	sleep 0.1
done
[ "$status" = deployed ] || { echo "bench: wallet $dep did not deploy ($status)" >&2; exit 1; }
curl -sf -o /dev/null -H "X-API-Key: $key" "$BASE_URL/v1/wallets/$cf" ||
	{ echo "bench: GET /v1/wallets/$cf does not answer 200" >&2; exit 1; }
[ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE_URL/bench/bare/x")" = 404 ] ||
	{ echo "bench: the bare program does not answer" >&2; exit 1; }

# wrk scripts: POST bodies; "new" makes a fresh salt per request (thread number + counter).
cat > "$dir/same.lua" <<EOT
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"owner":"$owner","chain":"ethereum","salt":"1"}'
EOT
cat > "$dir/new.lua" <<EOT
local threads = 0
function setup(thread)
	threads = threads + 1
	thread:set("tid", threads)
end
function init(args)
	n = 0
	wrk.headers["Content-Type"] = "application/json"
end
function request()
	n = n + 1
	return wrk.format("POST", nil, nil, string.format(
	    '{"owner":"$owner","chain":"ethereum","salt":"%d"}', tid * 1000000000 + n))
end
EOT

echo "wallets: lighttpd, $(nproc) cores, best of $ROUNDS interleaved ${SECS}s runs, ${BLOCKPORT_PROCS:-4} processes, wrk on the same machine"
declare -A rps p50s p99s
measure() {	# NAME CONNS URL [wrk args]: one wrk run; keeps the best rate of NAME/CONNS
	local name=$1 c=$2 url=$3 out r p50 p99 bad
	shift 3
	out=$(wrk -t"$([ "$c" -lt 2 ] && echo 1 || echo 2)" -c"$c" -d"${SECS}s" --latency \
		-H "X-API-Key: $key" "$@" "$url" 2>&1)
	r=$(awk '/^Requests\/sec/ { printf "%d", $2 }' <<<"$out")
	p50=$(awk '$1 == "50%" { print $2 }' <<<"$out" | to_us)
	p99=$(awk '$1 == "99%" { print $2 }' <<<"$out" | to_us)
	# The bare program answers 404 by design; anything else must be all 2xx.
	bad=$(awk '/Non-2xx/ { print $NF }' <<<"$out")
	if [ -n "$bad" ] && [ "$name" != "bare FastCGI" ]; then
		echo "  ($name) $bad answers were not 2xx: this run does not count" >&2
		r=0
	fi
	grep 'Socket errors' <<<"$out" | sed "s/^/  ($name) /" >&2 || true
	if [ "${r:-0}" -gt "${rps[$name/$c]:-0}" ]; then
		rps["$name/$c"]=$r
		p50s["$name/$c"]=$p50
		p99s["$name/$c"]=$p99
	fi
}
names=("bare FastCGI" "GET wallet, counterfactual" "GET wallet, deployed (eth_call)"
	"POST create, new wallet" "POST create, same wallet")
printf '%-40s %10s %9s %9s\n' "run" "req/s" "p50(us)" "p99(us)"
for c in 32 1; do
	# Rounds interleave the runs, so a burst of other load on the machine hits all of them.
	for ((round = 0; round < ROUNDS; round++)); do
		measure "${names[0]}" $c "$BASE_URL/bench/bare/x"
		measure "${names[1]}" $c "$BASE_URL/v1/wallets/$cf"
		measure "${names[2]}" $c "$BASE_URL/v1/wallets/$dep"
		measure "${names[3]}" $c "$BASE_URL/v1/wallets/create" -s "$dir/new.lua"
		measure "${names[4]}" $c "$BASE_URL/v1/wallets/create" -s "$dir/same.lua"
	done
	for n in "${names[@]}"; do
		printf '%-40s %10s %9s %9s\n' "$n (c=$c)" "${rps[$n/$c]:-0}" "${p50s[$n/$c]:-0}" \
			"${p99s[$n/$c]:-0}"
	done
done
echo "GET counterfactual / bare (c=32): $(ratio "${rps[GET wallet, counterfactual/32]}" "${rps[bare FastCGI/32]}")  (goal >= 50%)"
echo "GET deployed / bare       (c=32): $(ratio "${rps[GET wallet, deployed (eth_call)/32]}" "${rps[bare FastCGI/32]}")"
echo "POST create new / bare    (c=32): $(ratio "${rps[POST create, new wallet/32]}" "${rps[bare FastCGI/32]}")"
echo "POST create same / bare   (c=32): $(ratio "${rps[POST create, same wallet/32]}" "${rps[bare FastCGI/32]}")"
echo "GET counterfactual / bare (c=1):  $(ratio "${rps[GET wallet, counterfactual/1]}" "${rps[bare FastCGI/1]}")"
echo "GET deployed / bare       (c=1):  $(ratio "${rps[GET wallet, deployed (eth_call)/1]}" "${rps[bare FastCGI/1]}")"
