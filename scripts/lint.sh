#!/bin/sh
# make lint: the banned-function list (curl's), no raw sqlite3_*/curl_* calls outside lib/, the
# folders of lib/ depending one way (scripts/layers.sh), one owner per table (scripts/owners.sh)
# no file of lib/, fcgi/, cron/, ws/ or admin/ past 900 lines, and no unclosed code fence in the
# Markdown pages.
set -u
rc=0
src=$(ls lib/*/*.c fcgi/*.c cron/*.c ws/*.c admin/*.c 2>/dev/null)
banned='\b(sprintf|vsprintf|strcpy|strcat|strncpy|strtok|atoi|atol|atoll|sscanf|gets)[[:space:]]*\('
if grep -nE "$banned" $src; then
	echo "lint: banned function above (use snprintf, memcpy, bp_strlcpy, bp_parse_int64)"
	rc=1
fi
outside=$(ls fcgi/*.c cron/*.c ws/*.c admin/*.c 2>/dev/null)
if [ -n "$outside" ] && grep -nE '\b(sqlite3_[a-z_]+|curl_[a-z_]+)[[:space:]]*\(' $outside; then
	echo "lint: SQL and HTTP go through lib/db and lib/upstream, not raw sqlite3_/curl_ calls"
	rc=1
fi
sh scripts/layers.sh || rc=1
sh scripts/owners.sh || rc=1
for f in $src; do
	n=$(wc -l < "$f")
	if [ "$n" -gt 900 ]; then
		echo "lint: $f has $n lines (over 900: it holds two concerns, split it along them)"
		rc=1
	fi
done
# An unclosed code fence turns the rest of a page into code (README's bundler example once did).
for f in README.md docs/*.md; do
	n=$(grep -c '^[[:space:]]*```' "$f")
	if [ $((n % 2)) != 0 ]; then
		echo "lint: $f has $n code fences: one is not closed"
		rc=1
	fi
done
[ $rc = 0 ] && echo "lint: ok"
exit $rc
