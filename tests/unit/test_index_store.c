/*
 * lib/index/index_store.c and lib/index/index_reorg.c against a fresh database: a checked batch (built here
 * from JSON as a node would answer it, and checked by bp_index_fetch_check) is stored with its rows
 * and cursor, the store hook sees each block once with its decoded logs, inside the store's
 * transaction (a failing hook takes its own writes and the whole batch back with it), and a
 * rollback tells the hook of each removed block, newest first, and recomputes NFT ownership;
 * the prune step (lib/index/index_prune.c) deletes raw blocks and transactions only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/db.h"
#include "core/hex.h"
#include "index/index_fetch.h"
#include "index/index_logs.h"
#include "index/index_prune.h"
#include "index/index_read.h"
#include "index/index_reorg.h"
#include "index/index_store.h"
#include "unit.h"
#include "unit_db.h"

#define CH	"ethereum.devnet"
#define NFT	"0x5fc8d32690cc91d4c39d9d3abcbd16989f875707"
#define U1	"0x70997970c51812dc3a010c7d01b50e0d17dc79c8"
#define U2	"0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc"
#define T_TRANSFER	"0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
#define T_APPROVAL	"0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925"
#define W_ZERO	"0x0000000000000000000000000000000000000000000000000000000000000000"
#define W_U1	"0x00000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c8"
#define W_U2	"0x0000000000000000000000003c44cdddb6a900fa2b585dd299e03d12fa4293bc"
#define W_7	"0x0000000000000000000000000000000000000000000000000000000000000007"
#define W_8	"0x0000000000000000000000000000000000000000000000000000000000000008"
#define NBLOCKS	4		/* blocks 1 .. 4 */

static struct bp_unit_db u;
#define db	(u.db)

/* What the hook saw. */
struct seen {
	int64_t	blocks[16];
	size_t	nblocks;
	size_t	nevents[16];
	enum bp_index_event_kind kinds[16][4];
	int64_t	rolled[16];
	size_t	nrolled;
	int64_t	fail_at;		/* the block on which the hook fails; -1 never */
	int	cursor_before;		/* the cursor's head when the hook ran, -2 unset */
};

static int
setup(void)
{
	if (bp_unit_db_open(&u, "store") == -1)
		return 1;
	/* A table of the hook's own, as a webhook matcher would have. */
	return bp_db_exec(db, "CREATE TABLE hook_rows (chain TEXT NOT NULL, number INTEGER NOT"
	    " NULL, what TEXT NOT NULL)") == 0 ? 0 : 1;
}

static int
teardown(void)
{
	bp_unit_db_close(&u);
	return 0;
}

/* The hash of block n on fork f: "0x", 60 zeros, f and n as two hex digits each. */
static void
hash_of(int f, int64_t n, char out[BP_BLOCKS_HASH_STR])
{
	snprintf(out, BP_BLOCKS_HASH_STR, "0x%060d%02x%02x", 0, f, (unsigned)n);
}

static int
count(const char *sql)
{
	struct bp_stmt *st = bp_db_stmt(db, sql);
	int n = -1;

	if (st != NULL && bp_stmt_step(st) == BP_DB_ROW)
		n = (int)bp_col_int(st, 0);
	if (st != NULL)
		bp_stmt_reset(st);
	return n;
}

