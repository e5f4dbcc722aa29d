/*
 * Format-B webhooks (lib/webhook/webhook_b.c): types, the filter parser, the envelope and the
 * payload builders; and the queue's format-B schedule, which ends in failed, not paused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/config.h"
#include "core/db.h"
#include "core/hex.h"
#include "index/index_store.h"
#include "unit.h"
#include "unit_db.h"
#include "webhook/webhook.h"
#include "webhook/webhook_b.h"
#include "webhook/webhook_match.h"
#include "webhook/webhook_queue.h"
#include "index/index_event.h"

#define A1	"0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
#define A2	"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"

static struct bp_unit_db u;
static struct bp_config *cfg;

static int
setup(void)
{
	struct bp_network *n;

	if ((cfg = calloc(1, sizeof(*cfg))) == NULL || bp_unit_db_open(&u, "webhook_b") == -1)
		return 1;
	n = &cfg->nets[cfg->nnets++];
	snprintf(n->chain, sizeof(n->chain), "ethereum");
	snprintf(n->network, sizeof(n->network), "devnet");
	n->kind = BP_CHAIN_EVM;
	n->testnet = 1;
	n->rest_default = 1;
	n->chain_id = 31337;
	snprintf(cfg->plans[0].name, sizeof(cfg->plans[0].name), "big");
	cfg->nplans = 1;
	cfg->allow_private_urls = 1;
	cfg->webhooks.nretry = 1;
	cfg->webhooks.retry[0] = 10;
	cfg->webhooks.nretry_b = 2;
	cfg->webhooks.retry_b[0] = 1;
	cfg->webhooks.retry_b[1] = 5;
	return bp_db_exec(u.db, "INSERT INTO accounts (id, email, plan, created_at) VALUES"
	    " (1, 'a@example.com', 'big', 0);"
	    "INSERT INTO index_cursors (chain, head, confirmed) VALUES ('ethereum.devnet', 10, 9)")
	    == 0 ? 0 : 1;
}

static int
teardown(void)
{
	bp_unit_db_close(&u);
	free(cfg);
	return 0;
}

/* Parses json as the filters of mask: 0 with canon, or -1 with why. */
static int
filters_of(uint32_t mask, const char *json, struct bp_buf *canon, char *why, size_t cap)
{
	cJSON *j = json != NULL ? cJSON_Parse(json) : NULL;
	int rc;

	CU_ASSERT_FATAL(json == NULL || j != NULL);
	rc = bp_webhook_filters_parse(mask, j, canon, why, cap);
	cJSON_Delete(j);
	return rc;
}

#define TT	BP_WEBHOOK_B_BIT(BP_WEBHOOK_B_TOKEN_TRANSFER)
#define AA	BP_WEBHOOK_B_BIT(BP_WEBHOOK_B_ADDRESS_ACTIVITY)
#define NB	BP_WEBHOOK_B_BIT(BP_WEBHOOK_B_NEW_BLOCK)
#define MT	BP_WEBHOOK_B_BIT(BP_WEBHOOK_B_MINED_TRANSACTION)

static void
test_types(void)
{
	char s[BP_WEBHOOK_B_TYPES_MAX], why[256];
	uint32_t mask;
	cJSON *j;

	CU_ASSERT_EQUAL(bp_webhook_btypes_format(TT | NB | AA, s, sizeof(s)), 0);
	CU_ASSERT_STRING_EQUAL(s, "ADDRESS_ACTIVITY,TOKEN_TRANSFER,NEW_BLOCK");
	CU_ASSERT_EQUAL(bp_webhook_btypes_parse(s), TT | NB | AA);
	CU_ASSERT_EQUAL(bp_webhook_btypes_format(0x7f, s, sizeof(s)), 0);
	CU_ASSERT_EQUAL(bp_webhook_btypes_parse(s), 0x7f);
	CU_ASSERT_EQUAL(bp_webhook_btypes_parse("NOPE,,NEW_BLOCK"), NB);
	/* Lower case is format A's (0); upper case is B's, right or wrong. */
	j = cJSON_Parse("{\"event_type\":\"token_transfer\"}");
	CU_ASSERT_EQUAL(bp_webhook_btypes_input(j, &mask, why, sizeof(why)), 0);
	cJSON_Delete(j);
	j = cJSON_Parse("{\"event_type\":\"TOKEN_TRANSFER\"}");
	CU_ASSERT_EQUAL(bp_webhook_btypes_input(j, &mask, why, sizeof(why)), 1);
	CU_ASSERT_EQUAL(mask, TT);
	cJSON_Delete(j);
	j = cJSON_Parse("{\"event_type\":\"TOKEN_TRANSFERS\"}");
	CU_ASSERT_EQUAL(bp_webhook_btypes_input(j, &mask, why, sizeof(why)), -1);
	CU_ASSERT_EQUAL(strncmp(why, "event_type ", 11), 0);
	cJSON_Delete(j);
	j = cJSON_Parse("{\"event_types\":[\"NEW_BLOCK\",\"TOKEN_TRANSFER\"]}");
	CU_ASSERT_EQUAL(bp_webhook_btypes_input(j, &mask, why, sizeof(why)), 1);
	CU_ASSERT_EQUAL(mask, TT | NB);
	cJSON_Delete(j);
	j = cJSON_Parse("{\"event_types\":[\"NEW_BLOCK\",\"NEW_BLOCK\"]}");
	CU_ASSERT_EQUAL(bp_webhook_btypes_input(j, &mask, why, sizeof(why)), -1);
	CU_ASSERT_STRING_EQUAL(why, "event_types[1]: NEW_BLOCK is listed twice");
	cJSON_Delete(j);
	j = cJSON_Parse("{\"event_types\":[]}");
	CU_ASSERT_EQUAL(bp_webhook_btypes_input(j, &mask, why, sizeof(why)), -1);
	CU_ASSERT_EQUAL(strncmp(why, "event_types ", 12), 0);
	cJSON_Delete(j);
}

