/*
 * lib/wallet/wallets.c, the rules of the wallet resource, against a fresh database and a network whose
 * node refuses connections (a closed loopback port): validation and network resolution with the
 * status each refusal gets, idempotent creation whatever the salt's spelling, creation while
 * the node is down, ownership (another account's wallet is 404), the indexer's AccountDeployed
 * record seen by list and get without a chain read, and 500 when a read get needs fails.
 * Against a real node, tests/e2e/wallets.test.mjs.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/config.h"
#include "core/db.h"
#include "core/log.h"
#include "core/util.h"
#include "index/index_read.h"
#include "unit.h"
#include "unit_db.h"
#include "wallet/wallets.h"

#define OWNER	"0x70997970C51812dc3A010C7d01b50e0d17dc79C8"	/* EIP-55 */
#define FACTORY	"0x9406cc6185a346906296840746125a0e44976454"
#define IMPL	"0x8abb13360b87be5eeb1b98647a016add927a136c"
#define EP	"0x5ff137d4b0fdcd49dca30c7cf57e578a026d2789"
#define TXH	"0x0167d5afc355aec105e456c95d451883937736ee9f2590b8805cc5b458f0aa01"

static struct bp_unit_db u;
static struct bp_db *db;
static struct bp_config *cfg;
static struct bp_wallets *ws;
static const struct bp_key key1 = { .id = 1, .account_id = 1, .test = 1 };	/* a test key of account 1 */
static const struct bp_key key2 = { .id = 2, .account_id = 2, .test = 1 };	/* a test key of account 2 */
static const struct bp_key live1 = { .id = 3, .account_id = 1, .test = 0 };	/* a live key of account 1 */

/* A loopback port nothing listens on: bound, then closed. */
static int
closed_port(void)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = 0;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static void
net_add(const char *chain, const char *network, int testnet, int aa)
{
	struct bp_network *n = &cfg->nets[cfg->nnets++];

	bp_strlcpy(n->chain, chain, sizeof(n->chain));
	bp_strlcpy(n->network, network, sizeof(n->network));
	n->kind = BP_CHAIN_EVM;
	n->testnet = testnet;
	n->rest_default = 1;
	snprintf(n->upstream[0], BP_URL_MAX, "http://127.0.0.1:%d/", closed_port());
	n->nupstream = 1;
	if (aa) {
		bp_strlcpy(n->entry_point, EP, sizeof(n->entry_point));
		bp_strlcpy(n->account_factory, FACTORY, sizeof(n->account_factory));
		bp_strlcpy(n->account_implementation, IMPL, sizeof(n->account_implementation));
	}
}

static int
setup(void)
{
	static const char key[] = "INSERT INTO api_keys (id, account_id, key_hash, prefix, kind,"
	    " created_at) VALUES (?, ?, ?, 'p', ?, 0)";
	static const struct { int id, account; const char *kind; } keys[] = {
		{ 1, 1, "test" }, { 2, 2, "test" }, { 3, 1, "live" } };
	struct bp_stmt *st;
	uint8_t hash;
	size_t i;

	bp_log_set_level(BP_LOG_ERR);	/* migrations, and the refused reads as warnings */
	if (bp_unit_db_open(&u, "wallets") == -1 || (cfg = calloc(1, sizeof(*cfg))) == NULL)
		return 1;
	db = u.db;
	cfg->max_response = 1024 * 1024;
	cfg->max_batch = 100;
	cfg->upstream_timeout_ms = 500;
	cfg->upstream_down_seconds = 0;
	net_add("ethereum", "devnet", 1, 1);
	net_add("ethereum", "mainnet", 0, 1);
	net_add("testonly", "devnet", 1, 1);
	net_add("plain", "devnet", 1, 0);
	if ((ws = bp_wallets_new(cfg)) == NULL)
		return 1;
	if (bp_db_exec(db, "INSERT INTO accounts VALUES (1, 'a@x', 'free', 0),"
	    " (2, 'b@x', 'free', 0)") == -1)
		return 1;
	/* Bound, not x'01': a blob literal is SQLite's own. */
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		hash = (uint8_t)keys[i].id;
		if ((st = bp_db_stmt(db, key)) == NULL)
			return 1;
		bp_stmt_int(st, 1, keys[i].id);
		bp_stmt_int(st, 2, keys[i].account);
		bp_stmt_blob(st, 3, &hash, 1);
		bp_stmt_text(st, 4, keys[i].kind);
		if (bp_stmt_run(st) == -1)
			return 1;
	}
	return 0;
}

