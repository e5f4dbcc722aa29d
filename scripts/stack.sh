#!/usr/bin/env bash
# Starts and stops the whole Blockport stack on loopback: the devchain (when installed), a
# config and database in a state directory, the web server with every FastCGI program, and the
# workers. Used by `make run` (in ./run) and by the end-to-end tests (in a temporary directory).
#
#   stack.sh run [--port P] [--chain-port P] [--server lighttpd|apache] [--fresh]
#                [--dir DIR] [--build DIR] [--extra-config FILE]  foreground, Ctrl-C stops
#   stack.sh start DIR [--port P] [--chain-port P] [--server S] [--test] [--keep] [--build DIR]
#                [--extra-config FILE] [--join DIR1] [--no-workers]
#   stack.sh stop DIR
#
# --extra-config (make run EXTRA_CONFIG=FILE) appends FILE's lines to the config written here;
# a section or key given again there wins over what is written (an upstream adds a fallback).
# start writes DIR/env (BASE_URL, API_KEY, ...) for the tests and returns once all is up; it
# starts from an empty database and a new chain unless --keep. run keeps both across runs
# (--fresh starts over), holds a lock on DIR so a second run there refuses at once, and puts
# the devchain on PORT + 465 (8545 for 8080) unless --chain-port. Every process of a stack runs
# in its own session, so a Ctrl-C reaches only run, which stops the web server first.
# --join DIR1 starts one more web head of the stack in DIR1 (scripts/cluster.sh): DIR1's config
# (its database must be shared: PostgreSQL), key and devchain, nothing started or migrated
# twice. --no-workers starts no cron workers.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

. "$top/scripts/lib.sh"

chain_section() {	# NAME.NET KIND CHAIN_ID TESTNET [LINE...]: one [chain] block of the config
	local id=$3
	echo "[chain $1]"
	echo "kind = $2"
	[ -z "$id" ] || echo "chain_id = $id"	# none for Solana
	echo "testnet = $4"
	shift 4
	[ $# = 0 ] || printf '%s\n' "$@"
}

gas_config() {	# DIR TEST: gas lines of the devnet section, then the prices (docs/gas.md)
	local dir=$1 test=$2
	# The VerifyingPaymaster's signer: dev account 9 of the public dev mnemonic (DEV ONLY).
	if [ -f "$dir/devchain.json" ]; then
		(umask 077; node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(
			process.argv[1], "utf8")).paymaster_signer_key + "\n")' "$dir/devchain.json" \
			> "$dir/paymaster.key")
		echo "paymaster_key_file = $dir/paymaster.key"
	fi
	[ "$test" = 1 ] && echo "gas_priority_floor = 0.000000001"
	echo
	echo "# USD prices (fixed; a price sampler may keep them later)."
	echo "[prices ethereum]"
	echo "native = 3000"
}

token_config() {	# DIR TEST: USD prices of the devchain's sample tokens, in [prices ethereum]
	if [ "$2" = 1 ]; then	# tests/e2e/tokens.test.mjs installs these tokens and aggregators
		echo "0x00000000000000000000000000000000000c1a10 = chainlink:0x00000000000000000000000000000000000c1a11"
		echo "0x00000000000000000000000000000000000c1a20 = chainlink:0x00000000000000000000000000000000000c1a21"
	fi
	[ -f "$1/devchain.json" ] || return 0
	node -e 'const t = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).tokens
		process.stdout.write(`${t.erc20_18.toLowerCase()} = 2.5\n${t.erc20_6.toLowerCase()} = 1\n`)' \
		"$1/devchain.json"
}

token_list() {	# DIR: a Uniswap token list with the BPT sample token's logo, and its config line
	[ -f "$1/devchain.json" ] || return 0
	node -e 'const fs = require("fs"), t = JSON.parse(fs.readFileSync(process.argv[1] + "/devchain.json",
		"utf8")).tokens; fs.writeFileSync(process.argv[1] + "/tokenlist.json", JSON.stringify({ name: "test",
		tokens: [{ chainId: 31337, address: t.erc20_18, logoURI: "https://logos.example/bpt.png" }] }))' "$1"
	echo "token_list = $1/tokenlist.json"
}