static void
test_filters_good(void)
{
	struct bp_buf c;
	char why[256];

	bp_buf_init(&c, BP_WEBHOOK_CONFIG_MAX);
	/* Canonical: lower case, a fixed order, min_value as a decimal string. */
	CU_ASSERT_EQUAL(filters_of(TT, "{\"min_value\":1000,\"contracts\":[\"" A1 "\"],"
	    "\"topics\":[\"0xDDF252AD1BE2C89B69C2B068FC378DAA952BA7F163C4A11628F55A4DF523B3EF\"],"
	    "\"selectors\":[\"0xA9059CBB\"]}", &c, why, sizeof(why)), 0);
	CU_ASSERT_STRING_EQUAL(c.data, "{\"contracts\":[\"0x70997970c51812dc3a010c7d01b50e0d17dc79c8"
	    "\"],\"min_value\":\"1000\",\"selectors\":[\"0xa9059cbb\"],\"topics\":[\"0xddf252ad1be2c"
	    "89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef\"]}");
	/* NEW_BLOCK needs nothing; no filters at all is {}. */
	CU_ASSERT_EQUAL(filters_of(NB, NULL, &c, why, sizeof(why)), 0);
	CU_ASSERT_STRING_EQUAL(c.data, "{}");
	CU_ASSERT_EQUAL(filters_of(MT, "{\"tx_hashes\":[\"0x" "00000000000000000000000000000000"
	    "00000000000000000000000000000001\"]}", &c, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(filters_of(AA | TT, "{\"addresses\":[\"" A1 "\",\"" A2 "\"],"
	    "\"min_value\":\"115792089237316195423570985008687907853269984665640564039457584007913"
	    "129639935\"}", &c, why, sizeof(why)), 0);
	bp_buf_free(&c);
}

static void
test_filters_bad(void)
{
	static const struct {
		uint32_t	 mask;
		const char	*json, *why;
	} bad[] = {
		{ AA, "{}", "filters.addresses is required for ADDRESS_ACTIVITY" },
		{ TT, "{\"min_value\":\"5\"}",
		    "filters.addresses: give addresses, contracts or both for TOKEN_TRANSFER" },
		{ MT, "{\"selectors\":[\"0x12345678\"]}",
		    "filters.tx_hashes: give tx_hashes or addresses for MINED_TRANSACTION" },
		{ NB, "[]", "filters must be an object" },
		{ NB, "{\"address\":[]}", "filters.address is not a filter" },
		{ TT, "{\"contracts\":[\"0x12\"]}", "filters.contracts[0] must be a 0x address" },
		{ TT, "{\"contracts\":[]}", "filters.contracts must be an array of 1 to 1000" },
		{ TT, "{\"contracts\":[\"" A1 "\"],\"min_value\":\"-1\"}", "filters.min_value must" },
		{ TT, "{\"contracts\":[\"" A1 "\"],\"min_value\":1.5}", "filters.min_value must" },
		{ TT, "{\"contracts\":[\"" A1 "\"],\"min_value\":\"1157920892373161954235709850086879"
		    "07853269984665640564039457584007913129639936\"}", "filters.min_value must" },
		{ TT, "{\"contracts\":[\"" A1 "\"],\"selectors\":[\"0xa9059cbb00\"]}",
		    "filters.selectors[0] must be a 0x selector of 8 hex digits" },
		{ TT, "{\"contracts\":[\"" A1 "\"],\"topics\":[\"0x12\"]}",
		    "filters.topics[0] must be a 0x hash" },
		{ TT, "{\"contracts\":[\"" A1 "\"],\"contracts\":[\"" A1 "\"]}",
		    "filters.contracts is given twice" },
	};
	struct bp_buf c;
	char why[256];
	size_t i;

	bp_buf_init(&c, BP_WEBHOOK_CONFIG_MAX);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		CU_ASSERT_EQUAL(filters_of(bad[i].mask, bad[i].json, &c, why, sizeof(why)), -1);
		if (strncmp(why, bad[i].why, strlen(bad[i].why)) != 0)
			fprintf(stderr, "\n  case %zu: %s\n", i, why);
		CU_ASSERT_EQUAL(strncmp(why, bad[i].why, strlen(bad[i].why)), 0);
	}
	bp_buf_free(&c);
}

static void
test_payloads(void)
{
	struct bp_webhook_b_move mv;
	struct bp_buf b, env;
	uint8_t from[20], to[20], contract[20];
	cJSON *blk, *parsed;

	bp_buf_init(&b, 4096);
	bp_buf_init(&env, 8192);
	bp_hex_decode_fixed(A1, 42, from, 20);
	bp_hex_decode_fixed(A2, 42, to, 20);
	bp_hex_decode_fixed("0x5fbdb2315678afecb367f032d93f642f64180aa3", 42, contract, 20);
	memset(&mv, 0, sizeof(mv));
	mv.block = 7;
	mv.tx_hash = "0xab";
	mv.log_index = 2;
	mv.from = from;
	mv.to = to;
	mv.contract = contract;
	bp_u256_from_u64(&mv.value, 1500000);
	/* TOKEN_TRANSFER as SPEC.md lists it; symbol, decimals and valueFormatted filled later. */
	CU_ASSERT_EQUAL(bp_webhook_b_data_move(&b, BP_WEBHOOK_B_TOKEN_TRANSFER, &mv), 0);
	CU_ASSERT_STRING_EQUAL(b.data, "{\"blockNumber\":7,\"transactionHash\":\"0xab\","
	    "\"logIndex\":2,\"from\":\"" A1 "\",\"to\":\"" A2 "\",\"token\":{\"address\":"
	    "\"0x5FbDB2315678afecb367f032d93F642f64180aa3\",\"symbol\":null,\"decimals\":null},"
	    "\"value\":\"1500000\",\"valueFormatted\":null}");
	CU_ASSERT_EQUAL(bp_webhook_b_envelope(&env, "evt_1", BP_WEBHOOK_B_TOKEN_TRANSFER,
	    1700000000123LL, "ethereum", 31337, b.data, b.len), 0);
	CU_ASSERT_EQUAL(strncmp(env.data, "{\"id\":\"evt_1\",\"type\":\"TOKEN_TRANSFER\","
	    "\"createdAt\":\"2023-11-14T22:13:20.123Z\",\"chain\":\"ethereum\",\"chainId\":31337,"
	    "\"data\":{\"blockNumber\":7,", 110), 0);
	parsed = cJSON_Parse(env.data);
	CU_ASSERT_PTR_NOT_NULL(parsed);
	cJSON_Delete(parsed);
	/* An NFT mint: the zero address sends; metadata null. */
	memset(from, 0, sizeof(from));
	mv.standard = "ERC721";
	bp_u256_from_u64(&mv.token_id, 42);
	bp_u256_from_u64(&mv.value, 1);
	CU_ASSERT_EQUAL(bp_webhook_b_data_move(&b, BP_WEBHOOK_B_NFT_ACTIVITY, &mv), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "\"contract\":\"0x5FbDB2315678afecb367f032d93F642f64180aa3\","
	    "\"tokenId\":\"42\",\"standard\":\"ERC721\",\"quantity\":1,\"activity\":\"mint\","
	    "\"metadata\":null}"));
	memcpy(from, to, 20);
	memset(to, 0, sizeof(to));
	CU_ASSERT_EQUAL(bp_webhook_b_data_move(&b, BP_WEBHOOK_B_NFT_ACTIVITY, &mv), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "\"activity\":\"burn\""));
	/* ADDRESS_ACTIVITY of native value: asset ETH, contract and logIndex null. */
	mv.contract = NULL;
	mv.standard = NULL;
	mv.log_index = -1;
	mv.direction = "incoming";
	bp_u256_from_u64(&mv.value, 5);
	CU_ASSERT_EQUAL(bp_webhook_b_data_move(&b, BP_WEBHOOK_B_ADDRESS_ACTIVITY, &mv), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "\"logIndex\":null,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "\"value\":\"5\",\"asset\":\"ETH\",\"contract\":null,"
	    "\"direction\":\"incoming\"}"));
	/* NEW_BLOCK from the node's block object. */
	blk = cJSON_Parse("{\"number\":\"0x10\",\"hash\":\"0x" "11111111111111111111111111111111"
	    "11111111111111111111111111111111\",\"parentHash\":\"0x" "2222222222222222222222222222"
	    "222222222222222222222222222222222222\",\"timestamp\":\"0x6553f100\",\"gasUsed\":"
	    "\"0x5208\",\"transactions\":[{},{}]}");
	CU_ASSERT_EQUAL(bp_webhook_b_data_block(&b, blk), 0);
	CU_ASSERT_STRING_EQUAL(b.data, "{\"blockNumber\":16,\"hash\":\"0x1111111111111111111111111"
	    "111111111111111111111111111111111111111\",\"parentHash\":\"0x222222222222222222222222"
	    "2222222222222222222222222222222222222222\",\"timestamp\":1700000000,\"gasUsed\":21000,"
	    "\"transactionCount\":2}");
	cJSON_DeleteItemFromObject(blk, "gasUsed");
	CU_ASSERT_EQUAL(bp_webhook_b_data_block(&b, blk), -1);
	cJSON_Delete(blk);
	/* MINED_TRANSACTION's tail. */
	bp_buf_reset(&b);
	CU_ASSERT_EQUAL(bp_webhook_b_data_tx(&b, from, NULL, "9", 1, 21000, ""), 0);
	CU_ASSERT_STRING_EQUAL(b.data, ",\"from\":\"" A2 "\",\"to\":null,\"value\":\"9\","
	    "\"status\":\"success\",\"gasUsed\":21000,\"effectiveGasPrice\":null}");
	bp_buf_free(&b);
	bp_buf_free(&env);
}