static int
teardown(void)
{
	bp_wallets_free(ws);
	free(cfg);
	bp_unit_db_close(&u);
	bp_log_set_level(BP_LOG_INFO);
	return 0;
}

static int
create(const struct bp_key *k, const char *owner, const char *chain, const char *network,
    const char *salt, struct bp_wallet *w, int *created, struct bp_error *err)
{
	struct bp_wallets_create_req req = { owner, chain, network, salt, NULL };

	memset(err, 0, sizeof(*err));
	return bp_wallets_create(ws, db, k, &req, w, created, err);
}

/* Each refusal of a create, with its status and the member its message names. */
static void
test_create_refusals(void)
{
	static const struct {
		const struct bp_key	*key;
		const char		*owner, *chain, *network, *salt;
		int			 status;
		const char		*says;
	} rows[] = {
		{ &key1, "0x70997970c51812dc3A010C7d01b50e0d17dc79C8", "ethereum", NULL, NULL, 400,
		  "owner" },					/* bad checksum */
		{ &key1, "0x70997970c51812dc3a010c7d01b50e0d17dc79c", "ethereum", NULL, NULL, 400,
		  "owner" },					/* 39 digits */
		{ &key1, OWNER, "ethereum", NULL, "0x", 400, "salt" },
		{ &key1, OWNER, "ethereum", NULL, "-1", 400, "salt" },
		{ &key1, OWNER, "ethereum", NULL, "1157920892373161954235709850086879078532699846656"
		  "40564039457584007913129639936", 400, "salt" },	/* 2^256 */
		{ &key1, OWNER, "bitcoin", NULL, NULL, 400, "unknown chain" },
		{ &key1, OWNER, "ethereum", "nope", NULL, 400, "no network" },
		{ &key1, OWNER, "ethereum", "mainnet", NULL, 403, "mainnet" },
		{ &live1, OWNER, "testonly", NULL, NULL, 400, "no mainnet" },
		{ &live1, OWNER, "ethereum", "devnet", NULL, 403, "test network" },
		{ &key1, OWNER, "plain", NULL, NULL, 400, "not available" },
	};
	struct bp_error err;
	struct bp_wallet w;
	size_t i;
	int created;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		CU_ASSERT_EQUAL(create(rows[i].key, rows[i].owner, rows[i].chain, rows[i].network,
		    rows[i].salt, &w, &created, &err), -1);
		CU_ASSERT_EQUAL(err.status, rows[i].status);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.message, rows[i].says));
	}
}

/*
 * With the node down a create still stores the wallet, counterfactual; the same salt in another
 * spelling is the same wallet (not created again); another account gets its own row.
 */
