# Blockport build. Plain make; every source file is found by wildcard, so a new module in lib/,
# a new program in fcgi/ or cron/, or a new test file needs no edit here.
#
#   make            release build into build/
#   make test       deps, sanitizer build (ASan+UBSan), unit tests, e2e on lighttpd and Apache
#   make run        deps, build, start the whole stack on 127.0.0.1:8080 (PORT=..., SERVER=apache,
#                   FRESH=1 for a new database and chain, CHAIN_PORT=... for the devchain,
#                   EXTRA_CONFIG=FILE to append FILE to the config it writes: later keys win)
#   make bench      benchmarks (ratios against baselines measured in the same run)
#   make fuzz       libFuzzer harnesses (clang), FUZZ_SECONDS each
#   make valgrind   1,000 requests to each FastCGI program under valgrind: no leak, no error
#   make lint       banned functions and raw sqlite3_/curl_ calls outside lib/

PREFIX  ?= /usr/local
DESTDIR ?=
BUILD   ?= build
SAN     ?=
CC      ?= cc
PORT    ?= 8080
CHAIN_PORT ?=
FRESH   ?=
EXTRA_CONFIG ?=
SERVER  ?= lighttpd
FUZZ_SECONDS ?= 20

WARN    = -Wall -Wextra -Werror -Wshadow -Wpointer-arith -Wstrict-prototypes \
          -Wmissing-prototypes -Wformat=2 -Wno-format-nonliteral -Wvla -Wundef
CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -D_GNU_SOURCE -Ilib -I/usr/include/postgresql $(WARN) -fno-strict-aliasing
ifeq ($(SAN),1)
CFLAGS  += -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
endif
# ThreadSanitizer, a build of its own (make test: build/tsan, the unit tests and the programs).
ifeq ($(TSAN),1)
CFLAGS  += -O1 -fsanitize=thread -fno-omit-frame-pointer
LDFLAGS += -fsanitize=thread
endif
LDLIBS  = -lfcgi -lcjson -lsqlite3 -lpq -lcurl -lssl -lcrypto -linih -lsecp256k1 -lhiredis -lm

