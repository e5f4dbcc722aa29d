# Shared by the bench/*.sh scripts: wrk runs and their figures.
# wrk_run NAME URL CONNS SECONDS [wrk args...]: prints "NAME rps p50_us p99_us" to stdout.
wrk_run() {
	local name=$1 url=$2 conns=$3 secs=$4 threads=2
	shift 4
	[ "$conns" -lt 2 ] && threads=1
	local out
	out=$(wrk -t"$threads" -c"$conns" -d"${secs}s" --latency "$@" "$url" 2>&1)
	local rps p50 p99
	rps=$(awk '/^Requests\/sec/ { printf "%d", $2 }' <<<"$out")
	p50=$(awk '$1 == "50%" { print $2 }' <<<"$out" | to_us)
	p99=$(awk '$1 == "99%" { print $2 }' <<<"$out" | to_us)
	if grep -q 'Socket errors' <<<"$out"; then
		grep 'Socket errors' <<<"$out" | sed "s/^/  ($name) /" >&2
	fi
	echo "$name ${rps:-0} ${p50:-0} ${p99:-0}"
}

# best_rows CONN...: for each connection count, ROUNDS rounds of one wrk run per row with the
# rows' runs interleaved (a burst of load from elsewhere hits every row alike), keeping each
# row's best run, then the table. The rows are the arrays names and urls, and optionally
# scripts (a wrk script per row, or ""); each run sends X-API-Key: $key for SECS seconds. The
# figures land in the associative arrays rps, p50s and p99s, keyed "ROW/CONNS".
best_rows() {
	local c round i r p50 p99
	local -a extra
	declare -gA rps p50s p99s
	printf '%-40s %10s %9s %9s\n' "run" "req/s" "p50(us)" "p99(us)"
	for c in "$@"; do
		for ((round = 0; round < ROUNDS; round++)); do
			for i in "${!urls[@]}"; do
				extra=()
				[ -n "${scripts[$i]:-}" ] && extra=(-s "${scripts[$i]}")
				read -r _ r p50 p99 < <(wrk_run x "${urls[$i]}" "$c" "$SECS" \
					-H "X-API-Key: $key" "${extra[@]}")
				if [ "$r" -gt "${rps[$i/$c]:-0}" ]; then
					rps[$i/$c]=$r; p50s[$i/$c]=$p50; p99s[$i/$c]=$p99
				fi
			done
		done
		for i in "${!urls[@]}"; do
			printf '%-40s %10s %9s %9s\n' "${names[$i]} (c=$c)" "${rps[$i/$c]:-0}" \
				"${p50s[$i/$c]:-0}" "${p99s[$i/$c]:-0}"
		done
	done
}

# Converts wrk's "103.00us" / "1.20ms" / "2.00s" into microseconds.
to_us() {
	awk '{ v = $1; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v);
	       if (u == "us") m = 1; else if (u == "ms") m = 1000; else if (u == "s") m = 1000000;
	       else m = 1; printf "%d\n", v * m }'
}

# ratio A B: A/B as a percentage with one decimal.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "n/a"; else printf "%.1f%%\n", 100 * a / b }'
}

# bench_start NAME: builds, starts the stack behind lighttpd in a temporary directory (stopped
# and removed on exit) with the bare program (bench/bare.c) served at /bench/, and makes an
# Enterprise account NAME@localhost with a test key. Sets dir and key, and sources the stack's
# env (BASE_URL, CHAIN_URL, BLOCKPORT_CONFIG, ...). Needs top (the source tree).
bench_start() {
	make -s -j2 ${BENCH_TARGETS:-all build/bench/bare.fcgi} >/dev/null
	dir=$(mktemp -d /tmp/blockport-bench.XXXXXX)
	trap 'bash scripts/stack.sh stop "$dir" >/dev/null 2>&1; bench_engine_stop "$dir"; rm -rf "$dir"' EXIT
	bench_engine "$dir"
	# Only the bare program is served at /bench/: other files in build/bench are not programs.
	mkdir -p "$dir/bench-bin"
	ln -s "$top/build/bench/bare.fcgi" "$dir/bench-bin/bare.fcgi"
	BLOCKPORT_BENCH_BIN=$dir/bench-bin BLOCKPORT_PROCS=${BLOCKPORT_PROCS:-4} \
		bash scripts/stack.sh start "$dir" --server lighttpd "${engine_extra[@]}" >/dev/null 2>&1
	. "$dir/env"
	export BLOCKPORT_CONFIG
	"$top/build/blockport" account create --email "$1@localhost" --plan enterprise >/dev/null
	key=$("$top/build/blockport" key create "$1@localhost" --test 2>/dev/null)
}

