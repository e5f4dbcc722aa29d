#!/bin/sh
# Installs what Blockport needs to build, run and test on Debian 12, and only what is missing.
# Called by `make run`, `make test` and `make bench`; safe to run again.
set -eu
PKGS="build-essential pkg-config clang libclang-rt-14-dev libfcgi-dev libcjson-dev
libsqlite3-dev sqlite3 libcurl4-openssl-dev libssl-dev libinih-dev libsecp256k1-dev
libhiredis-dev redis-server
libcunit1-dev websocketd lighttpd apache2 spawn-fcgi multiwatch wrk nginx-light curl jq
valgrind procps iproute2 ca-certificates libpq-dev postgresql haproxy prometheus"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
# Node.js may come from elsewhere than Debian (with npm inside): only install it when absent.
command -v node >/dev/null 2>&1 || missing="$missing nodejs"
command -v npm >/dev/null 2>&1 || missing="$missing npm"
if [ -n "$missing" ]; then
	echo "deps: installing$missing"
	SUDO=""
	[ "$(id -u)" = 0 ] || SUDO=sudo
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		$missing >/dev/null
	# The Debian packages start their own daemons (web servers on port 80, haproxy, prometheus);
	# Blockport runs its own instances.
	for s in lighttpd apache2 nginx haproxy prometheus prometheus-node-exporter; do
		$SUDO service "$s" stop >/dev/null 2>&1 || true
	done
fi
# The devchain and the JavaScript test clients, pinned by devchain/package-lock.json.
if [ -f devchain/package-lock.json ]; then
	if [ ! -d devchain/node_modules ] ||
	    [ devchain/package-lock.json -nt devchain/node_modules/.package-lock.json ]; then
		echo "deps: npm ci in devchain/"
		(cd devchain && npm ci --no-audit --no-fund --loglevel=error)
	fi
fi
