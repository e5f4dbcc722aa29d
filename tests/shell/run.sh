#!/usr/bin/env bash
# make run's lifecycle. Each run is started as make run starts it (scripts/stack.sh run), in
# the background with job control, so a SIGINT to its process group is what Ctrl-C in a
# terminal sends. Checked:
#  - Ctrl-C stops everything: no process of the stack is left;
#  - a second run on the same directory refuses at once, and the first one keeps working;
#  - two runs in two directories on two PORTs coexist (each devchain on its PORT + 465);
#  - a restart at once on the same port starts, whatever connections TIME_WAIT holds there;
#  - accounts and keys made with the CLI, and the chain, survive a restart; --fresh wipes them,
#    after a WebSocket session too;
#  - EXTRA_CONFIG=FILE (--extra-config) appends FILE to the written config, and what it gives
#    again wins: sections written already are taken up again, a key set again replaces.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d /tmp/blockport-run.XXXXXX)
mkdir -p "$tmp/san"
chmod 777 "$tmp/san"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}:log_path=$tmp/san/asan"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}:log_path=$tmp/san/ubsan"
export BLOCKPORT_PROCS=1 DEVCHAIN_ARGS="--block-time 1"
declare -A runs=()

cleanup() {
	local name
	for name in "${!runs[@]}"; do
		kill -TERM -- -"${runs[$name]}" 2>/dev/null && wait "${runs[$name]}" 2>/dev/null
	done
	if [ "$t_fail" = 0 ]; then rm -rf "$tmp"; else echo "# files of the failed run in $tmp"; fi
}
trap cleanup EXIT

pick_port() {	# a free PORT whose PORT + 465 is free too
	local p
	while :; do
		p=$(free_port)
		port_busy $((p + 465)) || { echo "$p"; return; }
	done
}

start_run() {	# NAME PORT [ARGS...]: a run in $tmp/NAME; true once it says it is running
	local name=$1 port=$2 i
	shift 2
	: > "$tmp/$name.out"	# emptied here: the job opens it later than this shell goes on
	set -m
	# A shell started in the background may inherit SIGINT ignored, which no shell can undo:
	# perl (Essential in Debian) restores the default before the run starts, as a terminal has it.
	perl -e '$SIG{INT} = $SIG{QUIT} = "DEFAULT"; exec @ARGV or die "exec: $!"' \
		bash "$top/scripts/stack.sh" run --dir "$tmp/$name" --port "$port" --build "$build" "$@" \
		>> "$tmp/$name.out" 2>&1 &
	runs[$name]=$!
	set +m
	for ((i = 0; i < 1800; i++)); do
		grep -q '^Blockport is running' "$tmp/$name.out" && return 0
		kill -0 "${runs[$name]}" 2>/dev/null || break
		sleep 0.1
	done
	sed 's/^/# /' "$tmp/$name.out"
	return 1
}