/* A format-B webhook of account 1, through the module's input and create. */
static void
make_b(struct bp_webhook *w)
{
	struct bp_webhook_input in;
	struct bp_buf b;
	char why[256];
	cJSON *j = cJSON_Parse("{\"url\":\"https://127.0.0.1/h\",\"chain\":\"ethereum\","
	    "\"event_types\":[\"TOKEN_TRANSFER\",\"NEW_BLOCK\"],\"filters\":{\"contracts\":"
	    "[\"" A1 "\"]}}");

	CU_ASSERT_FATAL(bp_webhook_input(cfg, j, 1, 1, BP_WEBHOOK_LOG, &in, why, sizeof(why)) == 0);
	CU_ASSERT_EQUAL(in.types, TT | NB);
	CU_ASSERT_FATAL(bp_webhook_create(u.db, 1, 0, &in, w) == 1);
	CU_ASSERT_EQUAL(w->types, TT | NB);
	bp_buf_init(&b, 4096);
	CU_ASSERT_EQUAL(bp_webhook_json(w, 0, &b), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "\"event_type\":\"TOKEN_TRANSFER\",\"status\":\"active\","
	    "\"event_types\":[\"TOKEN_TRANSFER\",\"NEW_BLOCK\"],\"filters\":{\"contracts\":["
	    "\"0x70997970c51812dc3a010c7d01b50e0d17dc79c8\"]}"));
	bp_buf_free(&b);
	bp_buf_free(&in.canon);
	cJSON_Delete(j);
}

