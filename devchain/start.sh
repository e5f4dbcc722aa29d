#!/bin/sh
# Starts the local development chain: the anvil binary shipped in the npm package
# @foundry-rs/anvil (pinned in package-lock.json), on 127.0.0.1 only.
#
#   devchain/start.sh PORT [extra anvil args...]      e.g. devchain/start.sh 8545 --block-time 2
#
# It execs anvil, so the PID of this script is anvil's PID (kill it to stop the chain).
# Chain id 31337, hardfork prague (the default hardfork of anvil 1.7.1 caps gas per transaction),
# automine unless --block-time N is given, funded accounts from the standard dev mnemonic.
set -eu
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)

if [ $# -lt 1 ]; then
	echo "usage: $0 PORT [extra anvil args...]" >&2
	exit 2
fi
port=$1
shift
case $port in
	''|*[!0-9]*) echo "$0: PORT must be a number, got '$port'" >&2; exit 2 ;;
esac

if [ ! -d "$here/node_modules" ]; then
	echo "$0: $here/node_modules is missing: run make deps (or: cd devchain && npm ci)" >&2
	exit 1
fi

case "$(uname -s)" in
	Linux) os=linux ;;
	Darwin) os=darwin ;;
	*) os=unknown ;;
esac
case "$(uname -m)" in
	x86_64|amd64) arch=amd64 ;;
	aarch64|arm64) arch=arm64 ;;
	*) arch=unknown ;;
esac

anvil=""
# The platform package npm installs as an optional dependency of @foundry-rs/anvil; the
# package's postinstall fallback puts the binary next to its wrapper instead.
for f in "$here/node_modules/@foundry-rs/anvil-$os-$arch/bin/anvil" \
	"$here/node_modules/@foundry-rs/anvil/anvil"; do
	if [ -x "$f" ]; then
		anvil=$f
		break
	fi
done
if [ -z "$anvil" ]; then
	echo "$0: no anvil binary for $os-$arch under $here/node_modules/@foundry-rs: run make deps (or: cd devchain && npm ci)" >&2
	exit 1
fi

exec "$anvil" --host 127.0.0.1 --port "$port" --chain-id 31337 --hardfork prague --silent "$@"
