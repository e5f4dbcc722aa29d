#!/usr/bin/env bash
# JSON-RPC against a node at a real distance (make bench runs it through bench/run.sh; it also
# runs on its own). A local upstream answers every request after a set delay
# (bench/fixed-upstream.c with a delay: 5, 50 and 200 ms by default) and, in the same run, in turn:
#   nginx      nginx proxy_pass with keep-alive: any reverse proxy's rate at that distance
#   lighttpd   Blockport (fcgi/rpc.c) behind lighttpd
#   apache     Blockport behind Apache with mod_fcgid
# each at 64 and 256 connections, with two clients: wrk (the rate) and bench/conn-count.mjs,
# which counts answers per connection (wrk times only the requests that complete, so a starved
# connection is invisible in its figures) and times every request sent, finished or not.
# The load is eth_call at latest, uncacheable. The memory of each server with its programs is
# summed over its processes (RSS, and PSS, which counts shared pages once).
# Goals (issue 14): Blockport >= 80% of nginx's rate behind both servers, p99 <= 3 x the delay,
# no connection starved.
#
#   bash bench/remote.sh     BENCH_SECONDS=5 BENCH_DELAYS="5 50 200" BENCH_CONNS="64 256"
#                            BENCH_SERVERS="lighttpd apache" BLOCKPORT_PROCS=4
#                            BLOCKPORT_THREADS=64 BENCH_APACHE_PROCS=256 bash bench/remote.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. scripts/lib.sh
. bench/lib.sh
secs=${BENCH_SECONDS:-5}
delays=${BENCH_DELAYS:-5 50 200}
connss=${BENCH_CONNS:-64 256}
servers=${BENCH_SERVERS:-lighttpd apache}
# The same number of requests at once behind both servers: lighttpd runs procs processes of
# threads threads; mod_fcgid gives a process one request at a time, so Apache runs procs x threads
# single-threaded processes (BENCH_APACHE_PROCS to change).
procs=${BLOCKPORT_PROCS:-4}
threads=${BLOCKPORT_THREADS:-64}
export BLOCKPORT_THREADS=$threads
apache_procs=${BENCH_APACHE_PROCS:-$((procs * threads))}
build=$top/build

for tool in wrk nginx lighttpd apache2 node curl; do
	command -v "$tool" > /dev/null || { echo "remote.sh: $tool is missing (make deps)" >&2; exit 1; }
done

make -s -j2 build/blockport build/fcgi/rpc.fcgi build/bench/fixed-upstream.fcgi > /dev/null
dir=$(mktemp -d /tmp/blockport-bench.XXXXXX)
chmod 755 "$dir"
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2> /dev/null || true
	done
	[ -f "$dir/apache/apache.pid" ] && kill "$(cat "$dir/apache/apache.pid")" 2> /dev/null
	wait 2> /dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM

# One upstream per delay, and one nginx with a location per delay.
declare -A UPORT
nginx_port=$(free_port)
mkdir -p "$dir/nginx"
{
	echo "worker_processes 2; daemon off; pid $dir/nginx/nginx.pid;"
	echo "error_log $dir/nginx/error.log warn; events { worker_connections 8192; }"
	echo "http { access_log off; keepalive_requests 100000;"
	for t in client_body proxy fastcgi uwsgi scgi; do echo "${t}_temp_path $dir/nginx/$t;"; done
	for d in $delays; do
		UPORT[$d]=$(free_port)
		"$build/bench/fixed-upstream.fcgi" "${UPORT[$d]}" "$d" & pids+=($!)
		wait_port "${UPORT[$d]}" "upstream $d ms"
		echo "upstream d$d { server 127.0.0.1:${UPORT[$d]}; keepalive 512; }"
	done
	echo "server { listen 127.0.0.1:$nginx_port;"
	for d in $delays; do
		echo "location /d$d/ { proxy_pass http://d$d/; proxy_http_version 1.1;"
		echo "  proxy_set_header Connection \"\"; }"
	done
	echo "} }"
} > "$dir/nginx/nginx.conf"
nginx -p "$dir/nginx" -c "$dir/nginx/nginx.conf" -e "$dir/nginx/error.log" & pids+=($!)
wait_port "$nginx_port" nginx

