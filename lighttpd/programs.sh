#!/bin/sh
# Prints lighttpd's fastcgi.server for every Blockport program in $BLOCKPORT_BIN: NAME.fcgi
# serves /v1/NAME and /v1/NAME/..., and v1.fcgi (the fallback that answers 404) serves
# everything else.
# lighttpd runs this through include_shell when it reads lighttpd/blockport.conf.
set -eu
bin=${BLOCKPORT_BIN:?}
run=${BLOCKPORT_RUN:?}
procs=${BLOCKPORT_PROCS:-4}
entry() {
	cat <<EOT
	"$1" => ((
		"socket" => "$run/$2.sock",
		"bin-path" => "$bin/$2.fcgi",
		"min-procs" => $procs,
		"max-procs" => $procs,
		"check-local" => "disable",
		"bin-copy-environment" => ( "PATH", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS",
			"BLOCKPORT_THREADS" ),
		"bin-environment" => ( "BLOCKPORT_CONFIG" => "${BLOCKPORT_CONFIG:?}" ),
	)),
EOT
}
echo 'fastcgi.server = ('
for f in "$bin"/*.fcgi; do
	name=$(basename "$f" .fcgi)
	# A prefix: /v1/NAME (the collection) and /v1/NAME/... alike; NAME's own route table
	# answers 404 for anything else that starts so, such as /v1/NAMEx.
	[ "$name" = v1 ] || entry "/v1/$name" "$name"
done
[ -x "$bin/v1.fcgi" ] && entry "/" v1
echo ')'
if [ "${BLOCKPORT_WS_PORT:-0}" != 0 ]; then	# 0 or unset: no WebSocket proxy
	# Only upgrade requests: a plain GET of /v1/ws/... gets the 404 of v1.fcgi in the JSON body.
	cat <<EOT
\$HTTP["url"] =~ "^/v1/ws/" {
	\$REQUEST_HEADER["Upgrade"] =~ "(?i)^websocket$" {
		proxy.server = ( "" => (( "host" => "127.0.0.1", "port" => ${BLOCKPORT_WS_PORT} )) )
		proxy.header = ( "upgrade" => "enable" )
		# A subscriber may send nothing for long: ws/subscribe closes idle connections itself.
		server.max-read-idle = 3600
	}
}
EOT
fi
# Benchmarks only: the FastCGI baselines (BLOCKPORT_BENCH_PROGRAMS, default bare and relay) in
# BLOCKPORT_BENCH_BIN at /bench/NAME/, and static files at /static/.
if [ -n "${BLOCKPORT_BENCH_BIN:-}" ]; then
	echo '$HTTP["url"] =~ "^/bench/" {'
	echo 'fastcgi.server = ('
	for name in ${BLOCKPORT_BENCH_PROGRAMS:-bare relay}; do
		f=$BLOCKPORT_BENCH_BIN/$name.fcgi
		[ -x "$f" ] || continue
		cat <<EOT
	"/bench/$name/" => ((
		"socket" => "$run/bench-$name.sock",
		"bin-path" => "$f",
		"max-procs" => $procs,
		"check-local" => "disable",
		"bin-environment" => ( "BLOCKPORT_CONFIG" => "${BLOCKPORT_CONFIG:?}" ),
	)),
EOT
	done
	echo ')'
	echo '}'
	echo '$HTTP["url"] =~ "^/static/" { fastcgi.server = () }'
fi