/* Format B's schedule: retried at its own gaps, then failed; the webhook stays active. */
static void
test_queue_b(void)
{
	struct bp_webhook w, got;
	struct bp_webhook_event ev;
	struct bp_webhook_job *jobs;
	struct bp_webhook_outcome out[1];
	char paused[1][BP_WEBHOOK_ID_MAX];
	size_t np;
	int64_t now = ((int64_t)time(NULL) / 86400 + 1) * 86400 + 43200;
	int n, k;

	make_b(&w);
	memset(&ev, 0, sizeof(ev));
	ev.id = "evt_b1";
	ev.webhook_id = w.id;
	ev.network = "ethereum.devnet";
	ev.block_number = 8;
	ev.block_hash = "0x";
	ev.source = "NEW_BLOCK:block:0x";
	ev.body = "{}";
	ev.event_type = "NEW_BLOCK";
	CU_ASSERT_FATAL(bp_webhook_queue_add(u.db, &ev) == 1);
	CU_ASSERT_FATAL(bp_webhook_queue_counted(u.db, w.id, 1, now / 86400, 1, 0, 0) == 0);
	CU_ASSERT_EQUAL(bp_webhook_queue_backlog(u.db, w.id), 1);
	memset(out, 0, sizeof(out));
	out[0].http_status = 500;
	for (k = 0; k < 3; k++) {
		n = bp_webhook_queue_claim(u.db, cfg, now, 60, 10, &jobs);
		CU_ASSERT_EQUAL_FATAL(n, 1);
		CU_ASSERT_EQUAL(jobs[0].format_b, 1);
		CU_ASSERT_STRING_EQUAL(jobs[0].event_type, "NEW_BLOCK");
		CU_ASSERT_EQUAL(jobs[0].attempts, k);
		CU_ASSERT_EQUAL(bp_webhook_queue_settle(u.db, cfg, now * 1000, jobs, out, 1,
		    paused, &np), 0);
		CU_ASSERT_EQUAL(np, 0);		/* never paused */
		bp_webhook_jobs_free(jobs, 1);
		/* The next try is due after format B's gap (1 s, then 5 s), not format A's 10 s. */
		if (k < 2) {
			CU_ASSERT_EQUAL(bp_webhook_queue_claim(u.db, cfg, now + cfg->webhooks.retry_b[k] - 1,
			    60, 10, &jobs), 0);
			bp_webhook_jobs_free(jobs, 0);
			now += cfg->webhooks.retry_b[k];
		}
	}
	/* After the last retry: failed, out of the backlog, never claimed again; still active. */
	CU_ASSERT_EQUAL(bp_webhook_queue_claim(u.db, cfg, now + 100000, 60, 10, &jobs), 0);
	bp_webhook_jobs_free(jobs, 0);
	CU_ASSERT_EQUAL(bp_webhook_queue_backlog(u.db, w.id), 0);
	CU_ASSERT_EQUAL(bp_webhook_get(u.db, 1, w.id, &got), 1);
	CU_ASSERT_EQUAL(got.status, BP_WEBHOOK_ACTIVE);
	bp_webhook_clear(&got);
	bp_webhook_clear(&w);
}

