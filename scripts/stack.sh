#!/usr/bin/env bash
# Starts and stops the whole Blockport stack on loopback: the devchain (when installed), a
# config and database in a state directory, the web server with every FastCGI program, and the
# workers. Used by `make run` (in ./run) and by the end-to-end tests (in a temporary directory).
#
#   stack.sh run [--port P] [--chain-port P] [--server lighttpd|apache]   foreground, Ctrl-C stops
#   stack.sh start DIR [--port P] [--chain-port P] [--server S] [--test] [--build DIR]
#   stack.sh stop DIR
#
# start writes DIR/env (BASE_URL, API_KEY, ...) for the tests and returns once all is up.
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

write_config() {	# DIR CHAIN_PORT TEST [STUB_PORT DEAD_PORT GO_STUB_PORT]
	local dir=$1 cport=$2 test=$3 sport=${4:-} dport=${5:-} gport=${6:-}
	local chain=http://127.0.0.1:$cport stub=http://127.0.0.1:$sport dead=http://127.0.0.1:$dport
	{
		echo "# Written by scripts/stack.sh for this run."
		echo "[server]"
		echo "database = $dir/blockport.db"
		echo "allow_private_urls = true"
		if [ "$test" = 1 ]; then
			echo "anon_rps = 5"
			echo "key_cache_seconds = 2"
			echo "max_body = 65536"
			echo "gas_sample_max_age = 1"
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
			echo "[plan ws]"
			echo "rps = 1000"
			echo "ws_connections = 3"
		fi
		echo
		chain_section ethereum.devnet evm 31337 true "default = true" "confirmations = 0" \
			"upstream = $chain"
		[ -f "$dir/devchain.ini" ] && cat "$dir/devchain.ini"
		gas_config "$dir" "$test"
		if [ "$test" = 1 ]; then
			echo
			echo "# A mainnet that is the devchain again, so the tests can see live and test keys"
			echo "# treated differently; nothing else about it is real."
			chain_section ethereum.mainnet evm 31337 false "index = false" "upstream = $chain"
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
			echo "# Solana: tests/e2e/solana-stub.mjs, a scripted stub (no validator exists here)."
			chain_section solana.devnet solana "" true "default = true" "upstream = $stub"
			echo "# A JSON-RPC error in an HTTP 500 first: it must reach the client, not fail over."
			chain_section solana.flaky solana "" true "upstream = $stub/rpc-error-500" \
				"upstream = $stub"
			echo "# Every upstream down."
			chain_section solana.down solana "" true "upstream = $dead" \
				"upstream = $stub/status/429"
			echo
			echo "# Method smuggling (tests/e2e/rpc-smuggling.test.mjs): tests/e2e/go-node-stub.mjs,"
			echo "# a stub that reads requests the way a node written in Go does."
			chain_section ethereum.gonode evm 31337 true "index = false" \
				"upstream = http://127.0.0.1:$gport"
		fi
	} > "$dir/blockport.ini"
}

start_devchain() {	# DIR PORT
	local dir=$1 port=$2
	if [ ! -x "$top/devchain/start.sh" ] || [ ! -d "$top/devchain/node_modules" ]; then
		echo "stack: devchain not installed (make deps); RPC upstream 127.0.0.1:$port is down" >&2
		return 0
	fi
	"$top/devchain/start.sh" "$port" ${DEVCHAIN_ARGS:-} > "$dir/devchain.log" 2>&1 &
	echo $! > "$dir/devchain.pid"
	wait_http "http://127.0.0.1:$port" 100
	node "$top/devchain/deploy.mjs" --rpc "http://127.0.0.1:$port" --out "$dir/devchain.json" \
		--ini "$dir/devchain.ini" 2>> "$dir/devchain.log"
}

start_solana_stub() {	# DIR PORT: the scripted Solana upstream of the tests
	local dir=$1 port=$2
	node "$top/tests/e2e/solana-stub.mjs" "$port" > "$dir/solana-stub.log" 2>&1 &
	echo $! > "$dir/solana-stub.pid"
	wait_http "http://127.0.0.1:$port/count" 100
}

