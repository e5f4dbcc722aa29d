#!/usr/bin/env bash
# JSON-RPC against a node at a real distance (make bench runs it through bench/run.sh; it also
# runs on its own). A local upstream answers every request after a set delay
# (bench/fixed-upstream.c with a delay: 5, 50 and 200 ms by default) and, in the same run, in turn:
#   nginx      nginx proxy_pass with keep-alive: any reverse proxy's rate at that distance
#   lighttpd   Blockport (fcgi/rpc.c) behind lighttpd
#   apache     Blockport behind Apache (mod_proxy_fcgi, the program's pool: apache/fcgi-pool.sh)
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
#                            BLOCKPORT_THREADS=64 bash bench/remote.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. scripts/lib.sh
. bench/lib.sh
secs=${BENCH_SECONDS:-5}
delays=${BENCH_DELAYS:-5 50 200}
connss=${BENCH_CONNS:-64 256}
servers=${BENCH_SERVERS:-lighttpd apache}
# The same requests at once behind both servers: procs processes of threads threads (lighttpd
# runs them itself; behind Apache, apache/fcgi-pool.sh's pool on a socket).
procs=${BLOCKPORT_PROCS:-4}
threads=${BLOCKPORT_THREADS:-64}
export BLOCKPORT_THREADS=$threads
build=$top/build

for tool in wrk nginx lighttpd apache2 spawn-fcgi multiwatch node curl; do
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
	# The pool after Apache: multiwatch stops its processes.
	[ -f "$dir/apache/fcgi.pids" ] && kill $(cat "$dir/apache/fcgi.pids") 2> /dev/null
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
	[ "${BENCH_CACHE:-1}" = 1 ] || echo "rpc_cache = false"	# BENCH_CACHE=0: without the cache
	# BENCH_CACHE_FILE=1: the cache in a database file of its own.
	[ "${BENCH_CACHE_FILE:-0}" = 0 ] || echo "rpc_cache_file = $dir/rpc-cache.db"
	for d in $delays; do
		printf '\n[chain bench.d%s]\nkind = evm\nchain_id = 1\ntestnet = true\nindex = false\n' "$d"
		echo "upstream = http://127.0.0.1:${UPORT[$d]}"
	done
	# The realistic mix's near-head variant (below): answers near the head kept 1 s.
	for d in $delays; do
		printf '\n[chain bench.ttl%s]\nkind = evm\nchain_id = 1\ntestnet = true\n' "$d"
		printf 'index = false\ncache_ttl_ms = 1000\nupstream = http://127.0.0.1:%s\n' "${UPORT[$d]}"
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
chown www-data:www-data "$dir/rpc-cache.db"* 2>/dev/null || true
chmod 666 "$dir/rpc-cache.db"* 2>/dev/null || true
# BENCH_WRITER=1: another writer of the database, as the indexer is: it holds the write lock
# 50 ms of every 100 ms (a batch of blocks), for the whole run.
if [ "${BENCH_WRITER:-0}" = 1 ]; then
	sqlite3 "$dir/blockport.db" "CREATE TABLE bench_writer (x INTEGER)"
	(printf '.timeout 10000\n'; while :; do
		printf 'BEGIN IMMEDIATE;\nINSERT INTO bench_writer VALUES (1);\n.shell sleep 0.05\n'
		printf 'COMMIT;\n.shell sleep 0.05\n'
	done) | sqlite3 "$dir/blockport.db" > /dev/null 2>&1 & pids+=($!)
fi
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
		BLOCKPORT_BIN=$dir/bin BLOCKPORT_RUN=$run BLOCKPORT_PROCS=$procs \
			"$top/apache/fcgi-pool.sh" rpc > "$run/pool.log" 2>&1 &
		echo $! > "$run/fcgi.pids"
		pids+=($!)
		wait_socket "$run/fcgi/rpc.sock"
		BLOCKPORT_PORT=$port BLOCKPORT_BIN=$dir/bin BLOCKPORT_RUN=$run BLOCKPORT_WS_PORT=0 \
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