static int
hook_block(void *arg, struct bp_db *hdb, const char *chain, const struct bp_index_store_block *b)
{
	static const char ins[] = "INSERT INTO hook_rows (chain, number, what) VALUES (?, ?, 'block')";
	struct seen *s = arg;
	struct bp_index_head h;
	struct bp_stmt *st;
	size_t i;

	CU_ASSERT_PTR_EQUAL(hdb, db);
	CU_ASSERT_STRING_EQUAL(chain, CH);
	if (s->nblocks < 16) {
		s->blocks[s->nblocks] = b->number;
		s->nevents[s->nblocks] = b->nevents;
		for (i = 0; i < b->nevents && i < 4; i++) {
			s->kinds[s->nblocks][i] = b->events[i].ev.kind;
			CU_ASSERT_EQUAL(b->events[i].pos.block, b->number);
		}
		s->nblocks++;
	}
	/* Inside the transaction: the block's row is there, the cursor not yet moved. */
	CU_ASSERT_EQUAL(bp_index_get_head(hdb, chain, &h) == 1 ? h.head : 0, s->cursor_before);
	if ((st = bp_db_stmt(hdb, ins)) == NULL)
		return -1;
	bp_stmt_text(st, 1, chain);
	bp_stmt_int(st, 2, b->number);
	if (bp_stmt_step(st) != BP_DB_DONE) {
		bp_stmt_reset(st);
		return -1;
	}
	bp_stmt_reset(st);
	return b->number == s->fail_at ? -1 : 0;
}

static int
hook_rollback(void *arg, struct bp_db *hdb, const char *chain, int64_t number, const char *hash)
{
	struct seen *s = arg;
	char want[BP_BLOCKS_HASH_STR];

	CU_ASSERT_PTR_EQUAL(hdb, db);
	CU_ASSERT_STRING_EQUAL(chain, CH);
	hash_of(0, number, want);
	CU_ASSERT_STRING_EQUAL(hash, want);
	if (s->nrolled < 16)
		s->rolled[s->nrolled++] = number;
	return 0;
}

/*
 * The node's answer for blocks 1 .. NBLOCKS of fork 0: block 2 has a transaction, an ERC-721
 * mint of token 7 to U1 and an Approval; block 3 the transfer of token 7 from U1 to U2.
 */
static cJSON *
answer(void)
{
	char text[8192], h[NBLOCKS + 1][BP_BLOCKS_HASH_STR];
	size_t off = 0;
	int64_t n;

	for (n = 0; n <= NBLOCKS; n++)
		hash_of(0, n, h[n]);
	off += (size_t)snprintf(text + off, sizeof(text) - off, "{\"blocks\": [");
	for (n = 1; n <= NBLOCKS; n++)
		off += (size_t)snprintf(text + off, sizeof(text) - off, "%s{\"number\": \"0x%x\","
		    " \"hash\": \"%s\", \"parentHash\": \"%s\", \"timestamp\": \"0x10\","
		    " \"gasUsed\": \"0x0\", \"gasLimit\": \"0x1c9c380\", \"transactions\": [%s]}",
		    n > 1 ? ", " : "", (unsigned)n, h[n], h[n - 1], n != 2 ? "" :
		    "{\"hash\": \"" W_7 "\", \"from\": \"" U1 "\", \"to\": \"" NFT "\","
		    " \"value\": \"0x0\", \"transactionIndex\": \"0x0\", \"nonce\": \"0x1\"}");
	off += (size_t)snprintf(text + off, sizeof(text) - off, "], \"logs\": ["
	    "{\"address\": \"" NFT "\", \"topics\": [\"" T_TRANSFER "\", \"" W_ZERO "\", \"" W_U1
	    "\", \"" W_7 "\"], \"data\": \"0x\", \"blockNumber\": \"0x2\", \"blockHash\": \"%s\","
	    " \"logIndex\": \"0x0\", \"transactionHash\": \"" W_7 "\"},"
	    "{\"address\": \"" NFT "\", \"topics\": [\"" T_APPROVAL "\", \"" W_U1 "\", \"" W_U2
	    "\"], \"data\": \"0x\", \"blockNumber\": \"0x2\", \"blockHash\": \"%s\","
	    " \"logIndex\": \"0x1\", \"transactionHash\": \"" W_7 "\"},"
	    "{\"address\": \"" NFT "\", \"topics\": [\"" T_TRANSFER "\", \"" W_U1 "\", \"" W_U2
	    "\", \"" W_7 "\"], \"data\": \"0x\", \"blockNumber\": \"0x3\", \"blockHash\": \"%s\","
	    " \"logIndex\": \"0x0\", \"transactionHash\": \"" W_8 "\"}]}", h[2], h[2], h[3]);
	CU_ASSERT_FATAL(off < sizeof(text));
	return cJSON_Parse(text);
}

