#!/usr/bin/env bash
# A Blockport cluster on one machine (docs/scale.md): PostgreSQL (scripts/pg.sh) and Redis
# (scripts/redis.sh), the devchain once, two web heads (scripts/stack.sh each: lighttpd, its
# FastCGI programs, the WebSocket program and the workers, on a port of its own, all on the one
# database and the one Redis) and HAProxy in front.
#
#   cluster.sh run [--port P] [--dir DIR] [--build DIR] [--extra-config FILE]  foreground (make
#                cluster), Ctrl-C stops everything
#   cluster.sh start DIR [--port P] [--chain-port P] [--test] [--build DIR] [--extra-config FILE]
#   cluster.sh stop DIR
#
# start writes DIR/env: the first head's env (API_KEY, CHAIN_URL, the test stubs ...) with
# BASE_URL, BLOCKPORT_URL and WS_URL on HAProxy, HEAD_URLS (space-separated), HEAD_PGIDS (each
# head's process groups: lighttpd with its programs, websocketd with its connections, each
# worker; heads separated by commas), HEAD_DIRS, PG_URL, REDIS_URL, REDIS_DIR, CLUSTER_WORKERS.
# The workers run on every head, one per job across the cluster under its lease (docs/scale.md);
# CLUSTER_WORKERS=none starts none.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

. "$top/scripts/lib.sh"

heads=2

# The statuses HAProxy answers itself (a request it refuses, no head to send it to) get the
# uniform error body of the web servers' own refusals (scripts/error-pages.sh).
errors="400:Bad_Request 405:Method_Not_Allowed 408:Request_Timeout 413:Payload_Too_Large
500:Internal_Server_Error 501:Not_Implemented 502:Bad_Gateway 503:Service_Unavailable
504:Gateway_Timeout"

