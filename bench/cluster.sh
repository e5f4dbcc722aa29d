#!/usr/bin/env bash
# Issue 25's figures (docs/scale.md), ratios measured in the same run:
#   1. the same head on PostgreSQL + Redis against SQLite + the mapped file: bench/platform.sh
#      (authed REST 404, c=32), bench/rpc.sh (JSON-RPC to the local node through Blockport, c=32),
#      bench/wallets.sh (POST create of a new wallet, c=32), bench/indexer.sh (blocks/s with
#      receipts), bench/webhooks.sh (format A deliveries/s), and bench/bundler.sh (ops accepted
#      into the pool, no goal: the primary's work on the pool path), each run twice in turn with
#      BENCH_ENGINE=sqlite and BENCH_ENGINE=pg (bench/lib.sh's bench_engine).
#      Goals: >= 60%, 70%, 50%, 60% of SQLite; >= 2,000 deliveries/s on PostgreSQL.
#   2. two heads behind HAProxy (scripts/cluster.sh) against one of them directly, the node 50 ms
#      away (bench/fixed-upstream.c with a delay, as bench/remote.sh), eth_call at latest, 256
#      connections (goal >= 95%); and the CPU time a request costs: utime + stime from /proc of
#      the web head's processes (lighttpd and its programs), of PostgreSQL and of Redis over
#      each run, divided by its requests, against a lone SQLite head the same way.
#
#   bash bench/cluster.sh     BENCH_SECONDS=3 BENCH_ROUNDS=2 BLOCKS=300 RUNS=2
#                             BENCH_WEBHOOK_EVENTS=3000 BENCH_CONNS=256 BENCH_PARTS="1 2"
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. scripts/lib.sh
. bench/lib.sh
secs=${BENCH_SECONDS:-3}
conns=${BENCH_CONNS:-256}
parts=${BENCH_PARTS:-1 2}
export BENCH_SECONDS=$secs BENCH_ROUNDS=${BENCH_ROUNDS:-2} BLOCKS=${BLOCKS:-300} RUNS=${RUNS:-2}
export BENCH_WEBHOOK_EVENTS=${BENCH_WEBHOOK_EVENTS:-3000} BENCH_WEBHOOK_BLOCKS=${BENCH_WEBHOOK_BLOCKS:-2}
export WEBHOOKS=0 BENCH_ALTO=0 BENCH_OPS=${BENCH_OPS:-200}
dir=$(mktemp -d /tmp/blockport-bench.XXXXXX)
chmod 755 "$dir"
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	[ ! -d "$dir/cluster" ] || bash scripts/cluster.sh stop "$dir/cluster" >/dev/null 2>&1
	[ ! -d "$dir/lone" ] || bash scripts/stack.sh stop "$dir/lone" >/dev/null 2>&1
	wait 2>/dev/null || true
	[ -n "${BENCH_KEEP:-}" ] || rm -rf "$dir"	# BENCH_KEEP=1: each script's own output stays
}
trap cleanup EXIT INT TERM
load() { uptime | sed 's/.*load average: //'; }

# ---- 1. engines
# figure SCRIPT ENGINE AWK: runs SCRIPT with BENCH_ENGINE=ENGINE (its output in
# $dir/SCRIPT.ENGINE.out) and prints what AWK picks from it.
figure() {
	local out=$dir/$(basename "$1" .sh).$2.out
	BENCH_ENGINE=$2 bash "$1" > "$out" 2>&1 || { echo "cluster.sh: $1 ($2) failed:" >&2; tail -n 20 "$out" >&2; echo 0; return; }
	awk "$3" "$out" | head -1
}
declare -A got goal what pick
rows=(${BENCH_ROWS:-platform rpc wallets indexer webhooks bundler})	# BENCH_ROWS: some of them
what=([platform]="authed REST 404, c=32 (req/s)" [rpc]="JSON-RPC to the local node, c=32 (req/s)"
	[rpcl]="  the same, a key of finite limits (req/s)"
	[wallets]="POST /v1/wallets/create new, c=32 (req/s)" [indexer]="indexer with receipts (blocks/s)"
	[webhooks]="webhook deliveries, format A (/s)" [bundler]="UserOperations into the pool (/s)")
goal=([platform]=60 [rpc]=70 [rpcl]=70 [wallets]=50 [indexer]=60 [webhooks]=2000)
pick=([platform]='/^Blockport authed 404 \(c=32\)/ { print $5 }'
	[rpc]='$1 == "devchain-blockport" && $2 == "c=32" { print $3 }'
	[wallets]='/^POST create, new wallet \(c=32\)/ { print $6 }'
	[indexer]='/^indexer --once, fresh db \(with receipts\)/ { print $8 }'
	[webhooks]='/^format A throughput/ { print $5 }'
	[bundler]='$1 == "blockport" { print $2 }')