/* A format-B webhook of account 1 of types (event_types JSON) and filters (JSON). */
static void
make_hook(const char *types, const char *filters, struct bp_webhook *w)
{
	struct bp_webhook_input in;
	char body[1024], why[256];
	cJSON *j;

	snprintf(body, sizeof(body), "{\"url\":\"https://127.0.0.1/m\",\"chain\":\"ethereum\","
	    "\"event_types\":%s,\"filters\":%s}", types, filters);
	CU_ASSERT_FATAL((j = cJSON_Parse(body)) != NULL);
	if (bp_webhook_input(cfg, j, 1, 1, BP_WEBHOOK_LOG, &in, why, sizeof(why)) == -1)
		fprintf(stderr, "\n  %s: %s\n", body, why);
	CU_ASSERT_FATAL(bp_webhook_create(u.db, 1, 0, &in, w) == 1);
	bp_buf_free(&in.canon);
	cJSON_Delete(j);
}

/* The events of webhook wh, and the body of the first of them into first (NULL: not asked). */
static int64_t
events(const char *wh, char *first, size_t cap)
{
	static const char sql[] = "SELECT body FROM webhook_events WHERE webhook_id = ? ORDER BY id";
	struct bp_stmt *st = bp_db_stmt(u.db, sql);
	int64_t n = 0;

	CU_ASSERT_FATAL(st != NULL);
	bp_stmt_text(st, 1, wh);
	while (bp_stmt_step(st) == BP_DB_ROW)
		if (n++ == 0 && first != NULL)
			snprintf(first, cap, "%s", bp_col_text(st, 0));
	bp_stmt_reset(st);
	return n;
}

#define TOKEN	"0x5fbdb2315678afecb367f032d93f642f64180aa3"
#define TX	"0xcccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
#define BH	"0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define XFER	"0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"