error_files() {	# DIR: DIR/errors/NNN.http, whole HTTP answers as HAProxy's errorfile wants
	local e status reason body
	mkdir -p "$1/errors"
	for e in $errors; do
		status=${e%%:*}
		reason=${e#*:}
		body=$(cat "$top/lighttpd/errors/status-$status.html")
		printf 'HTTP/1.1 %s %s\r\nContent-Type: application/json\r\nContent-Length: %s\r\n'\
'Cache-Control: no-cache\r\nConnection: close\r\n\r\n%s\n' "$status" "${reason//_/ }" \
			"$((${#body} + 1))" "$body" > "$1/errors/$status.http"
	done
}

haproxy_config() {	# DIR PORT HEALTH_KEY HEAD_PORT...: the load balancer's config
	local dir=$1 port=$2 key=$3 i=0 p
	shift 3
	cat <<EOT
# Written by scripts/cluster.sh for this run.
global
	maxconn 8192
	pidfile $dir/haproxy.pid

defaults
	mode http
	option httplog
	log stdout format raw local0 err
	timeout connect 1s
	timeout client 60s
	timeout server 60s
	# A WebSocket is a tunnel once upgraded (HAProxy passes the upgrade through in http mode).
	timeout tunnel 1h
	# A connection refused or reset before any answer is sent again to the other head: a dead
	# head costs at most the requests it was serving. A request it had begun (empty response)
	# is sent again only when it cannot have changed anything (GET, HEAD).
	retries 3
	option redispatch 1
	retry-on conn-failure empty-response
EOT
	for e in $errors; do
		echo "	errorfile ${e%%:*} $dir/errors/${e%%:*}.http"
	done
	cat <<EOT

frontend blockport
	bind 127.0.0.1:$port
	# /metrics is each head's, for loopback and metrics_allow (docs/metrics.md): through the
	# balancer every client would come from a head's loopback, so it stops here, 404 for all.
	http-request return status 404 content-type application/json string '{"error":{"code":"not_found","message":"no such endpoint: /metrics is served by each head, not by the load balancer","status":404}}' if { path /metrics } || { path_beg /metrics/ }
	default_backend heads

backend heads
	balance roundrobin
	http-request disable-l7-retry unless METH_GET
	# Which head answered, for the tests and for an operator's curl -i.
	http-response set-header X-Blockport-Head %s
	# A keyed request to a path no program serves: 404 proves lighttpd, a FastCGI program, the
	# key lookup (PostgreSQL, behind its key cache) and the counters (Redis, or the head's own
	# file while Redis is down) answer. Its key is on the unlimited plan: counting it limits
	# nobody, and no client address's anonymous count is touched.
	option httpchk
	http-check send meth GET uri /v1/cluster-health ver HTTP/1.1 hdr Host localhost hdr X-API-Key $key
	http-check expect status 404
	default-server inter 500 fastinter 250 downinter 500 fall 2 rise 2
EOT
	for p in "$@"; do
		i=$((i + 1))
		echo "	server head$i 127.0.0.1:$p check"
	done
}

head_pgids() {	# HEAD_DIR: the process groups of one head, space-separated
	local f pid out=""
	for f in web ws workers; do
		[ -f "$1/$f.pid" ] || continue
		for pid in $(cat "$1/$f.pid"); do
			# Each was started by setsid: its own group, which its children share.
			out+="$(ps -o pgid= -p "$pid" | tr -d ' ') "
		done
	done
	echo "${out% }"
}

cmd_start() {
	local dir=$1; shift
	local port="" test=() build="$top/build" extra="" pg redis key i hdir hport chain=()
	local urls="" pgids="" dirs="" wopt=() hports=()
	while [ $# -gt 0 ]; do
		case $1 in
		--port) port=$2; shift 2 ;;
		--chain-port) chain=(--chain-port "$2"); shift 2 ;;
		--test) test=(--test); shift ;;
		--build) build=$2; shift 2 ;;
		--extra-config) extra=$2; shift 2 ;;
		*) echo "cluster: unknown option $1" >&2; exit 2 ;;
		esac
	done
	[ -n "$port" ] || port=$(free_port)
	[ "${CLUSTER_WORKERS:=all}" = all ] || wopt=(--no-workers)
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	# Each request thread holds a PostgreSQL connection: 8 programs x 2 processes x 8 threads
	# a head (2 cores here), its workers and WebSocket connections, the CLI.
	export BLOCKPORT_PROCS=${BLOCKPORT_PROCS:-2} BLOCKPORT_THREADS=${BLOCKPORT_THREADS:-8}
	pg=$(PG_MAX_CONNECTIONS=${PG_MAX_CONNECTIONS:-500} bash "$top/scripts/pg.sh" start "$dir")
	redis=$(bash "$top/scripts/redis.sh" start "$dir")
	for ((i = 1; i <= heads; i++)); do
		{ echo "[server]"
		  [ "$i" -gt 1 ] || echo "database = $pg"
		  [ "$i" -gt 1 ] || echo "limits = $redis"
		  echo "limits_file = $dir/head$i/limits"
		  [ "$i" -gt 1 ] || [ -z "$extra" ] || { echo; cat "$extra"; echo; }
		} > "$dir/head$i.ini"
	done
	bash "$top/scripts/stack.sh" start "$dir/head1" "${test[@]}" "${chain[@]}" --build "$build" \
		--extra-config "$dir/head1.ini" "${wopt[@]}"
	# The load balancer's health checks' key: an account on the unlimited plan.
	BLOCKPORT_CONFIG=$dir/head1/blockport.ini "$build/blockport" account create \
		--email health@cluster.localhost --plan enterprise > /dev/null
	key=$(BLOCKPORT_CONFIG=$dir/head1/blockport.ini "$build/blockport" key create \
		health@cluster.localhost --name haproxy 2>/dev/null)
	hports=("$(sed -n 's|^BASE_URL=http://127.0.0.1:||p' "$dir/head1/env")")
	for ((i = 2; i <= heads; i++)); do
		bash "$top/scripts/stack.sh" start "$dir/head$i" --join "$dir/head1" --build "$build" \
			--extra-config "$dir/head$i.ini" "${wopt[@]}"
		hports+=("$(sed -n 's|^BASE_URL=http://127.0.0.1:||p' "$dir/head$i/env")")
	done
	error_files "$dir"
	haproxy_config "$dir" "$port" "$key" "${hports[@]}" > "$dir/haproxy.cfg"
	haproxy -c -q -f "$dir/haproxy.cfg" || haproxy -c -f "$dir/haproxy.cfg" >&2
	BLOCKPORT_STACK=$dir setsid haproxy -db -f "$dir/haproxy.cfg" >> "$dir/haproxy.log" 2>&1 9>&- &
	echo $! > "$dir/haproxy.pid"
	wait_http "http://127.0.0.1:$port/v1/openapi.yaml" 100
	for ((i = 1; i <= heads; i++)); do
		hdir=$dir/head$i
		hport=${hports[i - 1]}
		urls+="http://127.0.0.1:$hport "
		pgids+="$(head_pgids "$hdir"),"
		dirs+="$hdir "
	done
	{ grep -Ev '^(BASE_URL|WS_URL|STACK_DIR)=' "$dir/head1/env"
	  echo "BASE_URL=http://127.0.0.1:$port"
	  echo "BLOCKPORT_URL=http://127.0.0.1:$port"
	  ! grep -q '^WS_URL=' "$dir/head1/env" || echo "WS_URL=ws://127.0.0.1:$port"
	  # The tests' own files (the webhook receivers' CA, ...) go where the workers read them.
	  echo "STACK_DIR=$dir/head1"
	  echo "CLUSTER_DIR=$dir"
	  echo "HEAD_URLS=\"${urls% }\""
	  echo "HEAD_PGIDS=\"${pgids%,}\""
	  echo "HEAD_DIRS=\"${dirs% }\""
	  echo "PG_URL=$pg"
	  echo "REDIS_URL=$redis"
	  echo "REDIS_DIR=$dir"
	  echo "CLUSTER_WORKERS=$CLUSTER_WORKERS"
	} > "$dir/env"
}

