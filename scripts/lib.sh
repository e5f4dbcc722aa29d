# Shell helpers shared by scripts/stack.sh and the bench/*.sh scripts (sourced, never run).

port_busy() {	# PORT: true when a TCP socket uses that local port (listening, connected, TIME_WAIT)
	ss -Htan "sport = :$1" 2>/dev/null | grep -q .
}

port_listened() {	# PORT: true when something listens on that local TCP port
	ss -Htln "sport = :$1" 2>/dev/null | grep -q .
}

free_port() {	# prints a loopback TCP port that no socket uses now, below the ephemeral range
	local p
	while :; do
		p=$((20000 + RANDOM % 12000))	# 32768 up: outgoing connections' ports (Linux)
		if ! port_busy "$p"; then
			echo "$p"
			return
		fi
	done
}

wait_http() {	# URL [tries]: waits until something answers on URL, 0.1 s a try (default 100)
	local i me=${0##*/}
	for ((i = 0; i < ${2:-100}; i++)); do
		curl -s -o /dev/null -m 1 "$1" && return 0
		sleep 0.1
	done
	echo "${me%.sh}: nothing answers at $1" >&2
	return 1
}

wait_port() {	# PORT [NAME]: waits until something listens on the loopback TCP PORT (10 s)
	local i me=${0##*/}

wait_socket() {	# PATH: waits until a Unix socket exists at PATH (10 s)
	local i me=${0##*/}
	for ((i = 0; i < 100; i++)); do
		[ -S "$1" ] && return 0
		sleep 0.1
	done
	echo "${me%.sh}: no socket at $1" >&2
	return 1
}
	for ((i = 0; i < 100; i++)); do
		port_listened "$1" && return 0
		sleep 0.1
	done
	echo "${me%.sh}: nothing listens on $1${2:+ ($2)}" >&2
	return 1
}
