#!/usr/bin/env bash
# make fuzz: builds every tests/fuzz/fuzz_*.c as a libFuzzer program (clang, ASan + UBSan, every
# report fatal) against the whole of lib/, then runs each for SECONDS with its corpus in
# build/fuzz/NAME/corpus (kept between runs, so each run starts where the last one stopped) and
# tests/fuzz/NAME.dict when there is one. Fails when any harness crashes, leaks, times out or
# trips a sanitizer; the input that did it is left in build/fuzz/NAME/.
#
#   bash tests/fuzz/run.sh [SECONDS]      (default 20; FUZZ_CC picks another clang)
set -euo pipefail
secs=${1:-20}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
cc=${FUZZ_CC:-clang}
out=build/fuzz
jobs=$(nproc 2>/dev/null || echo 2)
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cflags="-g -O1 -std=c11 -D_GNU_SOURCE -Ilib -I/usr/include/postgresql $san"
# The same libraries as the Makefile's LDLIBS (lib/ links the PostgreSQL and Redis drivers too).
libs="-lfcgi -lcjson -lsqlite3 -lpq -lcurl -lssl -lcrypto -linih -lsecp256k1 -lhiredis -lm"

command -v "$cc" >/dev/null || { echo "fuzz: $cc not found (apt-get install clang)" >&2; exit 1; }
make -s build/schema_sql.c
mkdir -p "$out/lib"

# The library once, instrumented for coverage but without libFuzzer's main.
echo "== build lib (fuzzer-no-link)"
srcs=(lib/*/*.c build/schema_sql.c)
objs=()
for s in "${srcs[@]}"; do
	objs+=("$out/lib/$(echo "$s" | tr / _).o")
done
# Each source and its object, two to a line, compiled $jobs at a time; a failure stops xargs.
for i in "${!srcs[@]}"; do
	echo "${srcs[$i]} ${objs[$i]}"
done | xargs -P "$jobs" -n 2 \
	sh -c "$cc $cflags -fsanitize=fuzzer-no-link -c -o \"\$2\" \"\$1\" || exit 255" sh

failed=()
for src in tests/fuzz/fuzz_*.c; do
	name=$(basename "$src" .c)
	dir=$out/$name
	mkdir -p "$dir/corpus"
	echo "== $name: build"
	if ! "$cc" $cflags -fsanitize=fuzzer -o "$dir/$name" "$src" "${objs[@]}" $libs; then
		failed+=("$name (build)")
		continue
	fi
	opts=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
		-artifact_prefix="$dir/")
	dict=tests/fuzz/${name#fuzz_}.dict
	[ -f "$dict" ] && opts+=(-dict="$dict")
	echo "== $name: ${secs}s"
	if ! "$dir/$name" "${opts[@]}" "$dir/corpus" > "$dir/log" 2>&1; then
		failed+=("$name")
		echo "$name failed; the end of $dir/log:"
		tail -n 40 "$dir/log"
		continue
	fi
	grep -E '^stat::(number_of_executed_units|new_units_added)|^Done' "$dir/log" | tr '\n' ' '
	echo
done

if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz: FAILED: ${failed[*]}"
	exit 1
fi
echo "fuzz: every harness ran ${secs}s clean"