/* The store hook over one block: each filter narrows as documented; NEW_BLOCK from the block. */
static void
test_match_b(void)
{
	static const struct {
		const char	*types, *filters;
		int64_t		 want;
	} hooks[] = {
		{ "[\"TOKEN_TRANSFER\"]", "{\"contracts\":[\"" TOKEN "\"],\"topics\":[\"" XFER "\"]}", 1 },
		{ "[\"TOKEN_TRANSFER\"]", "{\"contracts\":[\"" TOKEN "\"],\"topics\":[\"" BH "\"]}", 0 },
		{ "[\"TOKEN_TRANSFER\"]", "{\"addresses\":[\"" A2 "\"],\"min_value\":\"8\"}", 0 },
		{ "[\"TOKEN_TRANSFER\"]", "{\"addresses\":[\"" A2 "\"],\"min_value\":\"7\"}", 1 },
		{ "[\"MINED_TRANSACTION\"]", "{\"tx_hashes\":[\"" TX "\"],\"selectors\":[\"0xa9059cbb\"]}", 1 },
		{ "[\"MINED_TRANSACTION\"]", "{\"tx_hashes\":[\"" TX "\"],\"selectors\":[\"0xdeadbeef\"]}", 0 },
		{ "[\"MINED_TRANSACTION\"]", "{\"addresses\":[\"" A1 "\"],\"topics\":[\"" XFER "\"]}", 1 },
		/* The transaction's own value (0) and its token movement, the sender's side of both. */
		{ "[\"ADDRESS_ACTIVITY\"]", "{\"addresses\":[\"" A1 "\"]}", 2 },
		{ "[\"NEW_BLOCK\",\"NFT_ACTIVITY\"]", "{\"contracts\":[\"" TOKEN "\"]}", 1 },
	};
	struct bp_webhook w[sizeof(hooks) / sizeof(hooks[0])];
	struct bp_index_store_event e;
	struct bp_index_store_block blk;
	char body[4096];
	uint8_t data[32];
	cJSON *block;
	size_t i;

	CU_ASSERT_FATAL(bp_db_exec(u.db, "INSERT INTO index_transactions (chain, hash,"
	    " block_number, tx_index, from_addr, to_addr, value, nonce, status, gas_used) VALUES"
	    " ('ethereum.devnet', '" TX "', 20, 0, '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',"
	    " '" TOKEN "', '0', 0, 1, 50000)") == 0);
	for (i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++)
		make_hook(hooks[i].types, hooks[i].filters, &w[i]);
	memset(&e, 0, sizeof(e));
	e.pos.block = 20;
	e.pos.log_index = 3;
	snprintf(e.pos.tx_hash, sizeof(e.pos.tx_hash), "%s", TX);
	snprintf(e.pos.contract, sizeof(e.pos.contract), "%s", TOKEN);
	bp_hex_decode_fixed(TOKEN, 42, e.log.address, 20);
	bp_hex_decode_fixed(XFER, 66, e.log.topics[0], 32);
	bp_hex_decode_fixed(A1, 42, e.log.topics[1] + 12, 20);
	bp_hex_decode_fixed(A2, 42, e.log.topics[2] + 12, 20);
	e.log.ntopics = 3;
	memset(data, 0, sizeof(data));
	data[31] = 7;
	e.log.data = data;
	e.log.datalen = sizeof(data);
	CU_ASSERT_EQUAL_FATAL(bp_index_event_decode(&e.log, NULL, 0, &e.ev), BP_INDEX_EVENT_ERC20);
	block = cJSON_Parse("{\"number\":\"0x14\",\"hash\":\"" BH "\",\"parentHash\":\"" BH "\","
	    "\"timestamp\":\"0x10\",\"gasUsed\":\"0xc350\",\"transactions\":[{\"hash\":\"" TX "\","
	    "\"input\":\"0xa9059cbb0000\"}]}");
	CU_ASSERT_FATAL(block != NULL);
	memset(&blk, 0, sizeof(blk));
	blk.number = 20;
	blk.hash = BH;
	blk.parent_hash = BH;
	blk.events = &e;
	blk.nevents = 1;
	blk.block = block;
	CU_ASSERT_FATAL(bp_db_begin(u.db) == 0);
	CU_ASSERT_EQUAL(bp_webhook_match_block(cfg, u.db, "ethereum.devnet", &blk), 0);
	CU_ASSERT_FATAL(bp_db_commit(u.db) == 0);
	for (i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++) {
		if (events(w[i].id, NULL, 0) != hooks[i].want)
			fprintf(stderr, "\n  hook %zu: %lld events\n", i, (long long)events(w[i].id,
			    NULL, 0));
		CU_ASSERT_EQUAL(events(w[i].id, body, sizeof(body)), hooks[i].want);
	}
	/* The envelope and NEW_BLOCK's data, from the node's block object. */
	CU_ASSERT_EQUAL(events(w[8].id, body, sizeof(body)), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(body, "\"type\":\"NEW_BLOCK\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(body, "\"chainId\":31337,\"data\":{\"blockNumber\":20,"
	    "\"hash\":\"" BH "\",\"parentHash\":\"" BH "\",\"timestamp\":16,\"gasUsed\":50000,"
	    "\"transactionCount\":1}}"));
	for (i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++)
		bp_webhook_clear(&w[i]);
	cJSON_Delete(block);
}

