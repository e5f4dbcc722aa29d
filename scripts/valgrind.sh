#!/usr/bin/env bash
# make valgrind: every FastCGI program runs under valgrind behind lighttpd; N requests (1,000 by
# default) go to each; then the stack stops and any leak or memory error fails the run.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
n=${VALGRIND_REQUESTS:-1000}
make -s -j2 all >/dev/null || exit 1
dir=$(mktemp -d /tmp/blockport-vg.XXXXXX)
mkdir -p "$dir/bin" "$dir/vg"
for f in build/fcgi/*.fcgi; do
	name=$(basename "$f")
	cat > "$dir/bin/$name" <<EOT
#!/bin/sh
exec valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect,possible \
	--errors-for-leak-kinds=definite,indirect,possible --log-file=$dir/vg/$name.%p $top/$f
EOT
	chmod +x "$dir/bin/$name"
done
mkdir -p "$dir/build"
ln -s "$dir/bin" "$dir/build/fcgi"
ln -s "$top/build/blockport" "$dir/build/blockport"
[ -d build/cron ] && ln -s "$top/build/cron" "$dir/build/cron"
BLOCKPORT_PROCS=1 bash scripts/stack.sh start "$dir/state" --test --build "$dir/build" \
	>/dev/null 2>&1 || { echo "valgrind: stack did not start"; exit 1; }
. "$dir/state/env"
export BLOCKPORT_CONFIG
# An Enterprise key, so every request reaches its handler instead of a 429.
build/blockport account create --email vg@localhost --plan enterprise >/dev/null
API_KEY=$(build/blockport key create vg@localhost --test 2>/dev/null)
body='{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}'
token=$(sed -n 's/.*"erc20_18": "\(0x[0-9a-f]*\)".*/\1/p' "$dir/state/devchain.json")
nft=$(sed -n 's/.*"erc721": "\(0x[0-9a-f]*\)".*/\1/p' "$dir/state/devchain.json")
# The bundler: a lookup in the pool and a refused op (the validation's error path).
bbody='[{"jsonrpc":"2.0","id":1,"method":"eth_getUserOperationByHash","params":["0x'$(printf '%064d' 1)'"]},'
bbody+='{"jsonrpc":"2.0","id":2,"method":"eth_sendUserOperation","params":[{"sender":"0x1"},"0x0"]}]'
for ((i = 0; i < n; i++)); do
	echo "url = \"$BASE_URL/v1/nope?i=$i\""
	echo "output = /dev/null"
	echo "write-out = \"%{http_code}\\\\n\""
	echo "header = \"X-API-Key: $API_KEY\""
	echo "next"
	echo "url = \"$BASE_URL/v1/rpc/ethereum/devnet\""
	echo "output = /dev/null"
	echo "write-out = \"%{http_code}\\\\n\""
	echo "header = \"X-API-Key: $API_KEY\""
	echo "data = \"${body//\"/\\\"}\""
	echo "next"
	echo "url = \"$BASE_URL/v1/wallets?limit=5\""
	echo "output = /dev/null"
	echo "write-out = \"%{http_code}\\\\n\""
	echo "header = \"X-API-Key: $API_KEY\""
	echo "next"
	echo "url = \"$BASE_URL/v1/gas/ethereum/prices\""
	echo "output = /dev/null"
	echo "write-out = \"%{http_code}\\\\n\""
	echo "header = \"X-API-Key: $API_KEY\""
	echo "next"
	# Tokens: dev account 0's balance list and the devchain's 18-decimal sample token.
	for t in balances/0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266 metadata/$token; do
		echo "url = \"$BASE_URL/v1/tokens/ethereum/$t\""
		echo "output = /dev/null"
		echo "write-out = \"%{http_code}\\\\n\""
		echo "header = \"X-API-Key: $API_KEY\""
		echo "next"
	done
	# NFTs: the devchain's sample ERC-721 (metadata, collection) and dev account 0's owned list.
	for t in metadata/$nft/0 collection/$nft owned/0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266; do
		echo "url = \"$BASE_URL/v1/nfts/ethereum/$t\""
		echo "output = /dev/null"
		echo "write-out = \"%{http_code}\\\\n\""
		echo "header = \"X-API-Key: $API_KEY\""
		echo "next"
	done
	echo "url = \"$BASE_URL/v1/bundler/ethereum/devnet\""
	echo "output = /dev/null"
	echo "write-out = \"%{http_code}\\\\n\""
	echo "header = \"X-API-Key: $API_KEY\""
	echo "data = \"${bbody//\"/\\\"}\""
	echo "next"
	echo "url = \"$BASE_URL/v1/webhooks?limit=5\""
	echo "output = /dev/null"
	echo "write-out = \"%{http_code}\\\\n\""
	echo "header = \"X-API-Key: $API_KEY\""
	echo "next"
done | sed '$d' > "$dir/curl.cfg"
echo "valgrind: key ${API_KEY:0:20}..."
start=$(date +%s)
curl -s -K "$dir/curl.cfg" | sort | uniq -c | sed "s/^/valgrind: status /"
echo "valgrind: $((11 * n)) requests in $(( $(date +%s) - start )) s"
ps -eo args | grep -E "^[^ ]*(valgrind|memcheck)[^ ]* .*\.fcgi" | grep -vc grep | sed "s/^/valgrind: programs under valgrind: /"
bash scripts/stack.sh stop "$dir/state"
sleep 1
bad=0
for log in "$dir"/vg/*; do
	[ -s "$log" ] || continue
	echo "== $log"
	cat "$log"
	bad=1
done
if [ $bad = 0 ]; then
	echo "valgrind: $(ls "$dir"/vg | wc -l) process logs, no leak and no error"
	rm -rf "$dir"
	echo "1 passed, 0 failed"
else
	echo "0 passed, 1 failed"
	exit 1
fi
