#!/bin/sh
# make lint: one owner per table. The migration that creates a table names its owner in the
# comment block just above CREATE TABLE ("-- Owner: lib/FOLDER/FILE.c"); only that file may
# INSERT, UPDATE or DELETE the table, and no code outside its folder of lib/ may name the table
# in a FROM or JOIN (other domains read through the owner's functions).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
code=$(ls lib/*/*.c fcgi/*.c cron/*.c ws/*.c admin/*.c 2>/dev/null)
rc=0
# "table owner" pairs, from the migrations.
pairs=$(awk '
	/^--/ { if (!inblock) { owner = ""; inblock = 1 }
		if (match($0, /Owner: lib\/[a-z_]+\/[a-z_]+\.c/))
			owner = substr($0, RSTART + 7, RLENGTH - 7)
		next }
	/^CREATE TABLE/ { t = $3; sub(/\(.*/, "", t); print t, (owner == "" ? "-" : owner) }
	{ inblock = 0; owner = "" }
' schema/*.sql)
echo "$pairs" | while read -r table owner; do
	if [ "$owner" = "-" ]; then
		echo "lint: table $table: its migration names no '-- Owner: lib/FOLDER/FILE.c'"
		echo x >> "$top/.owners.fail"
		continue
	fi
	if [ ! -f "$owner" ]; then
		echo "lint: table $table: owner $owner does not exist"
		echo x >> "$top/.owners.fail"
		continue
	fi
	writers=$(grep -lE "(INSERT INTO|REPLACE INTO|UPDATE|DELETE FROM)[[:space:]]+$table\\b" $code)
	for w in $writers; do
		[ "$w" = "$owner" ] && continue
		echo "lint: $w writes $table, owned by $owner"
		echo x >> "$top/.owners.fail"
	done
	folder=$(dirname "$owner")
	readers=$(grep -lE "(FROM|JOIN)[[:space:]]+$table\\b" $code)
	for r in $readers; do
		[ "$(dirname "$r")" = "$folder" ] && continue
		echo "lint: $r reads $table, owned by $owner (call the owner's readers)"
		echo x >> "$top/.owners.fail"
	done
done
if [ -f "$top/.owners.fail" ]; then
	rm -f "$top/.owners.fail"
	rc=1
fi
exit $rc
