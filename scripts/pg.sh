#!/usr/bin/env bash
# A throwaway PostgreSQL 15 for tests (docs/scale.md): its own cluster in DIR/pg, listening on
# a free loopback port and nowhere else (no Unix socket), trusted from loopback only.
# PG_MAX_CONNECTIONS (200) raises its connection limit (scripts/cluster.sh: two heads).
#
#   pg.sh start DIR    initdb, start, create database blockport; prints its URL (also DIR/pg.url)
#   pg.sh stop DIR     stops it and removes DIR/pg
#
# PostgreSQL refuses to run as root: then initdb and pg_ctl run as the postgres user (Debian's
# package creates it), in a directory that user owns.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

. "$top/scripts/lib.sh"

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] || { echo "pg.sh: PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }

as_pg() {	# COMMAND...: runs it as the postgres user when we are root
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: pg.sh start|stop DIR" >&2; exit 2; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
data=$dir/pg

case $cmd in
start)
	rm -rf "$data"
	mkdir -p "$data"
	[ "$(id -u)" != 0 ] || { chown postgres: "$data"; chmod 755 "$dir"; }
	as_pg "$bin/initdb" -D "$data/db" -U postgres -A trust --no-sync -E UTF8 \
		--locale=C > "$data/initdb.log" 2>&1 || { cat "$data/initdb.log" >&2; exit 1; }
	port=$(free_port)
	# Speed over durability: a throwaway cluster for tests.
	cat >> "$data/db/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = ''
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = ${PG_MAX_CONNECTIONS:-200}
CONF
	as_pg "$bin/pg_ctl" -D "$data/db" -l "$data/server.log" -w -t 30 start > /dev/null ||
		{ cat "$data/server.log" >&2; exit 1; }
	as_pg "$bin/psql" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres \
		-c 'CREATE DATABASE blockport' > /dev/null
	url="postgresql://postgres@127.0.0.1:$port/blockport"
	echo "$url" > "$dir/pg.url"
	echo "$url"
	;;
stop)
	if [ -d "$data/db" ]; then
		as_pg "$bin/pg_ctl" -D "$data/db" -m immediate -w stop > /dev/null 2>&1 || true
	fi
	rm -rf "$data" "$dir/pg.url"
	;;
*)
	echo "usage: pg.sh start|stop DIR" >&2
	exit 2
	;;
esac