{
	echo "# Written by bench/remote.sh."
	echo "[server]"
	echo "database = $dir/blockport.db"
	echo "allow_private_urls = true"
	for d in $delays; do
		printf '\n[chain bench.d%s]\nkind = evm\nchain_id = 1\ntestnet = true\nindex = false\n' "$d"
		echo "upstream = http://127.0.0.1:${UPORT[$d]}"
	done
} > "$dir/blockport.ini"
export BLOCKPORT_CONFIG=$dir/blockport.ini
"$build/blockport" migrate > /dev/null 2>&1
"$build/blockport" account create --email bench@localhost --plan enterprise > /dev/null
key=$("$build/blockport" key create bench@localhost --test --name bench 2> /dev/null)
# Only the JSON-RPC program is served: the others would only take memory.
mkdir -p "$dir/bin"
cp "$build/fcgi/rpc.fcgi" "$dir/bin/rpc.fcgi"	# Apache follows no symlink there
chown -R www-data:www-data "$dir/blockport.db"* 2>/dev/null || true
chmod 666 "$dir/blockport.db"* 2>/dev/null || true
chmod 777 "$dir"

declare -A PORT WEBPID
start_server() {	# NAME
	local run=$dir/$1 port
	port=$(free_port)
	mkdir -p "$run"
	chmod 777 "$run"
	case $1 in
	lighttpd)
		BLOCKPORT_PORT=$port BLOCKPORT_BIN=$dir/bin BLOCKPORT_RUN=$run BLOCKPORT_PROCS=$procs \
		BLOCKPORT_LIGHTTPD_DIR=$top/lighttpd BLOCKPORT_WS_PORT= \
			lighttpd -D -f "$top/lighttpd/blockport.conf" > "$run/out.log" 2>&1 &
		;;
	apache)
		chown www-data:www-data "$run"
		BLOCKPORT_PORT=$port BLOCKPORT_BIN=$dir/bin BLOCKPORT_RUN=$run \
		BLOCKPORT_PROCS=$apache_procs BLOCKPORT_WS_PORT=0 ASAN_OPTIONS= UBSAN_OPTIONS= LSAN_OPTIONS= TSAN_OPTIONS= \
			apache2 -f "$top/apache/blockport.conf" -DFOREGROUND > "$run/out.log" 2>&1 &
		;;
	esac
	WEBPID[$1]=$!
	pids+=($!)
	PORT[$1]=$port
	wait_port "$port" "$1"
}
for s in $servers; do
	start_server "$s"
done
WEBPID[nginx]=$(cat "$dir/nginx/nginx.pid" 2>/dev/null || echo 0)

body='{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"0x5fbdb2315678afecb367f032d93f642f64180aa3","data":"0x70a08231000000000000000000000000f39fd6e51aad88f6f4ce6af57ab8cc6b20000000"},"latest"]}'
url() {	# TARGET DELAY
	case $1 in
	nginx) echo "http://127.0.0.1:$nginx_port/d$2/" ;;
	*) echo "http://127.0.0.1:${PORT[$1]}/v1/rpc/bench/d$2" ;;
	esac
}
cat > "$dir/post.lua" <<EOT
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-API-Key"] = "$key"
EOT
targets="nginx $servers"
for t in $targets; do
	for d in $delays; do
		out=$(curl -s -m 5 -H 'Content-Type: application/json' -H "X-API-Key: $key" -d "$body" \
			"$(url "$t" "$d")")
		case $out in
		*'"result"'*) ;;
		*) echo "remote.sh: $t (d$d) answered: $out" >&2; exit 1 ;;
		esac
	done
done