start_go_stub() {	# DIR PORT: the stand-in for a Go node of the smuggling tests
	local dir=$1 port=$2
	node "$top/tests/e2e/go-node-stub.mjs" "$port" > "$dir/go-node-stub.log" 2>&1 &
	echo $! > "$dir/go-node-stub.pid"
	wait_http "http://127.0.0.1:$port/count" 100
}

start_lighttpd() {	# DIR PORT BUILD
	local dir=$1
	BLOCKPORT_PORT=$2 BLOCKPORT_BIN=$3/fcgi BLOCKPORT_RUN=$dir \
	BLOCKPORT_CONFIG=$dir/blockport.ini BLOCKPORT_PROCS=${BLOCKPORT_PROCS:-4} \
	BLOCKPORT_LIGHTTPD_DIR=$top/lighttpd BLOCKPORT_WS_PORT=${BLOCKPORT_WS_PORT:-} \
		lighttpd -D -f "$top/lighttpd/blockport.conf" >> "$dir/lighttpd.out" 2>&1 &
	echo $! > "$dir/web.pid"
}

start_apache() {	# DIR PORT BUILD
	local dir=$1
	# Apache runs its workers and FastCGI programs as www-data: they must write the state.
	chown -R www-data:www-data "$dir" 2>/dev/null || true
	BLOCKPORT_PORT=$2 BLOCKPORT_BIN=$3/fcgi BLOCKPORT_RUN=$dir \
	BLOCKPORT_CONFIG=$dir/blockport.ini BLOCKPORT_PROCS=${BLOCKPORT_PROCS:-4} \
	BLOCKPORT_WS_PORT=${BLOCKPORT_WS_PORT:-0} \
	ASAN_OPTIONS=${ASAN_OPTIONS:-} UBSAN_OPTIONS=${UBSAN_OPTIONS:-} LSAN_OPTIONS=${LSAN_OPTIONS:-} \
		apache2 -f "$top/apache/blockport.conf" -DFOREGROUND >> "$dir/apache.out" 2>&1 &
	echo $! > "$dir/web.pid"
}

start_websocketd() {	# DIR PORT BUILD: /v1/ws/ (docs/websocket.md), one ws/subscribe per connection
	local dir=$1 port=$2 build=$3
	command -v websocketd > /dev/null && [ -x "$build/ws/subscribe" ] || return 0
	BLOCKPORT_CONFIG=$dir/blockport.ini websocketd --address 127.0.0.1 --port "$port" \
		--loglevel error \
		--passenv PATH,BLOCKPORT_CONFIG,ASAN_OPTIONS,UBSAN_OPTIONS,LSAN_OPTIONS \
		"$build/ws/subscribe" >> "$dir/websocketd.log" 2>&1 &
	echo $! > "$dir/ws.pid"
	export BLOCKPORT_WS_PORT=$port
}

start_workers() {	# DIR BUILD: the cron workers in loop mode, each recorded in DIR/workers.pid
	local dir=$1 build=$2
	# The chain indexer (docs/indexer.md); a short interval so the tests see blocks quickly.
	if [ -x "$build/cron/indexer" ]; then
		BLOCKPORT_CONFIG=$dir/blockport.ini "$build/cron/indexer" --loop --interval 200 \
			>> "$dir/indexer.log" 2>&1 &
		echo $! >> "$dir/workers.pid"
	fi
	# The gas sampler (docs/gas.md).
	if [ -x "$build/cron/gas" ]; then
		BLOCKPORT_CONFIG=$dir/blockport.ini "$build/cron/gas" --loop --interval 1000 \
			>> "$dir/gas.log" 2>&1 &
		echo $! >> "$dir/workers.pid"
	fi
}