bundler_config() {	# DIR: the bundler's lines of the devnet section (docs/bundler.md)
	local dir=$1
	# The bundle submitter's key: dev account 7 of the public dev mnemonic (DEV ONLY), which no
	# test sends from and which is not the paymaster's signer (account 9).
	[ -f "$dir/devchain.json" ] || return 0
	(umask 077; node --input-type=module -e 'import { account } from "'"$top"'/devchain/dev.mjs";
		process.stdout.write(account(7).privateKey + "\n")' > "$dir/bundler.key")
	echo "bundler_key = $dir/bundler.key"
	# The eth-infinitism spec tests' debug_bundler_* methods, on the test stack only.
	[ "${2:-0}" = 0 ] || echo "debug_bundler = true"
}

write_config() {	# DIR CHAIN_PORT TEST [STUB_PORT DEAD_PORT GO_STUB_PORT FROZEN_PORT LAG_PORT]
	local dir=$1 cport=$2 test=$3 sport=${4:-} dport=${5:-} gport=${6:-} fport=${7:-}
	local lport=${8:-}
	local chain=http://127.0.0.1:$cport stub=http://127.0.0.1:$sport dead=http://127.0.0.1:$dport
	{
		echo "# Written by scripts/stack.sh for this run."
		echo "[server]"
		echo "database = $dir/blockport.db"
		echo "allow_private_urls = true"
		# NFT metadata (tests/e2e/nfts.test.mjs): the test serves the gateways on NFT_PORT.
		[ -z "${NFT_PORT:-}" ] || printf '%s\n' \
			"ipfs_gateway = http://127.0.0.1:$NFT_PORT/ipfs/" \
			"arweave_gateway = http://127.0.0.1:$NFT_PORT/ar/" "nft_retry_seconds = 2"
		if [ "$test" = 1 ]; then
			echo "anon_rps = 5"
			echo "key_cache_seconds = 2"
			echo "max_body = 65536"
			echo "gas_sample_max_age = 1"
			# The default: a mint or burn the indexer sees makes the supply stale anyway.
			echo "token_refresh_seconds = 60"
			# Small, so tests/e2e/tokens.test.mjs can airdrop past the cut; its other
			# holders hold at most 5 tokens.
			echo "token_balances_max = 8"
			token_list "$dir"
			echo "upstream_first_byte_ms = 500"
			echo
			echo "# Small plans so the tests can reach each limit quickly."
			echo "[plan daily]"
			echo "rps = 1000"
			echo "rpd = 15"
			echo "cups = 0"
			echo "[plan cu]"
			echo "rps = 1000"
			echo "rpd = 0"
			echo "cups = 60"
			echo "burst = 0"	# counted per calendar second: exact counts to test
			echo "[plan ws]"
			echo "rps = 1000"
			echo "burst = 0"
			echo "ws_connections = 3"
			echo "[plan sponsor]"
			echo "rps = 1000"
			echo "sponsor_usd_per_day = 50"
			echo "# The webhook fences (tests/e2e/webhooks-delivery.test.mjs)."
			echo "[plan whcap]"
			echo "webhook_deliveries = 5"
			echo "[plan whfence]"
			echo "webhook_events_day = 5"
			echo "webhook_backlog = 3"
		fi
		if [ -n "${SOLANA_PORT:-}" ]; then
			echo "# Solana: devchain/solana.mjs, a devnet over LiteSVM (not a validator)."
			chain_section solana.devnet solana "" true "default = true" \
				"upstream = http://127.0.0.1:$SOLANA_PORT"
			# The devnet again as a mainnet: test keys are refused there (tests/e2e/solana.test.mjs).
			[ "$test" = 0 ] || chain_section solana.mainnet solana "" false \
				"upstream = http://127.0.0.1:$SOLANA_PORT"
		fi
		echo
		chain_section ethereum.devnet evm 31337 true "default = true" "confirmations = 0" \
			"upstream = $chain"
		[ -f "$dir/devchain.ini" ] && cat "$dir/devchain.ini"
		bundler_config "$dir" "$test"
		gas_config "$dir" "$test"
		token_config "$dir" "$test"
		if [ "$test" = 1 ]; then
			echo
			echo "# A mainnet that is the devchain again, so the tests can see live and test keys"
			echo "# treated differently; nothing else about it is real."
			chain_section ethereum.mainnet evm 31337 false "index = false" "upstream = $chain"
			# Its ERC-4337 contracts (no paymaster key): live keys make mainnet wallets and
			# policies there, which test keys must not see (tenant fences).
			if [ -f "$dir/devchain.ini" ]; then
				grep -E '^(entry_point|account_factory|account_implementation) = ' \
					"$dir/devchain.ini"
			fi
			echo
			echo "# A chain with only a mainnet: a test key has no network for it on REST paths."
			chain_section polygon.mainnet evm 31337 false "index = false" "upstream = $chain"
			echo
			echo "# JSON-RPC failover (tests/e2e/rpc.test.mjs): a dead port, then the devchain;"
			echo "# archive_depth 2 makes old blocks archive reads on a short chain."
			chain_section ethereum.failover evm 31337 true "archive_depth = 2" "index = false" \
				"upstream = $dead" "upstream = $chain"
			echo "# An upstream answering 503 without a JSON-RPC body, then the devchain."
			chain_section ethereum.failover503 evm 31337 true "index = false" \
				"upstream = $stub/status/503" "upstream = $chain"
			echo
			echo "# Solana's scripted stub (tests/e2e/solana-stub.mjs), for what the devnet cannot"
			echo "# play: a 40 MiB answer, the last body forwarded."
			chain_section solana.stub solana "" true "upstream = $stub"
			echo "# A JSON-RPC error in an HTTP 500 first: it must reach the client, not fail over."
			chain_section solana.flaky solana "" true "upstream = $stub/rpc-error-500" \
				"upstream = $stub"
			echo "# Every upstream down."
			chain_section solana.down solana "" true "upstream = $dead" \
				"upstream = $stub/status/429"
			echo
			echo "# Method smuggling (tests/e2e/rpc-smuggling.test.mjs): tests/e2e/go-node-stub.mjs,"
			echo "# a stub that reads requests the way a node written in Go does."
			chain_section ethereum.gonode evm 31337 true "index = false" "gas_sample = false" \
				"cache = false" "upstream = http://127.0.0.1:$gport"
			echo "# A node the test freezes (tests/e2e/frozen.test.mjs), then the devchain."
			chain_section ethereum.frozen evm 31337 true "index = false" \
				"upstream = http://127.0.0.1:$fport" "upstream = $chain"
			echo "# The response cache (tests/e2e/rpc-cache.test.mjs): the devchain, with blocks"
			echo "# final 4 deep and answers near the head kept 1 s."
			chain_section ethereum.cached evm 31337 true "index = false" "gas_sample = false" \
				"finality_depth = 4" "cache_ttl_ms = 1000" "upstream = $chain"
			echo "# A primary and a fallback that lags, both scripted by the test (LAG_PORT)."
			chain_section ethereum.lagging evm 31337 true "index = false" "gas_sample = false" \
				"finality_depth = 4" "upstream = http://127.0.0.1:$lport/primary" \
				"upstream = http://127.0.0.1:$lport/fallback"
			echo "# NFT metadata fetches with the SSRF guard on (tests/e2e/nfts.test.mjs)."
			chain_section ethereum.ssrf evm 31337 true "index = false" "gas_sample = false" \
				"allow_private_urls = false" "upstream = $chain"
		fi
	} > "$dir/blockport.ini"
}

webhooks_config() {	# DIR SMTP_PORT: webhook delivery of the test stack (docs/webhooks.md)
	local dir=$1 mport=$2
	echo
	echo "# Webhooks: receivers' CA written by tests/e2e/webhooks-delivery.test.mjs, retries a"
	echo "# second apart, the e-mail of a paused webhook to the test's SMTP sink."
	echo "[webhooks]"
	echo "ca_file = $dir/webhook-ca.pem"
	echo "retry_schedule = 1,1,1,1,1"
	echo "retry_schedule_b = 1,1,1,1,1,1,1"
	echo "timeout_ms = 3000"
	echo "[smtp]"
	echo "url = smtp://127.0.0.1:$mport"
	echo "from = blockport@localhost"
}

has_code() {	# URL ADDRESS: true when the chain at URL has code at ADDRESS
	local call='{"jsonrpc":"2.0","id":1,"method":"eth_getCode","params":["'$2'","latest"]}'
	curl -s -m 5 -H 'Content-Type: application/json' -d "$call" "$1" |
		grep -q '"result":"0x[0-9a-f]'
}

forget_state() {	# DIR: the database and all beside it, and the devchain's state
	# -r: the database's siblings include directories (DATABASE.ws, the WebSocket slots), next
	# to its -wal, -shm, limits file, heads feeds and wake files.
	rm -rf -- "$1"/blockport.db* "$1"/devchain-state.json "$1"/devchain.ini "$1"/devchain.json \
		"$1"/dev.key
}

start_devchain() {	# DIR PORT KEEP: with KEEP, the chain's state persists in DIR
	local dir=$1 port=$2 keep=$3 state=$1/devchain-state.json paymaster
	local args=()
	if [ ! -x "$top/devchain/start.sh" ] || [ ! -d "$top/devchain/node_modules" ]; then
		echo "stack: devchain not installed (make deps); RPC upstream 127.0.0.1:$port is down" >&2
		return 0
	fi
	# The states anvil keeps of old blocks past what it holds in memory go to disk: into DIR,
	# not ~/.foundry/anvil/tmp, where a chain stopped by a signal left them (close to 1 GB a
	# test run's chain; 74 GB had gathered there when it was found).
	args=(--cache-path "$dir/devchain-cache")
	# anvil writes its state on exit and every 10 s, and reads it back on the next start.
	[ "$keep" = 0 ] || args+=(--state "$state" --state-interval 10)
	if [ "$keep" = 1 ] && [ ! -s "$state" ] && [ -s "$dir/blockport.db" ]; then
		echo "stack: no saved devchain state in $dir: the chain starts anew, but the database" \
			"keeps what was indexed from the old one (make run FRESH=1 starts both anew)" >&2
	fi
	setsid "$top/devchain/start.sh" "$port" ${DEVCHAIN_ARGS:-} "${args[@]}" \
		> "$dir/devchain.log" 2>&1 9>&- &
	echo $! > "$dir/devchain.pid"
	wait_http "http://127.0.0.1:$port" 100
	# A kept chain has its contracts already: deploying again would move the paymaster.
	paymaster=$(sed -n 's/^paymaster = //p' "$dir/devchain.ini" 2>/dev/null || true)
	if [ "$keep" = 1 ] && [ -n "$paymaster" ] && has_code "http://127.0.0.1:$port" "$paymaster"
	then
		return 0
	fi
	node "$top/devchain/deploy.mjs" --rpc "http://127.0.0.1:$port" --out "$dir/devchain.json" \
		--ini "$dir/devchain.ini" 2>> "$dir/devchain.log"
}

start_solana_stub() {	# DIR PORT: the scripted Solana upstream of the tests
	local dir=$1 port=$2
	setsid node "$top/tests/e2e/solana-stub.mjs" "$port" > "$dir/solana-stub.log" 2>&1 9>&- &
	echo $! > "$dir/solana-stub.pid"
	wait_http "http://127.0.0.1:$port/count" 100
}

start_solana_devnet() {	# DIR PORT [ARGS...]: devchain/solana.mjs, the Solana devnet (LiteSVM)
	local dir=$1 port=$2
	shift 2
	setsid node "$top/devchain/solana.mjs" "$port" "$@" > "$dir/solana-devnet.log" 2>&1 9>&- &
	echo $! > "$dir/solana-devnet.pid"
	wait_http "http://127.0.0.1:$port/health" 100
}

start_go_stub() {	# DIR PORT: the stand-in for a Go node of the smuggling tests
	local dir=$1 port=$2
	setsid node "$top/tests/e2e/go-node-stub.mjs" "$port" > "$dir/go-node-stub.log" 2>&1 9>&- &
	echo $! > "$dir/go-node-stub.pid"
	wait_http "http://127.0.0.1:$port/count" 100
}

start_relay() {	# DIR PORT CHAIN_PORT: the node tests/e2e/frozen.test.mjs freezes
	local dir=$1 port=$2
	setsid node "$top/tests/e2e/relay.mjs" "$port" "$3" > "$dir/relay.log" 2>&1 9>&- &
	echo $! > "$dir/relay.pid"
	wait_port "$port" relay
}

start_lighttpd() {	# DIR PORT BUILD
	local dir=$1
	BLOCKPORT_PORT=$2 BLOCKPORT_BIN=$3/fcgi BLOCKPORT_RUN=$dir \
	BLOCKPORT_CONFIG=$dir/blockport.ini BLOCKPORT_PROCS=${BLOCKPORT_PROCS:-4} \
	BLOCKPORT_LIGHTTPD_DIR=$top/lighttpd BLOCKPORT_WS_PORT=${BLOCKPORT_WS_PORT:-} \
		setsid lighttpd -D -f "$top/lighttpd/blockport.conf" >> "$dir/lighttpd.out" 2>&1 9>&- &
	echo $! > "$dir/web.pid"
}

start_apache() {	# DIR PORT BUILD
	local dir=$1 prog name
	# Apache runs its workers, and the pools their programs, as www-data: they write the state,
	# and the wake files they touch (lib/core/db.h's channels) that the workers, started as root
	# after this, would otherwise make root's: the bundler's pool wake-up would never fire.
	touch "$dir"/blockport.db.heads "$dir"/blockport.db.pending "$dir"/blockport.db.pool
	chown -R www-data:www-data "$dir" 2>/dev/null || true
	# Each program's pool first (apache/fcgi-pool.sh), recorded in pools.pid, which stop ends
	# after Apache; Apache starts once every socket is there (a stopped run's are gone first).
	rm -f "$dir"/fcgi/*.sock
	for prog in "$3"/fcgi/*.fcgi; do
		name=${prog##*/}
		BLOCKPORT_BIN=$3/fcgi BLOCKPORT_RUN=$dir BLOCKPORT_CONFIG=$dir/blockport.ini \
		BLOCKPORT_PROCS=${BLOCKPORT_PROCS:-4} \
			setsid "$top/apache/fcgi-pool.sh" "${name%.fcgi}" >> "$dir/pools.log" 2>&1 9>&- &
		echo $! >> "$dir/pools.pid"
	done
	for prog in "$3"/fcgi/*.fcgi; do
		name=${prog##*/}
		wait_socket "$dir/fcgi/${name%.fcgi}.sock" || { cat "$dir/pools.log" >&2; return 1; }
	done
	BLOCKPORT_PORT=$2 BLOCKPORT_BIN=$3/fcgi BLOCKPORT_RUN=$dir \
	BLOCKPORT_WS_PORT=${BLOCKPORT_WS_PORT:-0} \
		setsid apache2 -f "$top/apache/blockport.conf" -DFOREGROUND >> "$dir/apache.out" 2>&1 \
		9>&- &
	echo $! > "$dir/web.pid"
}