ctrl_c() {	# NAME: SIGINT to the run's process group; true when it stopped and said so
	local pid=${runs[$1]} rc i
	kill -INT -- -"$pid"
	# Bounded: a run that ignores the signal fails this check instead of hanging the suite.
	for ((i = 0; i < 600; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "# $1: still running 60 s after SIGINT; sending SIGTERM"
		kill -TERM -- -"$pid" 2>/dev/null
	fi
	wait "$pid"
	rc=$?
	unset "runs[$1]"
	[ "$rc" = 0 ] && grep -q '^stopping' "$tmp/$1.out" || { sed 's/^/# /' "$tmp/$1.out"; return 1; }
}

nothing_left() {	# NAME: no live process carries the stack's environment
	local f pid st left=""
	for f in $(grep -lzxF -e "BLOCKPORT_STACK=$tmp/$1" -e "BLOCKPORT_CONFIG=$tmp/$1/blockport.ini" \
	    /proc/[0-9]*/environ 2>/dev/null); do
		pid=${f#/proc/}
		pid=${pid%/environ}
		read -r st 2>/dev/null < "/proc/$pid/stat" && [[ $st != *") Z "* ]] &&
			left+=" $pid:$(tr '\0' ' ' < "/proc/$pid/cmdline")"
	done
	[ -z "$left" ] || { echo "# left running:$left"; return 1; }
}

var() {	# NAME VAR: a value from the run's env file
	sed -n "s|^$2=||p" "$tmp/$1/env" 2>/dev/null
}

block_number() {	# NAME KEY: the devchain's block number through the run's API; fails on no answer
	local out
	out=$(curl -s -m 20 -H "X-API-Key: $2" -H 'Content-Type: application/json' \
		-d '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}' \
		"$(var "$1" BASE_URL)/v1/rpc/ethereum/devnet")
	[[ $out =~ \"result\":\"(0x[0-9a-f]+)\" ]] || { echo "# $1: $out" >&2; return 1; }
	echo $((BASH_REMATCH[1]))
}

answers() {	# NAME KEY: the run answers with that key
	block_number "$1" "$2" > /dev/null
}

status_with() {	# NAME KEY STATUS: an authenticated request's HTTP status
	[ "$(curl -s -m 20 -o /dev/null -w '%{http_code}' -H "X-API-Key: $2" \
		"$(var "$1" BASE_URL)/v1/wallets?limit=1")" = "$3" ]
}

cli() {	# NAME ARGS...: the admin CLI on the run's config
	local name=$1
	shift
	BLOCKPORT_CONFIG=$tmp/$name/blockport.ini "$build/blockport" "$@" 2>/dev/null
}

pa=$(pick_port)
check "make run starts" start_run a "$pa"
ka=$(var a API_KEY)
check "it answers with the test key it printed" answers a "$ka"

refused() {
	local pb=$1 rc
	timeout 30 bash "$top/scripts/stack.sh" run --dir "$tmp/a" --port "$pb" --build "$build" \
		> "$tmp/second.out" 2>&1
	rc=$?
	[ "$rc" = 1 ] && grep -q "^blockport: already running from $tmp/a (pid ${runs[a]}, " \
		"$tmp/second.out" || { echo "# exit $rc"; sed 's/^/# /' "$tmp/second.out"; return 1; }
}
pb=$(pick_port)
check "a second run on the same directory refuses at once, naming the first" refused "$pb"
check "and the first one still answers, with the same key" answers a "$ka"

# b gets an EXTRA_CONFIG that gives again sections and keys the written config has.
cat > "$tmp/extra.ini" <<'EOT'
[server]
anon_rps = 1
[prices ethereum]
native = 3150.25
[chain ethereum.devnet]
confirmations = 1
EOT
check "make run passes EXTRA_CONFIG as an absolute path" eval \
	'make -C "$top" -n -s run EXTRA_CONFIG=tests/extra.ini 2>/dev/null |
	grep -qF -- "--extra-config $top/tests/extra.ini"'
check "a missing EXTRA_CONFIG is refused before anything starts" eval \
	'! timeout 30 bash "$top/scripts/stack.sh" run --dir "$tmp/x" --port "$(pick_port)" \
	--build "$build" --extra-config "$tmp/missing.ini" > "$tmp/x.out" 2>&1 &&
	grep -q "EXTRA_CONFIG .*missing.ini is not a readable file" "$tmp/x.out" && [ ! -e "$tmp/x" ]'
check "a run in another directory on another PORT starts alongside (with EXTRA_CONFIG)" \
	start_run b "$pb" --extra-config "$tmp/extra.ini"
check "EXTRA_CONFIG's lines end the written config" eval \
	'tail -n 8 "$tmp/b/blockport.ini" | grep -q "^native = 3150.25$" &&
	grep -q "^  extra .*extra.ini" "$tmp/b.out"'
anon_statuses() {	# NAME: the statuses of 6 requests without a key, at once
	local base i
	base=$(var "$1" BASE_URL)
	for ((i = 0; i < 6; i++)); do
		curl -s -m 20 -o /dev/null -w '%{http_code}\n' "$base/v1/wallets" &
	done
	wait
}
check "the appended anon_rps = 1 wins over the written one (429 for the anonymous)" eval \
	'anon_statuses b | grep -q "^429$"'
check "the run without EXTRA_CONFIG keeps anon_rps = 20" eval '! anon_statuses a | grep -q "^429$"'
chain_ports() {
	[ "$(var a CHAIN_URL)" = "http://127.0.0.1:$((pa + 465))" ] &&
		[ "$(var b CHAIN_URL)" = "http://127.0.0.1:$((pb + 465))" ]
}
check "each devchain listens on its PORT + 465" chain_ports
kb=$(var b API_KEY)
check "both answer" eval 'answers a "$ka" && answers b "$kb"'

# State made with the CLI while running.
cli a account create --email keep@example.test > /dev/null
kk=$(cli a key create keep@example.test --test)
check "a key made with the CLI answers" status_with a "$kk" 200
n1=$(block_number a "$kk")

check "Ctrl-C stops the run" ctrl_c a
check "no process of the stopped run is left" nothing_left a
check "the other run is untouched" answers b "$kb"

# A connection the server closed first stays in TIME_WAIT on its port for a minute; it does not
# stop a new listener (SO_REUSEADDR), so it must not stop make run either. Made here on purpose.
time_wait() {	# PORT: leaves a connection in TIME_WAIT on the local PORT
	perl -MIO::Socket::INET -e '
		my $p = shift;
		my $l = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $p,
		    Listen => 1, ReuseAddr => 1) or die "listen: $!";
		my $c = IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => $p)
		    or die "connect: $!";
		my $s = $l->accept or die "accept: $!";
		close $l;
		close $s;		# the accepted end closes first: its side waits
		sysread($c, my $b, 1);	# the FIN
		close $c;' "$1" &&
		ss -Htan state time-wait "sport = :$1" | grep -q .
}
check "a connection in TIME_WAIT on the stopped run's port" time_wait "$pa"
check "make run starts again at once on the same port" start_run a "$pa"
check "the key made with the CLI survived the restart" status_with a "$kk" 200
check "the printed dev key is the same one" eval '[ "$(var a API_KEY)" = "$ka" ]'
chain_kept() { local n; n=$(block_number a "$kk") && [ "$n" -ge "$n1" ]; }
check "the chain survived the restart (block $n1 or later)" chain_kept
# A WebSocket session leaves its connection slots (DATABASE.ws/, a directory) beside the
# database: FRESH=1 must remove them with the rest.
ws_session() {	# NAME KEY: subscribes to newHeads over the run's WebSocket, then closes
	WS=$(var "$1" WS_URL) KEY=$2 node -e '
		const WebSocket = require(process.argv[1]);
		const ws = new WebSocket(`${process.env.WS}/v1/ws/ethereum/devnet?apiKey=${process.env.KEY}`);
		const t = setTimeout(() => { console.error("no answer"); process.exit(1); }, 20000);
		ws.on("open", () => ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1,
		    method: "eth_subscribe", params: ["newHeads"] })));
		ws.on("message", (d) => {
			const m = JSON.parse(d);
			if (m.id !== 1) return;
			if (!/^0x/.test(m.result)) { console.error(d.toString()); process.exit(1); }
			clearTimeout(t);
			ws.close();
		});
		ws.on("error", (e) => { console.error(e.message); process.exit(1); });' \
		"$top/devchain/node_modules/ws" && [ -d "$tmp/$1/blockport.db.ws" ]
}
check "a WebSocket session (a free key's connection slots in blockport.db.ws/)" ws_session a "$kk"
check "Ctrl-C stops it again" ctrl_c a

check "make run FRESH=1 starts" start_run a "$pa" --fresh
check "FRESH=1 announced itself" grep -q '^FRESH=1: a new database and a new chain' "$tmp/a.out"
check "after FRESH=1 the old key is refused" status_with a "$kk" 401
check "after FRESH=1 the account is gone" eval '! cli a account list | grep -q keep@example.test'
check "Ctrl-C stops both runs" eval 'ctrl_c a && ctrl_c b'
check "no process of either run is left" eval 'nothing_left a && nothing_left b'
no_reports() { ! ls "$tmp"/san/* > /dev/null 2>&1 || { head -40 "$tmp"/san/*; return 1; }; }
check "no sanitizer report" no_reports
finish
