#!/bin/sh
# Runs one FastCGI program behind Apache as a pool: BLOCKPORT_PROCS processes of
# BLOCKPORT_THREADS request threads each (lib/core/fcgi.c), all accepting on one Unix socket,
# $BLOCKPORT_RUN/fcgi/NAME.sock, which apache/blockport.conf reaches with mod_proxy_fcgi.
# spawn-fcgi binds the socket and execs multiwatch, which forks the processes and starts again
# any that dies; SIGTERM (or SIGINT, SIGHUP) stops multiwatch, and it stops its processes
# (SIGUSR1: each finishes the requests it has). Runs in the foreground, as the pid it was started
# with: under systemd (apache/blockport-fcgi@.service), scripts/stack.sh or by hand.
#
#   apache/fcgi-pool.sh NAME    (NAME.fcgi in $BLOCKPORT_BIN)
#
# Environment: BLOCKPORT_BIN, BLOCKPORT_RUN, BLOCKPORT_CONFIG as for apache/blockport.conf;
# BLOCKPORT_PROCS (4) and BLOCKPORT_THREADS (16); BLOCKPORT_USER (www-data): the user the
# processes run as and the socket's owner when started as root (Apache's User connects to it);
# anything else set (ASAN_OPTIONS, ...) reaches the programs unchanged.
set -eu
name=${1:?usage: fcgi-pool.sh NAME}
prog=${BLOCKPORT_BIN:?}/$name.fcgi
dir=${BLOCKPORT_RUN:?}/fcgi
: "${BLOCKPORT_CONFIG:?}"
procs=${BLOCKPORT_PROCS:-4}
user=${BLOCKPORT_USER:-www-data}
[ -x "$prog" ] || { echo "fcgi-pool: $prog is not an executable" >&2; exit 1; }
mkdir -p "$dir"
set --
if [ "$(id -u)" = 0 ]; then
	chown "$user" "$dir"
	set -- -u "$user" -U "$user"
fi
# The listen backlog holds what the pool has no thread for yet: 1024 is Apache's
# MaxRequestWorkers, the most requests it sends at once, so a burst queues there instead of
# being refused (the kernel caps it at net.core.somaxconn, 4096 on current Linux). The socket is
# its owner's alone (0600): Apache's workers run as that user. multiwatch gives up on a process
# that dies 3 times within 10 s (a program that cannot start), not on one killed now and then.
exec spawn-fcgi -n -s "$dir/$name.sock" -M 0600 -b 1024 "$@" -- \
	/usr/bin/multiwatch -f "$procs" -r 3 -t 10000 -- "$prog"