static void
test_create_idempotent(void)
{
	struct bp_error err;
	struct bp_wallet w, again, other;
	int created = -1;

	CU_ASSERT_EQUAL_FATAL(create(&key1, OWNER, "ethereum", NULL, "42", &w, &created, &err), 0);
	CU_ASSERT_EQUAL(created, 1);
	CU_ASSERT_EQUAL(w.status, BP_WALLET_COUNTERFACTUAL);
	CU_ASSERT_STRING_EQUAL(w.network, "devnet");
	CU_ASSERT_STRING_EQUAL(w.owner_cs, OWNER);
	CU_ASSERT_STRING_EQUAL(w.factory_cs, "0x9406Cc6185a346906296840746125a0E44976454");
	CU_ASSERT_EQUAL(w.salt[31], 42);
	CU_ASSERT_EQUAL(w.checked_block, -1);	/* the head was not to be had */
	CU_ASSERT_EQUAL(create(&key1, OWNER, "ethereum", "devnet", "0x00002a", &again, &created,
	    &err), 0);
	CU_ASSERT_EQUAL(created, 0);
	CU_ASSERT_EQUAL(again.id, w.id);
	CU_ASSERT_STRING_EQUAL(again.address_cs, w.address_cs);
	CU_ASSERT_EQUAL(create(&key2, OWNER, "ethereum", NULL, "42", &other, &created, &err), 0);
	CU_ASSERT_EQUAL(created, 1);
	CU_ASSERT_NOT_EQUAL(other.id, w.id);
	CU_ASSERT_STRING_EQUAL(other.address_cs, w.address_cs);
}

struct seen {
	int	n;
	char	first[BP_ADDR_STR_MAX];
	int	deployed;
};

static int
collect(const struct bp_wallets_item *it, void *arg)
{
	struct seen *s = arg;

	if (s->n++ == 0)
		bp_strlcpy(s->first, it->address, sizeof(s->first));
	s->deployed += it->status == BP_WALLET_DEPLOYED;
	return 0;
}

/*
 * Get and list: 404 for an address the account does not have (another account's included),
 * 400 for a bad checksum, 500 when the code must be read and the node is down; the indexer's
 * AccountDeployed record makes the wallet deployed in the list (no chain read) and in get,
 * with its transaction and the indexed block's time, before the nonce read fails.
 */