/* PENDING_TRANSACTION over the node's transaction objects: addresses and selectors narrow. */
static void
test_match_pending(void)
{
	struct bp_webhook w, sel;
	char body[4096];
	cJSON *txs = cJSON_Parse("[{\"hash\":\"" TX "\",\"from\":\"" A1 "\",\"to\":\"" A2 "\","
	    "\"value\":\"0x10\",\"nonce\":\"0x2\",\"input\":\"0xa9059cbb00\"},{\"hash\":\"0x01\"},"
	    "{\"hash\":\"" BH "\",\"from\":\"" A2 "\",\"to\":null,\"value\":\"0x0\","
	    "\"nonce\":\"0x0\",\"input\":\"0x\"}]");

	CU_ASSERT_FATAL(txs != NULL);
	make_hook("[\"PENDING_TRANSACTION\"]", "{\"addresses\":[\"" A2 "\"]}", &w);
	make_hook("[\"PENDING_TRANSACTION\"]", "{\"addresses\":[\"" A2 "\"],\"selectors\":"
	    "[\"0xa9059cbb\"]}", &sel);
	CU_ASSERT_EQUAL(bp_webhook_match_pending_wanted(u.db, "ethereum.devnet"), 1);
	CU_ASSERT_EQUAL(bp_webhook_match_pending_wanted(u.db, "ethereum.other"), 0);
	CU_ASSERT_FATAL(bp_db_begin(u.db) == 0);
	CU_ASSERT_EQUAL(bp_webhook_match_pending(cfg, u.db, "ethereum.devnet", txs), 0);
	CU_ASSERT_EQUAL(bp_webhook_match_pending(cfg, u.db, "ethereum.devnet", txs), 0);
	CU_ASSERT_FATAL(bp_db_commit(u.db) == 0);
	CU_ASSERT_EQUAL(events(w.id, NULL, 0), 2);	/* once each, the malformed one skipped */
	CU_ASSERT_EQUAL(events(sel.id, body, sizeof(body)), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(body, "\"type\":\"PENDING_TRANSACTION\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(body, "\"data\":{\"transactionHash\":\"" TX "\",\"from\":\""
	    A1 "\",\"to\":\"" A2 "\",\"value\":\"16\",\"nonce\":2,\"selector\":\"0xa9059cbb\"}}"));
	bp_webhook_clear(&w);
	bp_webhook_clear(&sel);
	cJSON_Delete(txs);
}

/* A webhook of types (not asked at create: the unit has no node to probe for traces). */
static void
make_hook_as(const char *types, const char *filters, struct bp_webhook *w)
{
	char sql[256];

	make_hook("[\"ADDRESS_ACTIVITY\"]", filters, w);
	snprintf(sql, sizeof(sql), "UPDATE webhooks SET event_types = '%s' WHERE id = '%s'",
	    types, w->id);
	CU_ASSERT_FATAL(bp_db_exec(u.db, sql) == 0);
}

#define A3	"0x90F79bf6EB2c4f870365E785982E1f101E93b906"
#define BH2	"0xabababababababababababababababababababababababababababababababab"

static const char frames[] = "[{\"txHash\":\"" TX "\",\"result\":{\"type\":\"CALL\","
	    "\"from\":\"" A1 "\",\"to\":\"" TOKEN "\",\"value\":\"0x10\",\"calls\":["
	    "{\"type\":\"CALL\",\"from\":\"" TOKEN "\",\"to\":\"" A2 "\",\"value\":\"0x5\"},"
	    "{\"type\":\"DELEGATECALL\",\"from\":\"" TOKEN "\",\"to\":\"" A2 "\",\"value\":\"0x5\"},"
	    "{\"type\":\"CALL\",\"from\":\"" TOKEN "\",\"to\":\"" A3 "\",\"value\":\"0x0\","
	    "\"error\":\"execution reverted\",\"calls\":[{\"type\":\"CALL\",\"from\":\"" A3 "\","
	    "\"to\":\"" A2 "\",\"value\":\"0x8\"}]},"
	    "{\"type\":\"CALL\",\"from\":\"" TOKEN "\",\"to\":\"" A3 "\",\"value\":\"0x0\","
	    "\"calls\":[{\"type\":\"CALL\",\"from\":\"" A3 "\",\"to\":\"" A2 "\","
	    "\"value\":\"0x9\"}]}]}}]";

/*
 * INTERNAL_TRANSFER from the block's call frames: inner frames that moved value (not the
 * transaction's own call, not a DELEGATECALL, not a failed frame or one under it), once each,
 * addresses and min_value narrowing; nothing without traces.
 */