start_websocketd() {	# DIR PORT BUILD: /v1/ws/ (docs/websocket.md), one ws/subscribe per connection
	local dir=$1 port=$2 build=$3
	command -v websocketd > /dev/null && [ -x "$build/ws/subscribe" ] || return 0
	# Each connection's process holds one inotify instance to be woken by new blocks; past
	# the kernel's 128 a user, the rest poll every 100 ms. Raised where we may (root).
	local inst=/proc/sys/fs/inotify/max_user_instances
	if [ -w "$inst" ] && [ "$(cat "$inst")" -lt 65536 ]; then
		echo 65536 > "$inst" 2>/dev/null || true
	fi
	BLOCKPORT_CONFIG=$dir/blockport.ini setsid websocketd --address 127.0.0.1 --port "$port" \
		--loglevel error \
		--passenv PATH,BLOCKPORT_CONFIG,ASAN_OPTIONS,UBSAN_OPTIONS,LSAN_OPTIONS \
		"$build/ws/subscribe" >> "$dir/websocketd.log" 2>&1 9>&- &
	echo $! > "$dir/ws.pid"
	export BLOCKPORT_WS_PORT=$port
}

start_workers() {	# DIR BUILD: the cron workers in loop mode, each recorded in DIR/workers.pid
	local dir=$1 build=$2
	# The chain indexer (docs/indexer.md); a short interval so the tests see blocks quickly.
	if [ -x "$build/cron/indexer" ]; then
		BLOCKPORT_CONFIG=$dir/blockport.ini setsid "$build/cron/indexer" --loop --interval 200 \
			>> "$dir/indexer.log" 2>&1 9>&- &
		echo $! >> "$dir/workers.pid"
	fi
	# The bundle submitter (docs/bundler.md).
	if [ -x "$build/cron/bundle" ]; then
		BLOCKPORT_CONFIG=$dir/blockport.ini setsid "$build/cron/bundle" --loop --interval 200 \
			>> "$dir/bundle.log" 2>&1 9>&- &
		echo $! >> "$dir/workers.pid"
	fi
	# Webhook delivery (docs/webhooks.md); its pid also in deliver.pid for the kill tests.
	if [ -x "$build/cron/deliver" ]; then
		BLOCKPORT_CONFIG=$dir/blockport.ini setsid "$build/cron/deliver" --loop --interval 200 \
			>> "$dir/deliver.log" 2>&1 9>&- &
		echo $! >> "$dir/workers.pid"
		echo $! > "$dir/deliver.pid"
	fi
	# The gas sampler (docs/gas.md).
	if [ -x "$build/cron/gas" ]; then
		BLOCKPORT_CONFIG=$dir/blockport.ini setsid "$build/cron/gas" --loop --interval 1000 \
			>> "$dir/gas.log" 2>&1 9>&- &
		echo $! >> "$dir/workers.pid"
	fi
	# The price sampler: Chainlink aggregators of the [prices] sections (docs/tokens.md).
	if [ -x "$build/cron/prices" ]; then
		BLOCKPORT_CONFIG=$dir/blockport.ini setsid "$build/cron/prices" --loop --interval 1000 \
			>> "$dir/prices.log" 2>&1 9>&- &
		echo $! >> "$dir/workers.pid"
	fi
	# The NFT metadata filler (docs/nfts.md).
	if [ -x "$build/cron/nftmeta" ]; then
		BLOCKPORT_CONFIG=$dir/blockport.ini setsid "$build/cron/nftmeta" --loop --interval 500 \
			>> "$dir/nftmeta.log" 2>&1 9>&- &
		echo $! >> "$dir/workers.pid"
	fi
	# The pending-transaction follower of the WebSocket subscriptions (docs/websocket.md).
	if [ -x "$build/cron/pending" ]; then
		BLOCKPORT_CONFIG=$dir/blockport.ini setsid "$build/cron/pending" --loop --interval 200 \
			>> "$dir/pending.log" 2>&1 9>&- &
		echo $! >> "$dir/workers.pid"
	fi
}