if [[ " $parts " == *" 1 "* ]]; then
	echo "== 1. the same head on PostgreSQL + Redis against SQLite + the mapped file"
	echo "   $(nproc) cores; BENCH_SECONDS=$secs BENCH_ROUNDS=$BENCH_ROUNDS BLOCKS=$BLOCKS RUNS=$RUNS" \
		"BENCH_WEBHOOK_EVENTS=$BENCH_WEBHOOK_EVENTS; each script on SQLite, then on PostgreSQL"
	printf '%-44s %10s %10s %8s  %-14s %s\n' figure sqlite pg "pg/sql" goal "load (1, 5, 15 min)"
	for r in "${rows[@]}"; do
		for e in sqlite pg; do
			got[$r/$e]=$(figure "bench/$r.sh" $e "${pick[$r]}")
			# The same run's key on finite limits (counted in Redis on a cluster, where the
			# enterprise key's requests are not): a row of its own.
			[ "$r" != rpc ] || got[rpcl/$e]=$(awk '$1 == "devchain-limited" && $2 == "c=32" { print $3 }' \
				"$dir/rpc.$e.out" | head -1)
		done
		g=">= ${goal[$r]:-}%"
		[ "$r" != webhooks ] || g=">= 2000/s on pg"
		[ "$r" != bundler ] || g="(none)"
		printf '%-44s %10s %10s %8s  %-14s %s\n' "${what[$r]}" "${got[$r/sqlite]:-0}" \
			"${got[$r/pg]:-0}" "$(ratio "${got[$r/pg]:-0}" "${got[$r/sqlite]:-0}")" "$g" "$(load)"
		[ "$r" != rpc ] || printf '%-44s %10s %10s %8s  %-14s %s\n' "${what[rpcl]}" \
			"${got[rpcl/sqlite]:-0}" "${got[rpcl/pg]:-0}" \
			"$(ratio "${got[rpcl/pg]:-0}" "${got[rpcl/sqlite]:-0}")" "$g" "$(load)"
	done
	for r in "${rows[@]}" $([[ " ${rows[*]} " != *" rpc "* ]] || echo rpcl); do
		[ "$r" != bundler ] || continue	# measured for docs/scale.md's sizing only
		if [ "$r" = webhooks ]; then
			ok=$(awk -v a="${got[$r/pg]:-0}" 'BEGIN { print (a >= 2000) ? "met" : "MISSED" }')
		else
			ok=$(awk -v a="${got[$r/pg]:-0}" -v b="${got[$r/sqlite]:-0}" -v g="${goal[$r]}" \
				'BEGIN { print (b > 0 && 100 * a >= g * b) ? "met" : "MISSED" }')
		fi
		echo "  ${what[$r]}: goal $ok"
	done
	echo "  the primary's work in each PostgreSQL run (all of the script's rows, migrations included):"
	for r in "${rows[@]}"; do
		printf '    %-10s %s\n' "$r" "$(sed -n 's/^postgres over the run: //p' "$dir/$r.pg.out")"
	done
fi