LIB_SRC   := $(wildcard lib/*/*.c)
LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/%.o)
FCGI_SRC  := $(wildcard fcgi/*.c)
FCGI_BIN  := $(FCGI_SRC:fcgi/%.c=$(BUILD)/fcgi/%.fcgi)
CRON_SRC  := $(wildcard cron/*.c)
CRON_BIN  := $(CRON_SRC:cron/%.c=$(BUILD)/cron/%)
WS_SRC    := $(wildcard ws/*.c)
WS_BIN    := $(WS_SRC:ws/%.c=$(BUILD)/ws/%)
ADMIN_SRC := $(wildcard admin/*.c)
ADMIN_OBJ := $(ADMIN_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC  := $(wildcard tests/unit/*.c)
UNIT_OBJ  := $(UNIT_SRC:%.c=$(BUILD)/%.o)
SCHEMA    := $(sort $(wildcard schema/*.sql))
TOOLS_SRC := $(wildcard tests/tools/*.c)
TOOLS_BIN := $(TOOLS_SRC:tests/tools/%.c=$(BUILD)/tools/%)
BENCH_SRC := $(wildcard bench/*.c)
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%.fcgi)
HDRS      := $(wildcard lib/*/*.h tests/unit/*.h)

# Object files are never deleted as intermediates: not after a build, not on Ctrl-C.
.SECONDARY:
.PHONY: all deps run cluster test unit e2e bench bench-bin fuzz valgrind lint install clean devchain
all: $(BUILD)/blockport $(FCGI_BIN) $(CRON_BIN) $(WS_BIN) $(BUILD)/unit_tests $(TOOLS_BIN)

$(BUILD)/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

# The migrations are compiled into every program, so a binary always knows the schema it expects.
$(BUILD)/schema_sql.c: $(SCHEMA) scripts/embed-schema.sh
	@mkdir -p $(dir $@)
	sh scripts/embed-schema.sh $(SCHEMA) > $@
$(BUILD)/schema_sql.o: $(BUILD)/schema_sql.c
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/libblockport.a: $(LIB_OBJ) $(BUILD)/schema_sql.o
	rm -f $@; ar rcs $@ $^

$(BUILD)/fcgi/%.fcgi: $(BUILD)/fcgi/%.o $(BUILD)/libblockport.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(BUILD)/cron/%: $(BUILD)/cron/%.o $(BUILD)/libblockport.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
# One process per WebSocket connection: only the shared libraries it calls are loaded (PSS).
$(BUILD)/ws/%: $(BUILD)/ws/%.o $(BUILD)/libblockport.a
	$(CC) $(LDFLAGS) -Wl,--as-needed -o $@ $^ $(LDLIBS)
$(BUILD)/blockport: $(ADMIN_OBJ) $(BUILD)/libblockport.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(BUILD)/unit_tests: $(UNIT_OBJ) $(BUILD)/libblockport.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcunit

# Test tools (tests/tools/*.c): small programs the end-to-end tests drive.
$(BUILD)/tools/%: $(BUILD)/tests/tools/%.o $(BUILD)/libblockport.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Benchmark baselines (bench/*.c): each a standalone program, linked like the others.
bench-bin: $(BENCH_BIN)
$(BUILD)/bench/%.fcgi: bench/%.c $(BUILD)/libblockport.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

deps:
	@sh scripts/deps.sh

devchain: deps
	@cd devchain && npm ci --no-audit --no-fund --loglevel=error

unit: $(BUILD)/unit_tests
	$(BUILD)/unit_tests

# make test: everything under ASan+UBSan; the last line is the summary of all suites.
test: deps
	@bash scripts/test.sh

# State (database, devchain) is kept in run/ across runs; FRESH=1 starts over. The devchain
# listens on PORT + 465 (8545) unless CHAIN_PORT is given.
run: deps
	@echo "building into $(BUILD)/ (make all)"
	@$(MAKE) -s --no-print-directory all
	@bash scripts/stack.sh run --port $(PORT) --server $(SERVER) --build $(abspath $(BUILD)) \
	  $(if $(CHAIN_PORT),--chain-port $(CHAIN_PORT)) $(if $(filter 1 yes true,$(FRESH)),--fresh) \
	  $(if $(EXTRA_CONFIG),--extra-config $(abspath $(EXTRA_CONFIG)))

# Two heads on PostgreSQL and Redis behind HAProxy on PORT (scripts/cluster.sh, docs/scale.md).
cluster: deps
	@echo "building into $(BUILD)/ (make all)"
	@$(MAKE) -s --no-print-directory all
	@bash scripts/cluster.sh run --port $(PORT) --build $(abspath $(BUILD)) \
	  $(if $(EXTRA_CONFIG),--extra-config $(abspath $(EXTRA_CONFIG)))

bench: deps all bench-bin
	@bash bench/run.sh

valgrind:
	@bash scripts/valgrind.sh

fuzz:
	@bash tests/fuzz/run.sh $(FUZZ_SECONDS)

lint:
	@sh scripts/lint.sh

# make install [PREFIX=/usr/local] [DESTDIR=]: the CLI in bin/, the programs in lib/blockport/,
# the web-server configs, the example config and the crontab lines (their paths under PREFIX) in
# share/blockport/. tests/shell/install.sh serves requests from an installed tree.
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/blockport/fcgi \
	  $(DESTDIR)$(PREFIX)/lib/blockport/cron $(DESTDIR)$(PREFIX)/lib/blockport/ws \
	  $(DESTDIR)$(PREFIX)/share/blockport/cron
	install -m 755 $(BUILD)/blockport $(DESTDIR)$(PREFIX)/bin/blockport
	for f in $(FCGI_BIN); do install -m 755 $$f $(DESTDIR)$(PREFIX)/lib/blockport/fcgi/; done
	for f in $(CRON_BIN); do install -m 755 $$f $(DESTDIR)$(PREFIX)/lib/blockport/cron/; done
	for f in $(WS_BIN); do install -m 755 $$f $(DESTDIR)$(PREFIX)/lib/blockport/ws/; done
	cp -r lighttpd apache $(DESTDIR)$(PREFIX)/share/blockport/
	sed -i 's|/usr/local|$(PREFIX)|g' '$(DESTDIR)$(PREFIX)/share/blockport/apache/blockport-fcgi@.service'
	install -m 644 docs/openapi.yaml $(DESTDIR)$(PREFIX)/share/blockport/
	install -m 644 blockport.ini.example $(DESTDIR)$(PREFIX)/share/blockport/
	for f in cron/*.cron; do \
	  sed 's|/usr/local|$(PREFIX)|g' $$f > $(DESTDIR)$(PREFIX)/share/blockport/$$f || exit 1; \
	done

clean:
	rm -rf build