/* Fills b with views into j (answer()), checked against an empty index. */
static void
batch_of(const cJSON *j, struct bp_index_fetch *b, const cJSON **blocks, const cJSON **logs)
{
	const cJSON *e;
	char err[256];
	size_t i = 0;

	memset(b, 0, sizeof(*b));
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "blocks"))
		blocks[i++] = e;
	CU_ASSERT_EQUAL_FATAL(i, NBLOCKS);
	logs[0] = cJSON_GetObjectItemCaseSensitive(j, "logs");
	b->r.from = 1;
	b->r.to = NBLOCKS;
	b->r.n = NBLOCKS;
	b->r.blocks = blocks;
	b->r.logs = logs;
	b->r.nlogs = 1;
	CU_ASSERT_EQUAL_FATAL(bp_index_fetch_check(b, 0, "", err, sizeof(err)), 0);
}

static void
chain_init(struct bp_index_store_chain *c, struct bp_index_store_hook *hook, struct seen *s)
{
	memset(c, 0, sizeof(*c));
	memset(s, 0, sizeof(*s));
	snprintf(c->key, sizeof(c->key), "%s", CH);
	c->start_block = 1;
	hook->block = hook_block;
	hook->rollback = hook_rollback;
	hook->arg = s;
	c->hook = hook;
	s->fail_at = -1;
	s->cursor_before = 0;	/* no cursor yet */
}

static void
test_hook_fails(void)
{
	const cJSON *blocks[NBLOCKS], *logs[1];
	struct bp_index_store_counts n;
	struct bp_index_store_chain c;
	struct bp_index_store_hook hook;
	struct bp_index_fetch b;
	struct seen s;
	cJSON *j = answer();

	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	chain_init(&c, &hook, &s);
	batch_of(j, &b, blocks, logs);
	s.fail_at = 3;
	memset(&n, 0, sizeof(n));
	bp_unit_log_begin();
	CU_ASSERT_EQUAL(bp_index_store_batch(db, &c, &b, 10, &n), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(bp_unit_log_end(), "the store hook failed on block 3"));
	/* The hook ran up to its failure, and its rows went back with the batch. */
	CU_ASSERT_EQUAL(s.nblocks, 3);
	CU_ASSERT_EQUAL(count("SELECT count(*) FROM hook_rows"), 0);
	CU_ASSERT_EQUAL(count("SELECT count(*) FROM index_blocks"), 0);
	CU_ASSERT_EQUAL(count("SELECT count(*) FROM index_transfers"), 0);
	CU_ASSERT_EQUAL(count("SELECT count(*) FROM index_cursors"), 0);
	CU_ASSERT_EQUAL(count("SELECT count(*) FROM index_logs"), 0);
	CU_ASSERT_EQUAL(count("SELECT count(*) FROM index_headers"), 0);
	free(b.hashes);	/* the views are this test's own */
	free(c.data);
	cJSON_Delete(j);
}

/* Appends a stored log's JSON to the buffer arg. */
static int
log_text(const struct bp_index_logs_row *row, void *arg)
{
	return bp_index_logs_json(row, 0, arg);
}

