/*
 * libFuzzer harness for the WebSocket logs subscription's filter (lib/ws/ws_logs.c): the params of
 * eth_subscribe ["logs", FILTER] as a client sends them. A filter that is accepted is then run
 * against two stored logs of one block (lib/index/index_logs.c, an in-memory database made once): the
 * matches are emitted and kept, and the block's removal emits exactly as many again, each with
 * "removed":true; a mismatch aborts.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Ilib lib/[a-z]*.c lib/evm/[a-z]*.c \
 *       build/schema_sql.c tests/fuzz/fuzz_ws.c -lcjson -lsqlite3 ... (tests/fuzz/run.sh)
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/db.h"
#include "index/index_logs.h"
#include "ws/ws_logs.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CH	"ethereum.devnet"
#define BLOCK	"0x00000000000000000000000000000000000000000000000000000000000000b1"
#define TX	"0x00000000000000000000000000000000000000000000000000000000000000c1"

static struct bp_db *db;

/* Two logs of block 7: from 0x..aa with topics [0x..01, 0x..02], from 0x..bb with none. */
static int
setup(void)
{
	struct bp_blocks_logpos pos;
	struct bp_blocks_log log;
	uint8_t data[3] = { 1, 2, 3 };

	if ((db = bp_db_open(":memory:", 1)) == NULL)
		return -1;
	memset(&pos, 0, sizeof(pos));
	memset(&log, 0, sizeof(log));
	pos.block = 7;
	strcpy(pos.tx_hash, TX);
	strcpy(pos.contract, "0x00000000000000000000000000000000000000aa");
	log.ntopics = 2;
	log.topics[0][31] = 1;
	log.topics[1][31] = 2;
	log.data = data;
	log.datalen = sizeof(data);
	if (bp_index_logs_put(db, CH, BLOCK, 0, &pos, &log) == -1)
		return -1;
	pos.log_index = 1;
	strcpy(pos.contract, "0x00000000000000000000000000000000000000bb");
	log.ntopics = 0;
	log.datalen = 0;
	return bp_index_logs_put(db, CH, BLOCK, -1, &pos, &log);
}

struct count {
	int	n, removed;
};

static int
emit(const char *log, size_t len, void *arg)
{
	struct count *c = arg;

	if (len < 2 || log[0] != '{' || log[len - 1] != '}')
		abort();
	c->n++;
	if (strstr(log, "\"removed\":true") != NULL)
		c->removed++;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bp_ws_logs *l;
	struct count sent = { 0, 0 }, again = { 0, 0 };
	char err[160];
	int n;

	if (db == NULL && setup() == -1)
		abort();
	if ((l = bp_ws_logs_new((const char *)data, size, err, sizeof(err))) == NULL) {
		if (err[0] == '\0')
			abort();
		return 0;
	}
	n = bp_ws_logs_block(l, db, CH, 7, BLOCK, emit, &sent);
	if (n < 0 || n > 2 || n != sent.n || sent.removed != 0)
		abort();
	if (bp_ws_logs_removed(l, 7, BLOCK, emit, &again) != n || again.removed != n)
		abort();
	bp_ws_logs_free(l);
	return 0;
}