mem() {	# PID: "RSS_MB PSS_MB NPROCS" of the process and all its descendants
	local all=() todo=("$1") p kids
	while [ ${#todo[@]} -gt 0 ]; do
		p=${todo[0]}
		todo=("${todo[@]:1}")
		all+=("$p")
		kids=$(ps -o pid= --ppid "$p" 2>/dev/null || true)
		for k in $kids; do todo+=("$k"); done
	done
	for p in "${all[@]}"; do
		cat "/proc/$p/smaps_rollup" 2>/dev/null || true
	done | awk -v n=${#all[@]} '$1 == "Rss:" { r += $2 } $1 == "Pss:" { s += $2 }
		END { printf "%.0f %.0f %d\n", r / 1024, s / 1024, n }'
}

echo "remote: upstream delays ${delays// /, } ms; eth_call at latest; ${secs}s per run;" \
	"lighttpd: BLOCKPORT_PROCS=$procs BLOCKPORT_THREADS=$threads; Apache: $apache_procs processes;" \
	"$(nproc) cores"
printf '%-9s %5s %5s %8s %8s %8s | %8s %8s %8s %7s %9s | %6s %6s %5s\n' target delay conns \
	"req/s" "p50 ms" "p99 ms" "cc req/s" "cc p50" "cc p99" starved "min/max" "RSS MB" "PSS MB" procs
declare -A RPS P99 STARVED
fail=0
for d in $delays; do
	for c in $connss; do
		for t in $targets; do
			u=$(url "$t" "$d")
			wrk -t2 -c"$c" -d1s -s "$dir/post.lua" "$u" > /dev/null 2>&1 || true
			read -r _ rps p50 p99 < <(wrk_run "$t" "$u" "$c" "$secs" -s "$dir/post.lua")
			read -r ans crps cp50 cp99 starved mn mx non200 errs < <(node bench/conn-count.mjs \
				"$u" "$c" "$secs" "$body" "X-API-Key: $key")
			read -r rss pss np < <(mem "${WEBPID[$t]}")
			RPS[$t/$d/$c]=$rps
			printf '%-9s %5s %5s %8s %8.1f %8.1f | %8s %8.1f %8.1f %7s %9s | %6s %6s %5s\n' \
				"$t" "$d" "$c" "$rps" "$(awk -v v="$p50" 'BEGIN{print v/1000}')" \
				"$(awk -v v="$p99" 'BEGIN{print v/1000}')" "$crps" \
				"$(awk -v v="$cp50" 'BEGIN{print v/1000}')" \
				"$(awk -v v="$cp99" 'BEGIN{print v/1000}')" "$starved" "$mn/$mx" "$rss" "$pss" "$np"
			[ "$non200$errs" = 00 ] || echo "  ($t: $non200 answers not 200, $errs socket errors)"
			if [ "$t" != nginx ]; then
				P99[$t/$d/$c]=$cp99
				STARVED[$t/$d/$c]=$starved
			fi
		done
	done
done
echo
echo "== goals: Blockport / nginx req/s >= 80%; p99 (every request sent) <= 3 x delay; none starved"
for d in $delays; do
	for c in $connss; do
		for s in $servers; do
			r=$(ratio "${RPS[$s/$d/$c]}" "${RPS[nginx/$d/$c]}")
			ok=yes
			awk -v a="${RPS[$s/$d/$c]}" -v b="${RPS[nginx/$d/$c]}" 'BEGIN { exit !(a >= 0.8 * b) }' || ok=no
			[ "${P99[$s/$d/$c]}" -le $((3000 * d)) ] || ok=no
			[ "${STARVED[$s/$d/$c]}" = 0 ] || ok=no
			printf '  %-9s %4s ms %4s conns: %7s of nginx, p99 %6.1f ms, %3s starved  %s\n' "$s" "$d" \
				"$c" "$r" "$(awk -v v="${P99[$s/$d/$c]}" 'BEGIN{print v/1000}')" \
				"${STARVED[$s/$d/$c]}" "$ok"
			[ $ok = yes ] || fail=1
		done
	done
done
exit 0
