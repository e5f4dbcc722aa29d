#!/bin/sh
# make lint: the folders of lib/ depend one way. Each line below names a folder and the folders
# it may include from; an #include "other/x.h" outside that list is a layering error.
set -u
allowed() {
	case $1 in
	core)    echo "" ;;
	net)     echo "core" ;;
	rpc)     echo "core net" ;;
	evm)     echo "core net rpc" ;;
	index)   echo "core net rpc evm" ;;
	token)   echo "core net rpc evm index" ;;
	nft)     echo "core net rpc evm index token" ;;
	wallet)  echo "core net rpc evm index" ;;
	gas)     echo "core net rpc evm index token" ;;
	webhook) echo "core net rpc evm index token" ;;
	bundler) echo "core net rpc evm index token gas" ;;
	ws)      echo "core net rpc evm index" ;;
	*)       echo "?" ;;
	esac
}
rc=0
for f in lib/*/*.[ch]; do
	dir=${f#lib/}
	dir=${dir%%/*}
	ok=$(allowed "$dir")
	if [ "$ok" = "?" ]; then
		echo "lint: $f: folder lib/$dir/ has no place in scripts/layers.sh"
		rc=1
		continue
	fi
	for dep in $(sed -n 's|^#include "\([a-z_]*\)/[^"]*"|\1|p' "$f" | sort -u); do
		[ "$dep" = "$dir" ] && continue
		case " $ok " in
		*" $dep "*) ;;
		*) echo "lint: $f includes lib/$dep/ (lib/$dir/ may include only: ${ok:-nothing})"; rc=1 ;;
		esac
	done
done
exit $rc