static void
test_hook_blocks(void)
{
	const cJSON *blocks[NBLOCKS], *logs[1];
	struct bp_index_store_counts n;
	struct bp_index_store_chain c;
	struct bp_index_store_hook hook;
	struct bp_index_head h;
	struct bp_index_fetch b;
	struct seen s;
	struct bp_buf out;
	char owner[64], hash[BP_BLOCKS_HASH_STR];
	cJSON *j = answer();

	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	chain_init(&c, &hook, &s);
	batch_of(j, &b, blocks, logs);
	memset(&n, 0, sizeof(n));
	CU_ASSERT_EQUAL_FATAL(bp_index_store_batch(db, &c, &b, 10, &n), 0);
	CU_ASSERT_EQUAL(n.blocks, NBLOCKS);
	CU_ASSERT_EQUAL(n.txs, 1);
	CU_ASSERT_EQUAL(n.logs, 3);
	CU_ASSERT_EQUAL(n.transfers, 2);
	/* Once per block, oldest first, each with its own logs (the Approval too). */
	CU_ASSERT_EQUAL_FATAL(s.nblocks, NBLOCKS);
	CU_ASSERT_EQUAL(s.blocks[0], 1);
	CU_ASSERT_EQUAL(s.blocks[3], 4);
	CU_ASSERT_EQUAL(s.nevents[0], 0);
	CU_ASSERT_EQUAL(s.nevents[1], 2);
	CU_ASSERT_EQUAL(s.kinds[1][0], BP_INDEX_EVENT_ERC721);
	CU_ASSERT_EQUAL(s.kinds[1][1], BP_INDEX_EVENT_OTHER);
	CU_ASSERT_EQUAL(s.nevents[2], 1);
	CU_ASSERT_EQUAL(s.kinds[2][0], BP_INDEX_EVENT_ERC721);
	CU_ASSERT_EQUAL(s.nevents[3], 0);
	CU_ASSERT_EQUAL(count("SELECT count(*) FROM hook_rows"), NBLOCKS);
	CU_ASSERT_EQUAL_FATAL(bp_index_get_head(db, CH, &h), 1);
	CU_ASSERT_EQUAL(h.head, NBLOCKS);
	CU_ASSERT_EQUAL(bp_index_nft_owner(db, CH, NFT, "7", owner, sizeof(owner)), 1);
	CU_ASSERT_STRING_EQUAL(owner, U2);

	/* Every log is kept raw for the WebSocket subscriptions, the Approval too. */
	CU_ASSERT_EQUAL(count("SELECT count(*) FROM index_logs"), 3);
	/* And every block's header (the node's object without its transactions), same hash. */
	CU_ASSERT_EQUAL(count("SELECT count(*) FROM index_headers h JOIN index_blocks b"
	    " ON b.chain = h.chain AND b.number = h.number AND b.hash = h.hash"), NBLOCKS);
	CU_ASSERT_EQUAL(count("SELECT count(*) FROM index_headers WHERE header LIKE '{\"%'"
	    " AND header NOT LIKE '%\"transactions\"%' AND header LIKE '%\"parentHash\":%'"),
	    NBLOCKS);
	hash_of(0, 2, hash);
	bp_buf_init(&out, 4096);
	CU_ASSERT_EQUAL(bp_index_logs_block(db, CH, 2, hash, log_text, &out), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(out.data, "{\"address\":\"" NFT "\",\"topics\":[\""
	    T_APPROVAL "\",\"" W_U1 "\",\"" W_U2 "\"],\"data\":\"0x\",\"blockNumber\":\"0x2\","));
	CU_ASSERT_PTR_NOT_NULL(strstr(out.data, "\"transactionIndex\":null,\"logIndex\":\"0x1\","
	    "\"removed\":false}"));
	CU_ASSERT_EQUAL(bp_index_logs_block(db, CH, 2, W_7, log_text, &out), 0);	/* another hash */
	bp_buf_free(&out);

	/* A reorg back to block 2: the hook hears of 4 and 3, newest first. */
	bp_unit_log_begin();
	CU_ASSERT_EQUAL_FATAL(bp_index_reorg_rollback(db, &c, 2, 10), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(bp_unit_log_end(), "rolled back to block 2"));
	CU_ASSERT_EQUAL_FATAL(s.nrolled, 2);
	CU_ASSERT_EQUAL(s.rolled[0], 4);
	CU_ASSERT_EQUAL(s.rolled[1], 3);
	CU_ASSERT_EQUAL(count("SELECT count(*) FROM index_blocks"), 2);
	CU_ASSERT_EQUAL(count("SELECT count(*) FROM index_transfers"), 1);
	CU_ASSERT_EQUAL(count("SELECT count(*) FROM index_logs"), 2);
	CU_ASSERT_EQUAL(count("SELECT count(*) FROM index_headers"), 2);
	CU_ASSERT_EQUAL(bp_index_nft_owner(db, CH, NFT, "7", owner, sizeof(owner)), 1);
	CU_ASSERT_STRING_EQUAL(owner, U1);
	CU_ASSERT_EQUAL_FATAL(bp_index_get_head(db, CH, &h), 1);
	CU_ASSERT_EQUAL(h.head, 2);
	CU_ASSERT_EQUAL(h.reorgs, 1);

	/* The retention: blocks and their transactions go, transfers and owners stay. */
	CU_ASSERT_EQUAL(bp_index_prune(db, &c, 1, 1 + BP_INDEX_PRUNE_MIN_KEEP), 0);
	CU_ASSERT_EQUAL(count("SELECT count(*) FROM index_blocks"), 1);
	CU_ASSERT_EQUAL(count("SELECT count(*) FROM index_transactions"), 1);
	CU_ASSERT_EQUAL(bp_index_prune(db, &c, 1, 2 + BP_INDEX_PRUNE_MIN_KEEP), 0);
	CU_ASSERT_EQUAL(count("SELECT count(*) FROM index_blocks"), 0);
	CU_ASSERT_EQUAL(count("SELECT count(*) FROM index_transactions"), 0);
	CU_ASSERT_EQUAL(count("SELECT count(*) FROM index_transfers"), 1);
	CU_ASSERT_EQUAL(bp_index_nft_owner(db, CH, NFT, "7", owner, sizeof(owner)), 1);
	free(b.hashes);	/* the views are this test's own */
	free(c.data);
	cJSON_Delete(j);
}