cmd_stop() {
	local dir=$1 i pid
	dir=$(cd "$dir" 2>/dev/null && pwd) || return 0
	if [ -f "$dir/haproxy.pid" ]; then
		pid=$(head -1 "$dir/haproxy.pid")
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		rm -f "$dir/haproxy.pid"
	fi
	# The first head last: it holds the devchain and the stubs.
	for ((i = heads; i >= 1; i--)); do
		bash "$top/scripts/stack.sh" stop "$dir/head$i"
	done
	bash "$top/scripts/redis.sh" stop "$dir"
	bash "$top/scripts/pg.sh" stop "$dir"
}

cmd_run() {
	local port=8080 dir="$top/run-cluster" build="$top/build" extra=()
	while [ $# -gt 0 ]; do
		case $1 in
		--port) port=$2; shift 2 ;;
		--dir) dir=$2; shift 2 ;;
		--build) build=$2; shift 2 ;;
		--extra-config) extra=(--extra-config "$(realpath -- "$2")") || exit 2; shift 2 ;;
		*) echo "cluster: unknown option $1" >&2; exit 2 ;;
		esac
	done
	# The devchain where make run puts it: PORT + 465.
	local cport=$((port + 465 <= 65535 ? port + 465 : port - 465)) p
	for p in "$port" "$cport"; do
		if port_listened "$p"; then
			echo "blockport: port $p is in use: make cluster PORT=... picks another" >&2
			exit 1
		fi
	done
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	exec 9>> "$dir/run.lock"
	if ! flock -n 9; then
		echo "blockport: a cluster already runs from $dir: stop it (Ctrl-C) first" >&2
		exit 1
	fi
	local qdir
	qdir=$(printf %q "$dir")
	trap "trap '' INT TERM; echo; echo stopping; cmd_stop $qdir; exit 0" INT TERM
	trap "cmd_stop $qdir" EXIT
	DEVCHAIN_ARGS=${DEVCHAIN_ARGS:---block-time 2} cmd_start "$dir" --port "$port" \
		--chain-port "$cport" --build "$build" "${extra[@]}"
	# shellcheck disable=SC1091
	. "$dir/env"
	cat <<EOT

Blockport is running as a cluster ($(echo "$HEAD_URLS" | wc -w) heads behind HAProxy, devchain on $CHAIN_URL).
  base URL  $BASE_URL/v1
  ws URL    ${WS_URL:-(websocketd not installed)}/v1/ws/ethereum/devnet?apiKey=$API_KEY
  test key  $API_KEY
  heads     $HEAD_URLS
  database  $PG_URL
  counters  $REDIS_URL
  config    $BLOCKPORT_CONFIG     (BLOCKPORT_CONFIG for the blockport CLI)${extra[1]:+
  extra     ${extra[1]}     (EXTRA_CONFIG, appended to the config)}
  workers   $([ "$CLUSTER_WORKERS" = all ] && echo "on every head" || echo "none (CLUSTER_WORKERS=all starts them)")
  logs      $dir/head*/*.log $dir/haproxy.log
  state     new at each start (PostgreSQL and Redis are throwaway servers)

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
*) sed -n '2,16p' "$0" >&2; exit 2 ;;
esac