cmd_start() {
	local dir=$1; shift
	local port="" cport="" server=lighttpd test=0 keep=0 build="$top/build" extra="" join=""
	local workers=1
	while [ $# -gt 0 ]; do
		case $1 in
		--port) port=$2; shift 2 ;;
		--chain-port) cport=$2; shift 2 ;;
		--server) server=$2; shift 2 ;;
		--test) test=1; shift ;;
		--keep) keep=1; shift ;;
		--build) build=$2; shift 2 ;;
		--extra-config) extra=$2; shift 2 ;;
		--join) join=$(cd "$2" && pwd); shift 2 ;;
		--no-workers) workers=0; shift ;;
		*) echo "stack: unknown option $1" >&2; exit 2 ;;
		esac
	done
	if [ -n "$extra" ] && { [ ! -f "$extra" ] || [ ! -r "$extra" ]; }; then
		echo "stack: EXTRA_CONFIG $extra is not a readable file" >&2
		exit 2
	fi
	if [ -n "$join" ]; then
		join_start "$dir" "$join" "$port" "$server" "$build" "$extra" "$workers"
		return
	fi
	[ -n "$port" ] || port=$(free_port)
	[ -n "$cport" ] || cport=$(free_port)
	# The port tests/e2e/nfts.test.mjs serves metadata and the IPFS/Arweave gateways on.
	[ "$test" = 0 ] || [ -n "${NFT_PORT:-}" ] || NFT_PORT=$(free_port)
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	# Every process of the stack carries this, so stop can find any that outlived its pid file.
	export BLOCKPORT_STACK=$dir
	rm -f "$dir"/*.sock*
	[ "$keep" = 1 ] || forget_state "$dir"
	start_devchain "$dir" "$cport" "$keep"
	# The Solana devnet, when its package is installed; shorter slots for the tests, so that
	# finalized comes in under a second. Its chain lives in memory: each start is a new one.
	SOLANA_PORT=""
	if [ -d "$top/devchain/node_modules/litesvm" ]; then
		SOLANA_PORT=$(free_port)
		while [ "$SOLANA_PORT" = "$port" ] || [ "$SOLANA_PORT" = "$cport" ]; do
			SOLANA_PORT=$(free_port)
		done
		if [ "$test" = 1 ]; then
			start_solana_devnet "$dir" "$SOLANA_PORT" --slot-ms 200 --finality 4
		else
			start_solana_devnet "$dir" "$SOLANA_PORT"
		fi
	fi
	local sport="" dport="" gport="" fport="" lport=""
	if [ "$test" = 1 ]; then
		sport=$(free_port)
		dport=$(free_port)	# nothing listens there: the dead upstream of the failover tests
		start_solana_stub "$dir" "$sport"
		gport=$(free_port)
		while [ "$gport" = "$dport" ]; do gport=$(free_port); done
		start_go_stub "$dir" "$gport"
		fport=$(free_port)
		while [ "$fport" = "$dport" ] || [ "$fport" = "$port" ]; do fport=$(free_port); done
		start_relay "$dir" "$fport" "$cport"
		lport=$(free_port)	# nothing listens until tests/e2e/rpc-cache.test.mjs does
		while [ "$lport" = "$dport" ] || [ "$lport" = "$port" ] || [ "$lport" = "$gport" ] ||
		    [ "$lport" = "$fport" ]; do lport=$(free_port); done
	fi
	write_config "$dir" "$cport" "$test" "$sport" "$dport" "$gport" "$fport" "$lport"
	local mport=""
	if [ "$test" = 1 ]; then
		mport=$(free_port)	# the webhook tests' SMTP sink listens here
		while [ "$mport" = "$lport" ] || [ "$mport" = "$dport" ]; do mport=$(free_port); done
		webhooks_config "$dir" "$mport" >> "$dir/blockport.ini"
	fi
	export BLOCKPORT_CONFIG=$dir/blockport.ini
	if [ -n "$extra" ]; then
		# Last, so what it gives again wins (lib/core/config.c); a missing final newline is added.
		{ echo; echo "# From EXTRA_CONFIG=$extra (its lines win over those above)."
		  cat "$extra"; echo; } >> "$dir/blockport.ini"
	fi
	"$build/blockport" migrate >> "$dir/migrate.log" 2>&1 ||
		{ cat "$dir/migrate.log" >&2; return 1; }
	# The dev account and its key, made once per database (dev.key holds the key).
	"$build/blockport" account list | grep '^[0-9]* *dev@localhost ' > /dev/null ||
		"$build/blockport" account create --email dev@localhost > /dev/null
	local key
	key=$(cat "$dir/dev.key" 2>/dev/null || true)
	if [ -z "$key" ] || ! "$build/blockport" key list dev@localhost |
	    grep -E "^[0-9]+ +dev@localhost +${key:0:19} +test +active " > /dev/null; then
		key=$("$build/blockport" key create dev@localhost --test --name dev 2>/dev/null)
		(umask 077; echo "$key" > "$dir/dev.key")
	fi
	local wport
	wport=$(free_port)
	while [ "$wport" = "$port" ]; do wport=$(free_port); done
	start_websocketd "$dir" "$wport" "$build"
	case $server in
	lighttpd) start_lighttpd "$dir" "$port" "$build" ;;
	apache) start_apache "$dir" "$port" "$build" ;;
	*) echo "stack: unknown server $server" >&2; exit 2 ;;
	esac
	wait_http "http://127.0.0.1:$port/v1/" 100
	[ "$workers" = 0 ] || start_workers "$dir" "$build"
	cat > "$dir/env" <<EOT
BASE_URL=http://127.0.0.1:$port
CHAIN_URL=http://127.0.0.1:$cport
API_KEY=$key
STACK_DIR=$dir
BLOCKPORT_CONFIG=$dir/blockport.ini
BLOCKPORT_BUILD=$build
WEB_SERVER=$server
EOT
	[ -z "${BLOCKPORT_WS_PORT:-}" ] || echo "WS_URL=ws://127.0.0.1:$port" >> "$dir/env"
	[ -z "$sport" ] || echo "SOLANA_STUB_URL=http://127.0.0.1:$sport" >> "$dir/env"
	[ -z "$SOLANA_PORT" ] || echo "SOLANA_URL=http://127.0.0.1:$SOLANA_PORT" >> "$dir/env"
	[ -z "$gport" ] || echo "GO_STUB_URL=http://127.0.0.1:$gport" >> "$dir/env"
	[ -z "$fport" ] || echo "FROZEN_PID=$(cat "$dir/relay.pid")" >> "$dir/env"
	[ -z "$lport" ] || echo "LAG_PORT=$lport" >> "$dir/env"
	[ -z "${NFT_PORT:-}" ] || echo "NFT_PORT=$NFT_PORT" >> "$dir/env"
	[ -z "$mport" ] || echo "SMTP_PORT=$mport" >> "$dir/env"
}

join_start() {	# DIR DIR1 PORT SERVER BUILD EXTRA WORKERS: one more web head of DIR1's stack
	local dir=$1 first=$2 port=$3 server=$4 build=$5 extra=$6 workers=$7 wport
	[ -n "$port" ] || port=$(free_port)
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	export BLOCKPORT_STACK=$dir
	rm -f "$dir"/*.sock*
	# DIR1's config and key as they are (the shared database has the key); EXTRA last, so
	# what is this head's own (its limits_file) wins.
	cp "$first/blockport.ini" "$dir/blockport.ini"
	if [ -n "$extra" ]; then
		{ echo; echo "# This head's own (scripts/stack.sh --join, $extra)."
		  cat "$extra"; echo; } >> "$dir/blockport.ini"
	fi
	(umask 077; cp "$first/dev.key" "$dir/dev.key")
	export BLOCKPORT_CONFIG=$dir/blockport.ini
	wport=$(free_port)
	while [ "$wport" = "$port" ]; do wport=$(free_port); done
	start_websocketd "$dir" "$wport" "$build"
	case $server in
	lighttpd) start_lighttpd "$dir" "$port" "$build" ;;
	apache) start_apache "$dir" "$port" "$build" ;;
	*) echo "stack: unknown server $server" >&2; exit 2 ;;
	esac
	wait_http "http://127.0.0.1:$port/v1/" 100
	[ "$workers" = 0 ] || start_workers "$dir" "$build"
	# DIR1's env (the devchain, the stubs, the key), with this head's own lines.
	{ grep -Ev '^(BASE_URL|STACK_DIR|BLOCKPORT_CONFIG|WS_URL|WEB_SERVER)=' "$first/env"
	  echo "BASE_URL=http://127.0.0.1:$port"
	  echo "STACK_DIR=$dir"
	  echo "BLOCKPORT_CONFIG=$dir/blockport.ini"
	  echo "WEB_SERVER=$server"
	  [ -z "${BLOCKPORT_WS_PORT:-}" ] || echo "WS_URL=ws://127.0.0.1:$port"
	} > "$dir/env.new"
	mv "$dir/env.new" "$dir/env"
}

stack_pids() {	# DIR: the stack's processes still alive, by the environment they were given
	local dir=$1 f pid exe names=" lighttpd apache2 multiwatch anvil node websocketd subscribe proxy "
	for f in "$top"/cron/*.c; do
		f=${f##*/}
		names+="${f%.c} "
	done
	for f in $(grep -lzxF -e "BLOCKPORT_STACK=$dir" -e "BLOCKPORT_CONFIG=$dir/blockport.ini" \
	    /proc/[0-9]*/environ 2>/dev/null); do
		pid=${f#/proc/}
		pid=${pid%/environ}
		exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || continue
		exe=${exe##*/}
		# Only the stack's programs: not a shell, a test runner or a CLI that shares its config.
		[[ $exe == *.fcgi || $names == *" $exe "* ]] || continue
		if [ "$pid" != $$ ]; then echo "$pid"; fi
	done
}

alive() {	# PID: true while the process runs (an exited one nobody has reaped yet does not)
	local st
	read -r st 2>/dev/null < "/proc/$1/stat" && [[ $st != *") Z "* ]]
}

wait_gone() {	# TENTHS PID...: waits up to TENTHS tenths of a second for the PIDs to exit
	local n=$1 pid alive
	shift
	for ((; n > 0; n--)); do
		alive=0
		for pid in "$@"; do
			if alive "$pid"; then alive=1; fi
		done
		[ $alive = 0 ] && return 0
		sleep 0.1
	done
	return 1
}

# The web server goes first and alone: lighttpd stops its FastCGI programs itself, and would
# restart any it saw die before its own shutdown; behind Apache the pools go next. Then the workers and the chain; then whatever is left
# of the stack is killed, and named.
cmd_stop() {
	local dir=$1 f pids left
	dir=$(cd "$dir" 2>/dev/null && pwd) || return 0
	for f in web pools ws workers devchain solana-devnet solana-stub go-node-stub relay; do
		[ -f "$dir/$f.pid" ] || continue
		pids=$(cat "$dir/$f.pid")
		# shellcheck disable=SC2086
		kill $pids 2>/dev/null || true
		# shellcheck disable=SC2086
		wait_gone 100 $pids || true
		rm -f "$dir/$f.pid"
	done
	left=$(stack_pids "$dir")
	[ -n "$left" ] || return 0
	for f in $left; do
		echo "stack: $(tr '\0' ' ' < "/proc/$f/cmdline" 2>/dev/null)(pid $f) outlived the stack:" \
			"killed" >&2
	done
	# shellcheck disable=SC2086
	kill $left 2>/dev/null || true
	# shellcheck disable=SC2086
	wait_gone 30 $left || kill -KILL $left 2>/dev/null || true
}

cmd_run() {
	local port=8080 cport="" server=lighttpd dir="$top/run" build="$top/build" fresh=0
	local extra=()
	while [ $# -gt 0 ]; do
		case $1 in
		--port) port=$2; shift 2 ;;
		--chain-port) cport=$2; shift 2 ;;
		--server) server=$2; shift 2 ;;
		--fresh) fresh=1; shift ;;
		--dir) dir=$2; shift 2 ;;
		--build) build=$2; shift 2 ;;
		--extra-config) extra=(--extra-config "$(realpath -- "$2")") || exit 2; shift 2 ;;
		*) echo "stack: unknown option $1" >&2; exit 2 ;;
		esac
	done
	if [ -n "${extra[1]:-}" ] && { [ ! -f "${extra[1]}" ] || [ ! -r "${extra[1]}" ]; }; then
		echo "blockport: EXTRA_CONFIG ${extra[1]} is not a readable file" >&2
		exit 2
	fi
	# The devchain port follows PORT, so stacks on different PORTs never share a chain port.
	[ -n "$cport" ] || cport=$((port + 465 <= 65535 ? port + 465 : port - 465))
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	# One run per directory: a second one would wipe the first one's sockets. The lock goes
	# with this script (its children do not inherit descriptor 9).
	exec 9>> "$dir/run.lock"
	if ! flock -n 9; then
		echo "blockport: already running from $dir (pid $(cat "$dir/run.pid" 2>/dev/null)," \
			"$(sed -n 's|^BASE_URL=||p' "$dir/env" 2>/dev/null)): stop it (Ctrl-C) first," \
			"or run another checkout with another PORT" >&2
		exit 1
	fi
	echo $$ > "$dir/run.pid"
	# Only a listener stops a server from binding: the connections a stopped run leaves in
	# TIME_WAIT do not (the servers and the devchain set SO_REUSEADDR).
	if port_listened "$port"; then
		echo "blockport: port $port is in use: make run PORT=... picks another" >&2
		exit 1
	fi
	if port_listened "$cport"; then
		echo "blockport: the devchain's port $cport (PORT + 465) is in use:" \
			"make run CHAIN_PORT=... picks another" >&2
		exit 1
	fi
	if [ "$fresh" = 1 ]; then
		echo "FRESH=1: a new database and a new chain"
		forget_state "$dir"
	fi
	# From here on, any exit stops what was started (a Ctrl-C while starting too).
	local qdir
	qdir=$(printf %q "$dir")
	trap "trap '' INT TERM; echo; echo stopping; cmd_stop $qdir; exit 0" INT TERM
	trap "cmd_stop $qdir" EXIT
	DEVCHAIN_ARGS=${DEVCHAIN_ARGS:---block-time 2} cmd_start "$dir" --port "$port" \
		--chain-port "$cport" --server "$server" --build "$build" --keep "${extra[@]}"
	# shellcheck disable=SC1091
	. "$dir/env"
	# Built here: quotes inside ${VAR:+...} in a here-document are dropped.
	local solana_try=""
	[ -z "${SOLANA_URL:-}" ] || solana_try="
  curl -s -H 'X-API-Key: $API_KEY' -H 'Content-Type: application/json' \\
    -d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getSlot\",\"params\":[{\"commitment\":\"finalized\"}]}' \\
    $BASE_URL/v1/rpc/solana/devnet"
	cat <<EOT

Blockport is running ($server, devchain on $CHAIN_URL${SOLANA_URL:+, Solana devnet on $SOLANA_URL}).
  base URL  $BASE_URL/v1
  ws URL    ${WS_URL:-(websocketd not installed)}/v1/ws/ethereum/devnet?apiKey=$API_KEY
  test key  $API_KEY
  config    $BLOCKPORT_CONFIG     (BLOCKPORT_CONFIG for the blockport CLI)${extra[1]:+
  extra     ${extra[1]}     (EXTRA_CONFIG, appended to the config)}
  logs      $dir/*.log
  state     kept across runs (accounts, keys, the chain); make run FRESH=1 starts over

Try:
  curl -s -H 'X-API-Key: $API_KEY' -H 'Content-Type: application/json' \\
    -d '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}' \\
    $BASE_URL/v1/rpc/ethereum/devnet$solana_try

Ctrl-C stops everything.
EOT
	while :; do sleep 1; done
}

case ${1:-} in
run) shift; cmd_run "$@" ;;
start) shift; cmd_start "$@" ;;
stop) shift; cmd_stop "$@" ;;
*) sed -n '2,10p' "$0" >&2; exit 2 ;;
esac