/* A batch whose first block does not link to the stored head is a reorg, not an error. */
static void
test_check_links(void)
{
	const cJSON *blocks[NBLOCKS], *logs[1];
	char err[256], other[BP_BLOCKS_HASH_STR];
	struct bp_index_fetch b;
	cJSON *j = answer();

	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	batch_of(j, &b, blocks, logs);
	hash_of(1, 0, other);
	CU_ASSERT_EQUAL(bp_index_fetch_check(&b, 0, other, err, sizeof(err)), 1);
	/* A log naming a block outside the batch: the chain moved. */
	cJSON_ReplaceItemInObject(cJSON_GetArrayItem(logs[0], 2), "blockNumber",
	    cJSON_CreateString("0x9"));
	CU_ASSERT_EQUAL(bp_index_fetch_check(&b, 0, "", err, sizeof(err)), -1);
	free(b.hashes);	/* the views are this test's own */
	cJSON_Delete(j);
}

/*
 * The ERC-4337 events of every configured EntryPoint are stored with the EntryPoint that
 * emitted them (schema/022), and bp_index_user_op reads the op back; the same event from an
 * address that is no configured EntryPoint is not an op.
 */
static void
test_user_ops(void)
{
	static const char ep06[] = "0x5ff137d4b0fdcd49dca30c7cf57e578a026d2789";
	static const char ep07[] = "0x0000000071727de22e5e9d8baf0edac6f37da032";
	static const char t_op[] =
	    "0x49628fd1471006c1482da88028e9ce4dbb080b815c9b0344d39e5a8e6ec1419f";
	static const char op_hash[] =
	    "0x00000000000000000000000000000000000000000000000000000000000000aa";
	static const char data[] = "0x"
	    "0000000000000000000000000000000000000000000000000000000000000007"
	    "0000000000000000000000000000000000000000000000000000000000000001"
	    "0000000000000000000000000000000000000000000000000000000000000100"
	    "0000000000000000000000000000000000000000000000000000000000000200";
	uint8_t eps[2][20];
	const cJSON *blocks[1], *logs[1];
	struct bp_index_store_counts n;
	struct bp_index_store_chain c;
	struct bp_index_user_op iu;
	struct bp_index_fetch b;
	char text[4096], h0[BP_BLOCKS_HASH_STR], h1[BP_BLOCKS_HASH_STR], err[256];
	size_t len;
	cJSON *j;

	hash_of(9, 0, h0);
	hash_of(9, 1, h1);
	snprintf(text, sizeof(text), "{\"blocks\": [{\"number\": \"0x1\", \"hash\": \"%s\","
	    " \"parentHash\": \"%s\", \"timestamp\": \"0x10\", \"gasUsed\": \"0x0\","
	    " \"gasLimit\": \"0x1c9c380\", \"transactions\": []}], \"logs\": ["
	    "{\"address\": \"%s\", \"topics\": [\"%s\", \"%s\", \"" W_U1 "\", \"" W_ZERO "\"],"
	    " \"data\": \"%s\", \"blockNumber\": \"0x1\", \"blockHash\": \"%s\","
	    " \"logIndex\": \"0x0\", \"transactionHash\": \"" W_8 "\"},"
	    "{\"address\": \"" NFT "\", \"topics\": [\"%s\", \"" W_7 "\", \"" W_U2 "\", \"" W_ZERO "\"],"
	    " \"data\": \"%s\", \"blockNumber\": \"0x1\", \"blockHash\": \"%s\","
	    " \"logIndex\": \"0x1\", \"transactionHash\": \"" W_8 "\"}]}",
	    h1, h0, ep07, t_op, op_hash, data, h1, t_op, data, h1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(j = cJSON_Parse(text));
	memset(&c, 0, sizeof(c));
	snprintf(c.key, sizeof(c.key), "ethereum.aa");
	c.start_block = 1;
	CU_ASSERT_FATAL(bp_hex_decode(ep06, strlen(ep06), eps[0], 20, &len) == 0);
	CU_ASSERT_FATAL(bp_hex_decode(ep07, strlen(ep07), eps[1], 20, &len) == 0);
	c.entry_points = eps;
	c.n_entry_points = 2;
	memset(&b, 0, sizeof(b));
	blocks[0] = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "blocks"), 0);
	logs[0] = cJSON_GetObjectItemCaseSensitive(j, "logs");
	b.r.from = b.r.to = 1;
	b.r.n = 1;
	b.r.blocks = blocks;
	b.r.logs = logs;
	b.r.nlogs = 1;
	CU_ASSERT_EQUAL_FATAL(bp_index_fetch_check(&b, 0, "", err, sizeof(err)), 0);
	memset(&n, 0, sizeof(n));
	CU_ASSERT_EQUAL_FATAL(bp_index_store_batch(db, &c, &b, 10, &n), 0);
	CU_ASSERT_EQUAL(n.userops, 1);

	CU_ASSERT_EQUAL_FATAL(bp_index_user_op(db, "ethereum.aa", op_hash, &iu), 1);
	CU_ASSERT_STRING_EQUAL(iu.entry_point, ep07);
	CU_ASSERT_STRING_EQUAL(iu.sender, U1);
	CU_ASSERT_STRING_EQUAL(iu.nonce, "7");
	CU_ASSERT_STRING_EQUAL(iu.tx_hash, W_8);
	CU_ASSERT_EQUAL(iu.block_number, 1);
	/* The NFT contract's look-alike event is nobody's op. */
	CU_ASSERT_EQUAL(bp_index_user_op(db, "ethereum.aa", W_7, &iu), 0);
	free(b.hashes);
	free(c.data);
	cJSON_Delete(j);
}

BP_UNIT_SUITE(index_store, setup, teardown,
	{ "a failing hook takes the batch back", test_hook_fails },
	{ "hook per block, in the transaction, and on rollback", test_hook_blocks },
	{ "fetch check: reorg and moved chain", test_check_links },
	{ "ERC-4337 events of every EntryPoint, with their EntryPoint", test_user_ops })