# ---- 2. two heads behind HAProxy, the node 50 ms away
# run NAME URL SEL...: one wrk run at $conns connections after a 1 s warm-up; prints "rps requests
# cpu_s warm" with the CPU seconds of SEL (bench_cpu's arguments) over the run, and the warm-up's
# requests (the engines' CPU is taken over both).
run() {
	local name=$1 url=$2 out c0 c1 n rps w
	shift 2
	w=$(wrk -t2 -c"$conns" -d1s -s "$dir/post.lua" "$url" 2>&1 | awk '/ requests in / { print $1 }')
	c0=$(bench_cpu "$@")
	out=$(wrk -t2 -c"$conns" -d"${secs}s" -s "$dir/post.lua" "$url" 2>&1)
	c1=$(bench_cpu "$@")
	grep -q 'Non-2xx\|Socket errors' <<<"$out" && grep 'Non-2xx\|Socket errors' <<<"$out" |
		sed "s/^/  ($name) /" >&2
	n=$(awk '/ requests in / { print $1 }' <<<"$out")
	rps=$(awk '/^Requests\/sec/ { printf "%d", $2 }' <<<"$out")
	echo "${rps:-0} ${n:-0} $(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.2f", b - a }') ${w:-0}"
}
us_per() { awk -v c="$1" -v n="$2" 'BEGIN { if (n > 0) printf "%.0f", 1e6 * c / n; else print "n/a" }'; }
if [[ " $parts " == *" 2 "* ]]; then
	echo
	echo "== 2. two heads behind HAProxy against one head directly; node 50 ms away, $conns connections"
	make -s -j2 all build/bench/fixed-upstream.fcgi >/dev/null
	up=$(free_port)
	build/bench/fixed-upstream.fcgi "$up" 50 & pids+=($!)
	wait_port "$up" "upstream 50 ms"
	printf '[server]\nallow_private_urls = true\n\n[chain bench.d50]\nkind = evm\nchain_id = 1\n' > "$dir/d50.ini"
	printf 'testnet = true\nindex = false\nupstream = http://127.0.0.1:%s\n' "$up" >> "$dir/d50.ini"
	# Finite limits too high to refuse: this key is counted in Redis, the Enterprise one is not.
	printf '\n[plan benchlimited]\nrps = 1000000000\nrpd = 1000000000000\ncups = 1000000000\n' >> "$dir/d50.ini"
	# As bench/remote.sh: 4 processes of 64 threads a head, so one head alone has a thread for
	# each of the 256 connections and the node's 50 ms, not the pool, sets its rate.
	export BLOCKPORT_PROCS=${BLOCKPORT_PROCS:-4} BLOCKPORT_THREADS=${BLOCKPORT_THREADS:-64}
	# Each thread holds its PostgreSQL connection from the start: the heads serve the JSON-RPC
	# program alone (a build directory of links), or 8 programs x 256 threads would not fit.
	mkdir -p "$dir/build/fcgi"
	for f in build/*; do [ "$f" = build/fcgi ] || ln -s "$top/$f" "$dir/build/"; done
	ln -s "$top/build/fcgi/rpc.fcgi" "$dir/build/fcgi/"
	CLUSTER_WORKERS=none PG_MAX_CONNECTIONS=1200 bash scripts/cluster.sh start "$dir/cluster" \
		--build "$dir/build" --extra-config "$dir/d50.ini" > "$dir/cluster.out" 2>&1 ||
		{ cat "$dir/cluster.out" >&2; exit 1; }
	bash scripts/stack.sh start "$dir/lone" --server lighttpd --no-workers \
		--build "$dir/build" --extra-config "$dir/d50.ini" > "$dir/lone.out" 2>&1 || { cat "$dir/lone.out" >&2; exit 1; }
	cenv() { sed -n "s/^$1=//p" "$dir/cluster/env" | tr -d '"'; }
	lb=$(cenv BASE_URL)
	read -r h1 h2 <<<"$(cenv HEAD_URLS)"
	pgid() { ps -o pgid= -p "$(head -1 "$1/web.pid")" | tr -d ' '; }
	g1=$(pgid "$dir/cluster/head1")
	g2=$(pgid "$dir/cluster/head2")
	gl=$(pgid "$dir/lone")
	pgpid=$(head -1 "$dir/cluster/pg/db/postmaster.pid")
	rdpid=$(cat "$dir/cluster/redis.pid")
	hapid=$(head -1 "$dir/cluster/haproxy.pid")
	lone=$(sed -n 's/^BASE_URL=//p' "$dir/lone/env")
	# An Enterprise key each (no finite limit: counted in the head's file), and on the cluster one
	# of finite limits too (counted in Redis on every request); none of them is ever refused.
	BLOCKPORT_CONFIG=$dir/cluster/head1/blockport.ini build/blockport account create \
		--email limited@localhost --plan benchlimited >/dev/null
	fkey=$(BLOCKPORT_CONFIG=$dir/cluster/head1/blockport.ini build/blockport key create \
		limited@localhost --test 2>/dev/null)
	for c in cluster/head1 lone; do
		BLOCKPORT_CONFIG=$dir/$c/blockport.ini build/blockport account create \
			--email bench@localhost --plan enterprise >/dev/null
	done
	key=$(BLOCKPORT_CONFIG=$dir/cluster/head1/blockport.ini build/blockport key create \
		bench@localhost --test 2>/dev/null)
	lkey=$(BLOCKPORT_CONFIG=$dir/lone/blockport.ini build/blockport key create \
		bench@localhost --test 2>/dev/null)
	body='{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"0x5fbdb2315678afecb367f032d93f642f64180aa3","data":"0x70a08231000000000000000000000000f39fd6e51aad88f6f4ce6af57ab8cc6b20000000"},"latest"]}'
	for k in "$key" "$lkey" "$fkey"; do
		for u in "$lb" "$h1" "$h2" "$lone"; do
			out=$(curl -s -m 5 -H 'Content-Type: application/json' -H "X-API-Key: $k" -d "$body" \
				"$u/v1/rpc/bench/d50")
			[ "$k" = "$lkey" ] && [ "$u" != "$lone" ] && continue
			[ "$k" != "$lkey" ] && [ "$u" = "$lone" ] && continue
			case $out in *'"result"'*) ;; *) echo "cluster.sh: $u answered: $out" >&2; exit 1 ;; esac
		done
	done
	lua() { printf 'wrk.method = "POST"\nwrk.body = %s\nwrk.headers["Content-Type"] = "application/json"\nwrk.headers["X-API-Key"] = "%s"\n' "'$body'" "$1"; }
	lua "$key" > "$dir/post.lua"
	# The shared engines' and the balancer's CPU over both cluster runs and their warm-ups.
	pg0=$(bench_cpu "ppid:$pgpid"); rd0=$(bench_cpu "ppid:$rdpid"); ha0=$(bench_cpu "ppid:$hapid")
	# Redis's own time inside the scripts (INFO commandstats: usec and calls of EVAL/EVALSHA),
	# which the process CPU above mixes with its network work and the box's wake-ups.
	rurl=$(cenv REDIS_URL)
	rstat() { redis-cli -u "$rurl" INFO commandstats | tr -d '\r' |
		awk -F'[:=,]' '/^cmdstat_eval(sha)?:/ { c += $3; u += $5 } END { print c + 0, u + 0 }'; }
	read -r rc0 ru0 <<<"$(rstat)"
	read -r lb_rps lb_n lb_heads lb_w < <(run haproxy "$lb/v1/rpc/bench/d50" "$g1" "$g2")
	ha1=$(bench_cpu "ppid:$hapid")
	read -r h_rps h_n h_cpu h_w < <(run head1 "$h1/v1/rpc/bench/d50" "$g1")
	lb_pg=$(awk -v a="$pg0" -v b="$(bench_cpu "ppid:$pgpid")" 'BEGIN { print b - a }')
	lb_rd=$(awk -v a="$rd0" -v b="$(bench_cpu "ppid:$rdpid")" 'BEGIN { print b - a }')
	lb_ha=$(awk -v a="$ha0" -v b="$ha1" 'BEGIN { print b - a }')
	read -r rc1 ru1 <<<"$(rstat)"
	lua "$fkey" > "$dir/post.lua"
	rd2=$(bench_cpu "ppid:$rdpid")
	read -r f_rps f_n f_cpu f_w < <(run head1-limited "$h1/v1/rpc/bench/d50" "$g1")
	f_rd=$(awk -v a="$rd2" -v b="$(bench_cpu "ppid:$rdpid")" 'BEGIN { print b - a }')
	read -r rc2 ru2 <<<"$(rstat)"
	lua "$lkey" > "$dir/post.lua"
	read -r l_rps l_n l_cpu _ < <(run lone "$lone/v1/rpc/bench/d50" "$gl")
	echo "   eth_call at latest (no cache), ${secs}s after a 1 s warm-up, BLOCKPORT_PROCS=$BLOCKPORT_PROCS" \
		"BLOCKPORT_THREADS=$BLOCKPORT_THREADS a head, $(nproc) cores, load $(load)"
	printf '%-40s %9s %9s %14s\n' run "req/s" requests "head CPU us/req"
	printf '%-40s %9s %9s %14s\n' "HAProxy -> 2 heads (PostgreSQL + Redis)" "$lb_rps" "$lb_n" \
		"$(us_per "$lb_heads" "$lb_n")"
	printf '%-40s %9s %9s %14s\n' "head 1 directly (PostgreSQL + Redis)" "$h_rps" "$h_n" \
		"$(us_per "$h_cpu" "$h_n")"
	printf '%-40s %9s %9s %14s\n' "head 1 directly, a key of finite limits" "$f_rps" "$f_n" \
		"$(us_per "$f_cpu" "$f_n")"
	printf '%-40s %9s %9s %14s\n' "a lone head (SQLite + mapped file)" "$l_rps" "$l_n" \
		"$(us_per "$l_cpu" "$l_n")"
	echo "HAProxy + 2 heads / 1 head directly: $(ratio "$lb_rps" "$h_rps")  (goal >= 95%)"
	echo "cluster head CPU / lone SQLite head CPU, a request: $(ratio "$(us_per "$h_cpu" "$h_n")" "$(us_per "$l_cpu" "$l_n")")"
	all=$((lb_n + lb_w + h_n + h_w))
	echo "over both cluster runs and their warm-ups ($all requests): PostgreSQL" \
		"$(us_per "$lb_pg" $all) us, Redis $(us_per "$lb_rd" $all) us CPU a request;" \
		"HAProxy $(us_per "$lb_ha" $((lb_n + lb_w))) us a request it passed"
	per_call() { awk -v u="$1" -v c="$2" 'BEGIN { if (c > 0) printf "%.1f", u / c; else print "n/a" }'; }
	echo "Redis inside its scripts (INFO commandstats): $((rc1 - rc0)) calls," \
		"$(per_call $((ru1 - ru0)) $((rc1 - rc0))) us a call"
	echo "the key of finite limits: Redis $(us_per "$f_rd" $((f_n + f_w))) us CPU a request;" \
		"$((rc2 - rc1)) scripts, $(per_call $((ru2 - ru1)) $((rc2 - rc1))) us a call inside Redis"
fi