static void
test_get_and_list(void)
{
	struct bp_error err;
	struct bp_wallet w, got;
	struct seen s;
	char sql[512], lower[BP_ADDR_STR_MAX];
	int64_t total = 0;
	int created;
	size_t i;

	CU_ASSERT_EQUAL_FATAL(create(&key1, OWNER, "ethereum", NULL, "7", &w, &created, &err), 0);
	CU_ASSERT_EQUAL(bp_wallets_get(ws, db, &key1, "0x000000000000000000000000000000000000dEaD",
	    NULL, &got, &err), -1);
	CU_ASSERT_EQUAL(err.status, 404);
	CU_ASSERT_EQUAL(bp_wallets_get(ws, db, &key1, "0x00", NULL, &got, &err), -1);
	CU_ASSERT_EQUAL(err.status, 400);
	CU_ASSERT_EQUAL(bp_wallets_get(ws, db, &key1, w.address_cs, "bitcoin", &got, &err), -1);
	CU_ASSERT_EQUAL(err.status, 400);
	/* The node is down and nothing says whether the wallet has code: 500. */
	CU_ASSERT_EQUAL(bp_wallets_get(ws, db, &key1, w.address_cs, NULL, &got, &err), -1);
	CU_ASSERT_EQUAL(err.status, 500);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "did not answer"));

	/* A wrong checksum: flip the case of the first letter of the EIP-55 form. */
	bp_strlcpy(lower, w.address_cs, sizeof(lower));
	for (i = 2; lower[i] != '\0'; i++)
		if ((lower[i] >= 'a' && lower[i] <= 'f') || (lower[i] >= 'A' && lower[i] <= 'F')) {
			lower[i] ^= 0x20;
			break;
		}
	CU_ASSERT_EQUAL(bp_wallets_get(ws, db, &key1, lower, NULL, &got, &err), -1);
	CU_ASSERT_EQUAL(err.status, 400);

	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(bp_wallets_list(ws, db, &key1, NULL, 1, 100, collect, &s, &total, &err), 0);
	CU_ASSERT_EQUAL(total, s.n);
	CU_ASSERT_STRING_EQUAL(s.first, w.address_cs);	/* newest first */
	CU_ASSERT_EQUAL(s.deployed, 0);
	CU_ASSERT_EQUAL(bp_wallets_list(ws, db, &key1, "bitcoin", 1, 10, collect, &s, &total,
	    &err), -1);
	CU_ASSERT_EQUAL(err.status, 400);

	/* The indexer saw the deployment in block 40 at 1700000040. */
	for (i = 0; w.address_cs[i] != '\0'; i++)
		lower[i] = (char)(w.address_cs[i] >= 'A' && w.address_cs[i] <= 'F' ?
		    w.address_cs[i] + 0x20 : w.address_cs[i]);
	lower[i] = '\0';
	snprintf(sql, sizeof(sql), "INSERT INTO index_account_deployments (chain, sender,"
	    " factory, paymaster, user_op_hash, tx_hash, block_number, log_index) VALUES ("
	    "'ethereum.devnet', '%s', '" FACTORY "', '0x0000000000000000000000000000000000000000',"
	    " '0x11', '" TXH "', 40, 2); INSERT INTO index_blocks VALUES ('ethereum.devnet', 40,"
	    " '0x01', '0x00', 1700000040, 0, 0, NULL, 1);", lower);
	CU_ASSERT_EQUAL_FATAL(bp_db_exec(db, sql), 0);
	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(bp_wallets_list(ws, db, &key1, "ethereum", 1, 1, collect, &s, &total,
	    &err), 0);
	CU_ASSERT_EQUAL(s.n, 1);
	CU_ASSERT_EQUAL(s.deployed, 1);
	/* Another account's copy of the same address is deployed too: a fact of the chain. */
	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(bp_wallets_list(ws, db, &key2, NULL, 1, 10, collect, &s, &total, &err), 0);
	CU_ASSERT_EQUAL(s.n, 1);

	/* get learns it from the index and stores it; then the nonce read fails: 500. */
	CU_ASSERT_EQUAL(bp_wallets_get(ws, db, &key1, lower, NULL, &got, &err), -1);
	CU_ASSERT_EQUAL(err.status, 500);
	CU_ASSERT_EQUAL(bp_wallets_get(ws, db, &key2, w.address_cs, NULL, &got, &err), -1);
	CU_ASSERT_EQUAL(err.status, 404);	/* account 2 has salt 42's wallet, not salt 7's */
	{
		static const char q[] = "SELECT count(*) FROM wallets WHERE status = 'deployed'"
		    " AND deploy_tx = '" TXH "' AND deploy_block = 40 AND deployed_at = 1700000040";
		struct bp_stmt *st = bp_db_stmt(db, q);

		CU_ASSERT_FATAL(st != NULL);
		CU_ASSERT_EQUAL(bp_stmt_step(st), BP_DB_ROW);
		CU_ASSERT_EQUAL(bp_col_int(st, 0), 1);
		bp_stmt_reset(st);
	}
}

/*
 * Test and live apart (tenant fences, item 3): account 1 has the same address on the devnet
 * (its test key) and on the mainnet (its live key). Each key gets its own kind's row and lists
 * only its kind; a wallet only of the other kind is 403 before any chain read.
 */