mem() {	# PID...: "RSS_MB PSS_MB NPROCS" of the processes and all their descendants
	local all=() todo=("$@") p kids
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
	"BLOCKPORT_PROCS=$procs BLOCKPORT_THREADS=$threads behind each server;" \
	"$(nproc) cores"
printf '%-9s %5s %5s %8s %8s %8s | %8s %8s %8s %7s %9s | %6s %6s %5s\n' target delay conns \
	"req/s" "p50 ms" "p99 ms" "cc req/s" "cc p50" "cc p99" starved "min/max" "RSS MB" "PSS MB" procs
declare -A RPS P99 STARVED SOCKERR
fail=0
[ "${BENCH_ONLY:-}" != mix ] || connss=""	# BENCH_ONLY=mix: only the mix below
for d in $delays; do
	for c in $connss; do
		for t in $targets; do
			u=$(url "$t" "$d")
			wrk -t2 -c"$c" -d1s -s "$dir/post.lua" "$u" > /dev/null 2>&1 || true
			read -r _ rps p50 p99 < <(wrk_run "$t" "$u" "$c" "$secs" -s "$dir/post.lua" \
				2> "$dir/wrk.err")
			read -r ans crps cp50 cp99 starved mn mx non200 errs < <(node bench/conn-count.mjs \
				"$u" "$c" "$secs" "$body" "X-API-Key: $key")
			# A reset or timed-out request may or may not have been sent (a transaction):
			# any socket error, from either client, fails the run.
			werrs=$(awk '/Socket errors/ { gsub(",", ""); n += $5 + $7 + $9 + $11 }
				END { print n + 0 }' "$dir/wrk.err")
			cat "$dir/wrk.err" >&2
			SOCKERR[$t/$d/$c]=$((werrs + errs))
			# Apache's pool is not its children: counted with it.
			read -r rss pss np < <(mem "${WEBPID[$t]}" \
				$(cat "$dir/$t/fcgi.pids" 2>/dev/null || true))
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
echo "== socket errors (wrk and conn-count): none allowed, behind any server"
sockfail=0
for k in "${!SOCKERR[@]}"; do
	[ "${SOCKERR[$k]}" = 0 ] && continue
	echo "  $k: ${SOCKERR[$k]} socket errors  FAIL"
	sockfail=1
done
[ $sockfail = 1 ] || echo "  none"
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

# ---- The realistic mix (bench/rpc-mix.mjs: a block explorer's reads), and whether identical
# concurrent calls are worth de-duplicating. The upstream BENCH_MIX_DELAY ms away (50), with
# BENCH_MIX_CONNS connections (64); BENCH_MIX=0 skips it. Hit rate: answers that carried
# X-Cache-Hits; upstream calls: counted by the upstream itself (GET /count).
mixd=${BENCH_MIX_DELAY:-50}
mixc=${BENCH_MIX_CONNS:-64}
if [ "${BENCH_MIX:-1}" = 1 ] && [ -n "${UPORT[$mixd]:-}" ]; then
	node bench/rpc-mix.mjs "$key" > "$dir/mix.lua"
	upcount() { curl -s -m 5 "http://127.0.0.1:${UPORT[$mixd]}/count"; }
	mixrun() {	# TARGET URL SCRIPT: "rps p50_us p99_us requests hits answers upstream_calls"
		local before after out
		wrk -t2 -c"$mixc" -d1s -s "$3" "$2" > /dev/null 2>&1 || true	# warm: the cache fills
		before=$(upcount)
		out=$(wrk -t2 -c"$mixc" -d"${secs}s" --latency -s "$3" "$2" 2>&1)
		after=$(upcount)
		awk -v calls=$((after - before)) '/^Requests\/sec/ { rps = $2 }
			$1 == "50%" { p50 = $2 } $1 == "99%" { p99 = $2 }
			/ requests in / { n = $1 } /^hits / { h = $2; a = $3 }
			function us(v,  m) { m = 1; if (v ~ /ms$/) m = 1000; else if (v ~ /[0-9]s$/) m = 1000000
				sub(/[a-z]+$/, "", v); return v * m }
			END { printf "%d %d %d %d %d %d %d\n", rps, us(p50), us(p99), n, h, a, calls }' <<< "$out"
	}
	echo
	echo "== realistic mix (bench/rpc-mix.mjs), upstream $mixd ms away, $mixc connections," \
		"${secs}s after a 1 s warm-up"
	printf '%-9s %8s %8s %8s %9s %16s\n' target "req/s" "p50 ms" "p99 ms" "hit rate" \
		"upstream/request"
	declare -A MIX
	for t in $targets; do
		read -r rps p50 p99 n h a calls < <(mixrun "$t" "$(url "$t" "$mixd")" "$dir/mix.lua")
		MIX[$t]=$rps
		printf '%-9s %8s %8.1f %8.1f %8s %16s\n' "$t" "$rps" \
			"$(awk -v v="$p50" 'BEGIN{print v/1000}')" "$(awk -v v="$p99" 'BEGIN{print v/1000}')" \
			"$(ratio "$h" "$a")" "$(awk -v c="$calls" -v n="$n" 'BEGIN{ if (n) printf "%.3f", c/n }')"
	done
	for s in $servers; do
		echo "  $s: $(ratio "${MIX[$s]}" "${MIX[nginx]}") of nginx on the mix"
	done
	# De-duplication: every connection asks eth_blockNumber at once, again and again. Without
	# a near-head TTL each client request is one upstream call; with one, each expiry lets every
	# request in flight through. Upstream calls per client request say what merging identical
	# calls in flight would save.
	cat > "$dir/head.lua" <<EOT
wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-API-Key"] = "$key"
EOT
	echo
	echo "== identical calls at once: eth_blockNumber, $mixc connections, upstream $mixd ms away"
	printf '%-9s %-22s %8s %8s %16s\n' target network "req/s" "p99 ms" "upstream/request"
	for t in $targets; do
		for net in "d$mixd" "ttl$mixd"; do
			[ "$t" != nginx ] || [ "$net" = "d$mixd" ] || continue
			u=$(url "$t" "$mixd")
			[ "$t" = nginx ] || u=${u%/*}/$net
			before=$(upcount)
			read -r _ rps _ p99 < <(wrk_run "$t" "$u" "$mixc" "$secs" -s "$dir/head.lua")
			after=$(upcount)
			n=$(awk -v r="$rps" -v s="$secs" 'BEGIN { printf "%d", r * s }')
			printf '%-9s %-22s %8s %8.1f %16s\n' "$t" \
				"$([ "$net" = "d$mixd" ] && echo "no TTL" || echo "cache_ttl_ms 1000")" "$rps" \
				"$(awk -v v="$p99" 'BEGIN{print v/1000}')" \
				"$(awk -v c=$((after - before)) -v n="$n" 'BEGIN{ if (n) printf "%.4f", c/n }')"
		done
	done
fi
if [ $sockfail = 1 ]; then
	echo "remote.sh: socket errors (above): a client cannot tell whether its request was served" >&2
	exit 1
fi
exit 0
