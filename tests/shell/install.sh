#!/usr/bin/env bash
# make install DESTDIR=...: the installed tree works on its own. lighttpd runs the installed
# config with the installed programs and a config made from the installed example, and every
# program answers; the crontab lines name installed programs; the example config holds every
# key the parser knows, and uncommented it is a valid config.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
prefix=/opt/blockport
tmp=$(mktemp -d /tmp/blockport-install.XXXXXX)
root=$tmp/root
p=$root$prefix
web=""
cleanup() {
	[ -z "$web" ] || { kill "$web"; wait "$web"; } 2>/dev/null
	if [ "$t_fail" = 0 ]; then rm -rf "$tmp"; else echo "# files of the failed run in $tmp"; fi
}
trap cleanup EXIT
mkdir -p "$tmp/san" "$tmp/run"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}:log_path=$tmp/san/asan"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}:log_path=$tmp/san/ubsan"

install_tree() {
	make -s -C "$top" install DESTDIR="$root" PREFIX="$prefix" BUILD="$build" SAN=1 \
		> "$tmp/install.log" 2>&1 || { sed 's/^/# /' "$tmp/install.log"; return 1; }
}
check "make install DESTDIR=... PREFIX=$prefix" install_tree

same_programs() {	# every program of the build is installed
	local f
	for f in "$build"/fcgi/*.fcgi "$build"/cron/*; do
		case $f in *.o) continue ;; esac
		[ -x "$p/lib/blockport/${f#"$build"/}" ] || { echo "# not installed: $f"; return 1; }
	done
}
check "every FastCGI program and cron worker is installed" same_programs

every_key() {	# each key of lib/core/config.c's table appears commented in the installed example
	local k n=0
	for k in $(grep -oE '\{ SEC_[A-Z]+, "[a-z_]+"' "$top/lib/core/config.c" | cut -d'"' -f2); do
		n=$((n + 1))
		grep -q "^#$k = " "$p/share/blockport/blockport.ini.example" ||
			{ echo "# not in the example: $k"; return 1; }
	done
	[ "$n" -gt 20 ]
}
check "the installed example config shows every key of the config table" every_key

# The example uncommented, with the state in the temporary directory: a valid config.
cfg=$tmp/etc/blockport.ini
mkdir -p "$tmp/etc" "$tmp/var"
sed -E 's/^#(\[|[a-z_]+ = )/\1/' "$p/share/blockport/blockport.ini.example" 2>/dev/null |
	sed -E "s|^database = .*|database = $tmp/var/blockport.db|; /^(limits_file|paymaster_key_file|rpc_cache_file) = /d" > "$cfg"
migrate() { "$p/bin/blockport" -c "$cfg" migrate > "$tmp/migrate.log" 2>&1; }
check "the installed CLI migrates a database from the example config" migrate
"$p/bin/blockport" -c "$cfg" account create --email ops@example.com > /dev/null
key=$("$p/bin/blockport" -c "$cfg" key create ops@example.com --test 2>/dev/null)
check "the installed CLI creates a key" grep -qE '^blockport_test_[0-9a-f]{40}$' <<< "$key"

port=$(free_port)
BLOCKPORT_PORT=$port BLOCKPORT_BIN=$p/lib/blockport/fcgi BLOCKPORT_RUN=$tmp/run \
BLOCKPORT_CONFIG=$cfg BLOCKPORT_PROCS=1 BLOCKPORT_LIGHTTPD_DIR=$p/share/blockport/lighttpd \
	lighttpd -D -f "$p/share/blockport/lighttpd/blockport.conf" > "$tmp/lighttpd.out" 2>&1 &
web=$!
check "lighttpd starts from the installed config" wait_http "http://127.0.0.1:$port/v1/" 100

answers() {	# PATH STATUS PATTERN [curl args]: the answer's status and a pattern of its body
	local path=$1 status=$2 pattern=$3 out
	shift 3
	out=$(curl -s -m 20 -w '\n%{http_code}' -H "X-API-Key: $key" "$@" "http://127.0.0.1:$port$path")
	[ "${out##*$'\n'}" = "$status" ] && grep -qE "$pattern" <<< "${out%$'\n'*}" ||
		{ echo "# $path: $out"; return 1; }
}
check "the installed wallets program lists wallets" \
	answers '/v1/wallets?limit=1' 200 '^\{"wallets":\[\],"page":1,"limit":1,"total":0\}$'
check "the installed rpc program refuses a test key on a mainnet" \
	answers /v1/rpc/ethereum/mainnet 403 'ethereum/mainnet is a mainnet' \
	-d '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}'
check "the installed fallback answers an unknown path in the uniform body" \
	answers /v1/nope 404 '^\{"error":\{"code":"not_found"'
every_program() {	# each installed program answers its prefix itself (our header, JSON)
	local f name h
	for f in "$p"/lib/blockport/fcgi/*.fcgi; do
		name=$(basename "$f" .fcgi)
		h=$(curl -s -m 20 -o /dev/null -D - -H "X-API-Key: $key" "http://127.0.0.1:$port/v1/$name/")
		grep -qi '^x-request-id: ' <<< "$h" && grep -qi '^content-type: application/json' <<< "$h" ||
			{ echo "# /v1/$name/: $h"; return 1; }
	done
}
check "every installed program answers behind lighttpd" every_program

crontab_lines() {	# each installed *.cron names installed programs, under PREFIX
	local f n=0 prog
	for f in "$top"/cron/*.cron; do
		f=$p/share/blockport/cron/$(basename "$f")
		[ -f "$f" ] || { echo "# not installed: $f"; return 1; }
		for prog in $(grep -E '^[^#A-Z]' "$f" | awk '{ print $6 }'); do
			n=$((n + 1))
			case $prog in "$prefix"/*) ;; *) echo "# $f: $prog is not under $prefix"; return 1 ;; esac
			[ -x "$root$prog" ] || { echo "# $f: $prog is not installed"; return 1; }
		done
	done
	[ "$n" -gt 0 ]
}
check "the installed crontab lines run installed programs" crontab_lines

kill "$web"
wait "$web" 2>/dev/null
web=""
no_reports() { ! ls "$tmp"/san/* > /dev/null 2>&1 || { head -40 "$tmp"/san/*; return 1; }; }
check "no sanitizer report from the installed programs" no_reports
finish