static void
test_kinds_apart(void)
{
	struct bp_error err;
	struct bp_wallet t, l, got;
	struct seen s;
	int64_t total = -1;
	int created;

	CU_ASSERT_EQUAL_FATAL(create(&key1, OWNER, "ethereum", NULL, "900", &t, &created, &err), 0);
	CU_ASSERT_EQUAL_FATAL(create(&live1, OWNER, "ethereum", NULL, "901", &l, &created, &err), 0);
	CU_ASSERT_STRING_EQUAL(l.network, "mainnet");
	CU_ASSERT_EQUAL(bp_wallets_get(ws, db, &key1, l.address_cs, NULL, &got, &err), -1);
	CU_ASSERT_EQUAL(err.status, 403);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "mainnet"));
	CU_ASSERT_EQUAL(bp_wallets_get(ws, db, &live1, t.address_cs, NULL, &got, &err), -1);
	CU_ASSERT_EQUAL(err.status, 403);
	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(bp_wallets_list(ws, db, &live1, NULL, 1, 100, collect, &s, &total, &err), 0);
	CU_ASSERT_EQUAL(total, 1);
	CU_ASSERT_EQUAL(s.n, 1);
	CU_ASSERT_STRING_EQUAL(s.first, l.address_cs);
	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(bp_wallets_list(ws, db, &key1, "ethereum", 1, 100, collect, &s, &total,
	    &err), 0);
	CU_ASSERT_EQUAL(total, s.n);
	CU_ASSERT_STRING_NOT_EQUAL(s.first, l.address_cs);
	/* The same address on both: the live key's wallet is the mainnet one, no 403. */
	CU_ASSERT_EQUAL_FATAL(create(&live1, OWNER, "ethereum", NULL, "900", &l, &created, &err), 0);
	CU_ASSERT_STRING_EQUAL(l.address_cs, t.address_cs);
	CU_ASSERT_EQUAL(bp_wallets_get(ws, db, &live1, t.address_cs, NULL, &got, &err), -1);
	CU_ASSERT_EQUAL(err.status, 500);	/* reached the (closed) mainnet node: its own row */
}

/*
 * The readers lib/wallet/wallets.c adds to lib/index/index_read.c: the first of two AccountDeployed records of a
 * sender (by block, then log index, whatever order they were written in), and a block's time.
 */
static void
test_index_readers(void)
{
	struct bp_index_deployment d;
	int64_t ts = -1;

	CU_ASSERT_EQUAL_FATAL(bp_db_exec(db, "INSERT INTO index_account_deployments (chain,"
	    " sender, factory, paymaster, user_op_hash, tx_hash, block_number, log_index) VALUES"
	    " ('ethereum.other', '0xaa', '" FACTORY "', '0x00', '0x1', '0xt9', 9, 5),"
	    " ('ethereum.other', '0xaa', '" FACTORY "', '0x00', '0x1', '0xt7b', 7, 3),"
	    " ('ethereum.other', '0xaa', '" FACTORY "', '0x00', '0x1', '0xt7a', 7, 1),"
	    " ('ethereum.other', '0xbb', '" FACTORY "', '0x00', '0x1', '0xt1', 1, 0);"
	    "INSERT INTO index_blocks VALUES ('ethereum.other', 7, '0x07', '0x06', 1700000007,"
	    " 0, 0, NULL, 1);"), 0);
	CU_ASSERT_EQUAL(bp_index_account_deployed(db, "ethereum.other", "0xaa", &d), 1);
	CU_ASSERT_STRING_EQUAL(d.tx_hash, "0xt7a");
	CU_ASSERT_EQUAL(d.block_number, 7);
	CU_ASSERT_EQUAL(bp_index_account_deployed(db, "ethereum.other", "0xaa", &d), 1);
	CU_ASSERT_STRING_EQUAL(d.tx_hash, "0xt7a");	/* the same record as the sorted reader */
	CU_ASSERT_EQUAL(bp_index_account_deployed(db, "ethereum.other", "0xcc", &d), 0);
	CU_ASSERT_EQUAL(bp_index_account_deployed(db, "ethereum.devnet", "0xbb", &d), 0);
	CU_ASSERT_EQUAL(bp_index_block_time(db, "ethereum.other", 7, &ts), 1);
	CU_ASSERT_EQUAL(ts, 1700000007);
	CU_ASSERT_EQUAL(bp_index_block_time(db, "ethereum.other", 8, &ts), 0);
	CU_ASSERT_EQUAL(bp_index_block_time(db, "ethereum.devnet", 7, &ts), 0);
}

BP_UNIT_SUITE(wallets, setup, teardown,
    { "create_refusals", test_create_refusals },
    { "create_idempotent", test_create_idempotent },
    { "get_and_list", test_get_and_list },
    { "kinds_apart", test_kinds_apart },
    { "index_readers", test_index_readers })