static void
match_internal(const char *json, int flat)
{
	struct bp_webhook w, min, top, tok;
	struct bp_index_store_block blk;
	char body[4096];
	cJSON *block = cJSON_Parse("{\"transactions\":[{\"hash\":\"" TX "\",\"input\":\"0x\"}]}");
	cJSON *traces = cJSON_Parse(json);

	CU_ASSERT_FATAL(block != NULL && traces != NULL);
	make_hook_as("INTERNAL_TRANSFER", "{\"addresses\":[\"" A2 "\"]}", &w);
	make_hook_as("INTERNAL_TRANSFER", "{\"addresses\":[\"" A2 "\"],\"min_value\":\"6\"}",
	    &min);
	make_hook_as("INTERNAL_TRANSFER", "{\"addresses\":[\"" A1 "\"]}", &top);
	make_hook_as("INTERNAL_TRANSFER", "{\"addresses\":[\"" TOKEN "\"]}", &tok);
	CU_ASSERT_EQUAL(bp_webhook_match_traces_wanted(u.db, "ethereum.devnet"), 1);
	CU_ASSERT_EQUAL(bp_webhook_match_traces_wanted(u.db, "ethereum.other"), 0);
	memset(&blk, 0, sizeof(blk));
	blk.number = 21;
	blk.hash = BH2;
	blk.parent_hash = BH;
	blk.block = block;
	CU_ASSERT_FATAL(bp_db_begin(u.db) == 0);
	CU_ASSERT_EQUAL(bp_webhook_match_block(cfg, u.db, "ethereum.devnet", &blk), 0);
	CU_ASSERT_EQUAL(events(w.id, NULL, 0), 0);	/* no traces fetched: none */
	blk.traces = traces;
	blk.traces_flat = flat;
	CU_ASSERT_EQUAL(bp_webhook_match_block(cfg, u.db, "ethereum.devnet", &blk), 0);
	CU_ASSERT_EQUAL(bp_webhook_match_block(cfg, u.db, "ethereum.devnet", &blk), 0);
	CU_ASSERT_FATAL(bp_db_commit(u.db) == 0);
	CU_ASSERT_EQUAL(events(w.id, NULL, 0), 2);
	CU_ASSERT_EQUAL(events(tok.id, body, sizeof(body)), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(body, "\"type\":\"INTERNAL_TRANSFER\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(body, "\"data\":{\"blockNumber\":21,\"transactionHash\":\""
	    TX "\",\"logIndex\":null,\"from\":\"0x5FbDB2315678afecb367f032d93F642f64180aa3\","
	    "\"to\":\"" A2 "\",\"value\":\"5\",\"asset\":\"ETH\",\"contract\":null,"
	    "\"traceAddress\":[0],\"callType\":\"CALL\"}}"));
	CU_ASSERT_EQUAL(events(min.id, body, sizeof(body)), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(body, "\"value\":\"9\",\"asset\":\"ETH\",\"contract\":null,"
	    "\"traceAddress\":[3,0]"));
	CU_ASSERT_EQUAL(events(top.id, NULL, 0), 0);
	bp_webhook_clear(&w);
	bp_webhook_clear(&min);
	bp_webhook_clear(&top);
	bp_webhook_clear(&tok);
	cJSON_Delete(block);
	cJSON_Delete(traces);
}

/* The same transaction as trace_block (parity's flat entries, depth first) answers it. */
#define FLAT(ta, ty, ct, fr, to, v, more) "{\"action\":{\"callType\":\"" ct "\",\"from\":\"" fr \
    "\",\"to\":\"" to "\",\"value\":\"" v "\"},\"blockHash\":\"" BH2 "\",\"traceAddress\":" ta \
    ",\"transactionHash\":\"" TX "\",\"type\":\"" ty "\"" more "}"
static const char flat[] = "[" FLAT("[]", "call", "call", A1, TOKEN, "0x10", "") ","
    FLAT("[0]", "call", "call", TOKEN, A2, "0x5", "") ","
    FLAT("[1]", "call", "delegatecall", TOKEN, A2, "0x5", "") ","
    FLAT("[2]", "call", "call", TOKEN, A3, "0x0", ",\"error\":\"Reverted\"") ","
    FLAT("[2,0]", "call", "call", A3, A2, "0x8", "") ","
    FLAT("[3]", "call", "call", TOKEN, A3, "0x0", "") ","
    FLAT("[3,0]", "call", "call", A3, A2, "0x9", "") "]";

static void
test_match_internal(void)
{
	match_internal(frames, 0);
}

static void
test_match_internal_flat(void)
{
	match_internal(flat, 1);
}

BP_UNIT_SUITE(webhook_b,  setup, teardown,
	{ "format B: types, event_type or event_types", test_types },
	{ "format B: filters, canonical", test_filters_good },
	{ "format B: bad filters name their field", test_filters_bad },
	{ "format B: envelope and payloads", test_payloads },
	{ "format B: its retry schedule ends in failed, the webhook active", test_queue_b },
	{ "format B: matching, each filter narrowing; NEW_BLOCK", test_match_b },
	{ "format B: PENDING_TRANSACTION from the node's transactions", test_match_pending },
	{ "format B: INTERNAL_TRANSFER from the block's call traces", test_match_internal },
	{ "format B: INTERNAL_TRANSFER from trace_block's entries", test_match_internal_flat },
);
