#!/usr/bin/env bash
# A throwaway redis-server for tests and benchmarks: on a free loopback port, no persistence
# (no RDB, no AOF), its files in DIR. start prints its URL (also in DIR/redis.url); stop ends it.
#
#   redis.sh start DIR [PORT]   (PORT: the one it had, to start it again under the same URL)
#   redis.sh stop DIR
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

. "$top/scripts/lib.sh"

usage() { echo "usage: redis.sh start|stop DIR" >&2; exit 2; }
[ $# = 2 ] || { [ $# = 3 ] && [ "$1" = start ]; } || usage
dir=$2

case $1 in
start)
	command -v redis-server >/dev/null || {
		echo "redis.sh: redis-server is not installed (apt-get install redis-server)" >&2
		exit 1
	}
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	port=${3:-$(free_port)}
	redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no \
		--dir "$dir" --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" \
		--daemonize yes --protected-mode yes
	wait_port "$port" redis-server
	echo "redis://127.0.0.1:$port/0" | tee "$dir/redis.url"
	;;
stop)
	[ -f "$dir/redis.pid" ] || exit 0
	pid=$(cat "$dir/redis.pid")
	kill "$pid" 2>/dev/null || true
	# A server without persistence stops at once; wait a little for its port to close.
	for _ in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	rm -f "$dir/redis.pid"
	;;
*)
	usage
	;;
esac