post() {	# PATH BODY: POSTs BODY with bench_start's key; prints the answer's body; fails unless 2xx
	curl -sf -H "X-API-Key: $key" -H 'Content-Type: application/json' -d "$2" "$BASE_URL$1"
}

# bench_engine DIR: BENCH_ENGINE=pg puts the head on shared engines (docs/scale.md): starts a
# throwaway PostgreSQL and Redis in DIR/engine and writes DIR/engine.ini (database, limits,
# limits_file) for stack.sh --extra-config; sets engine_extra (those options, or none) and
# PG_URL (or ""). Otherwise (sqlite, the default) nothing: SQLite and the mapped file.
# bench_engine_stop DIR stops what it started (in the scripts' EXIT traps).
bench_engine() {
	engine_extra=()
	# BENCH_EXTRA_CONFIG=FILE: more ini lines for the stack (bench/bundler.sh: trace_validation).
	[ -z "${BENCH_EXTRA_CONFIG:-}" ] || engine_extra=(--extra-config "$BENCH_EXTRA_CONFIG")
	PG_URL=""
	[ "${BENCH_ENGINE:-sqlite}" = pg ] || return 0
	mkdir -p "$1/engine"
	chmod 755 "$1"	# the postgres user (pg.sh, as root) reaches its directory through it
	# Every request thread of every program holds a connection.
	PG_URL=$(PG_MAX_CONNECTIONS=${PG_MAX_CONNECTIONS:-500} bash "$top/scripts/pg.sh" start "$1/engine")
	printf '[server]\ndatabase = %s\nlimits = %s\nlimits_file = %s\n' "$PG_URL" \
		"$(bash "$top/scripts/redis.sh" start "$1/engine")" "$1/engine/limits" > "$1/engine.ini"
	engine_extra=(--extra-config "$1/engine.ini")
}
bench_engine_stop() {
	[ -d "$1/engine" ] || return 0
	# What the primary did over the whole script, for docs/scale.md's sizing (bench/cluster.sh).
	echo "postgres over the run: $(bench_cpu "ppid:$(head -1 "$1/engine/pg/db/postmaster.pid")") s CPU," \
		"$(psql -qAtX -F ' ' "$(cat "$1/engine/pg.url")" -c "SELECT sum(xact_commit) || ' commits, ' ||
		sum(tup_inserted + tup_updated + tup_deleted) || ' rows written' FROM pg_stat_database")" >&2
	bash "$top/scripts/redis.sh" stop "$1/engine" >/dev/null 2>&1
	bash "$top/scripts/pg.sh" stop "$1/engine" >/dev/null 2>&1
}

# bench_sql SQL: runs SQL on the bench's database, whichever the engine (a file $dir/bench.db
# or $dir/blockport.db on SQLite, PG_URL on PostgreSQL); prints the rows, columns |-separated.
bench_sql() {
	if [ -n "${PG_URL:-}" ]; then
		psql -qAtX -v ON_ERROR_STOP=1 "$PG_URL" -c "$1"
	else
		sqlite3 "${BENCH_DB:-$dir/blockport.db}" "$1"
	fi
}

# bench_cpu PGID|ppid:PID...: CPU seconds (utime + stime, and those of reaped children) of the
# processes in those process groups, or of a PID and its children.
bench_cpu() {
	# A process may end between the glob and its read: cat goes on, its status is not ours.
	{ cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v sel=" $* " -v hz="$(getconf CLK_TCK)" '{
		pid = $1; sub(/^.*\) /, "")
		if (index(sel, " " $3 " ") || index(sel, " ppid:" $2 " ") || index(sel, " ppid:" pid " "))
			t += $12 + $13 + $14 + $15 }
		END { printf "%.2f\n", t / hz }'
}