cmd_start() {
	local dir=$1; shift
	local port="" cport="" server=lighttpd test=0 build="$top/build"
	while [ $# -gt 0 ]; do
		case $1 in
		--port) port=$2; shift 2 ;;
		--chain-port) cport=$2; shift 2 ;;
		--server) server=$2; shift 2 ;;
		--test) test=1; shift ;;
		--build) build=$2; shift 2 ;;
		*) echo "stack: unknown option $1" >&2; exit 2 ;;
		esac
	done
	[ -n "$port" ] || port=$(free_port)
	[ -n "$cport" ] || cport=$(free_port)
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	rm -f "$dir"/blockport.db* "$dir"/*.sock* "$dir"/devchain.ini
	start_devchain "$dir" "$cport"
	local sport="" dport="" gport=""
	if [ "$test" = 1 ]; then
		sport=$(free_port)
		dport=$(free_port)	# nothing listens there: the dead upstream of the failover tests
		start_solana_stub "$dir" "$sport"
		gport=$(free_port)
		while [ "$gport" = "$dport" ]; do gport=$(free_port); done
		start_go_stub "$dir" "$gport"
	fi
	write_config "$dir" "$cport" "$test" "$sport" "$dport" "$gport"
	export BLOCKPORT_CONFIG=$dir/blockport.ini
	"$build/blockport" migrate > /dev/null
	"$build/blockport" account create --email dev@localhost > /dev/null
	local key
	key=$("$build/blockport" key create dev@localhost --test --name dev 2>/dev/null)
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
	start_workers "$dir" "$build"
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
	[ -z "$gport" ] || echo "GO_STUB_URL=http://127.0.0.1:$gport" >> "$dir/env"
}

cmd_stop() {
	local dir=$1 f pid
	for f in "$dir"/web.pid "$dir"/ws.pid "$dir"/workers.pid "$dir"/devchain.pid \
		"$dir"/solana-stub.pid "$dir"/go-node-stub.pid; do
		[ -f "$f" ] || continue
		for pid in $(cat "$f"); do
			kill "$pid" 2>/dev/null || true
		done
	done
	# Give the web server a moment to stop its FastCGI children cleanly.
	for _ in $(seq 50); do
		local alive=0
		for f in "$dir"/web.pid "$dir"/ws.pid "$dir"/workers.pid "$dir"/devchain.pid; do
			[ -f "$f" ] || continue
			for pid in $(cat "$f"); do
				kill -0 "$pid" 2>/dev/null && alive=1
			done
		done
		[ $alive = 0 ] && break
		sleep 0.1
	done
	rm -f "$dir"/web.pid "$dir"/ws.pid "$dir"/workers.pid "$dir"/devchain.pid \
		"$dir"/solana-stub.pid "$dir"/go-node-stub.pid
}

cmd_run() {
	local port=8080 cport=8545 server=lighttpd
	while [ $# -gt 0 ]; do
		case $1 in
		--port) port=$2; shift 2 ;;
		--chain-port) cport=$2; shift 2 ;;
		--server) server=$2; shift 2 ;;
		*) echo "stack: unknown option $1" >&2; exit 2 ;;
		esac
	done
	local dir="$top/run"
	DEVCHAIN_ARGS=${DEVCHAIN_ARGS:---block-time 2} cmd_start "$dir" --port "$port" \
		--chain-port "$cport" --server "$server"
	trap 'echo; echo "stopping"; cmd_stop "$dir"; exit 0' INT TERM
	# shellcheck disable=SC1091
	. "$dir/env"
	cat <<EOT

Blockport is running ($server, devchain on $CHAIN_URL).
  base URL  $BASE_URL/v1
  ws URL    ${WS_URL:-(websocketd not installed)}/v1/ws/ethereum/devnet?apiKey=$API_KEY
  test key  $API_KEY
  config    $BLOCKPORT_CONFIG     (BLOCKPORT_CONFIG for the blockport CLI)
  logs      $dir/*.log

Try:
  curl -s -H 'X-API-Key: $API_KEY' -H 'Content-Type: application/json' \\
    -d '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}' \\
    $BASE_URL/v1/rpc/ethereum/devnet

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
