/*
 * lib/rpc/rpc_cache.c and lib/rpc/head_mark.c: which answers the response cache keeps and for how long
 * (the method table, block arguments, EIP-1898 objects, logs filters, results), the table that
 * keeps them (hits, expiry, replacement, the byte bound and eviction, threads), and the shared
 * high-water mark of heads.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/db.h"
#include "core/util.h"
#include "rpc/head_mark.h"
#include "rpc/rpc_cache.h"
#include "unit.h"
#include "unit_db.h"

const void	*bp_rpc_cache_methods_for_test(enum bp_chain_kind, size_t *n, size_t *stride);

/*
 * Each table (EVM's, Solana's) is sorted, every row is found (bsearch) on its kind, and none on
 * the other.
 */
static void
test_cache_method_table(void)
{
	enum bp_chain_kind kinds[] = { BP_CHAIN_EVM, BP_CHAIN_SOLANA };
	size_t n, stride, i, k;

	for (k = 0; k < BP_NITEMS(kinds); k++) {
		const char *base = bp_rpc_cache_methods_for_test(kinds[k], &n, &stride);
		const char *prev = NULL;

		CU_ASSERT(n >= 10);
		for (i = 0; i < n; i++) {
			const char *name = *(const char *const *)(const void *)(base + i * stride);
			int64_t b;

			if (prev != NULL && strcmp(prev, name) >= 0) {
				fprintf(stderr, "\ncache table out of order at %s\n", name);
				CU_FAIL("cache table out of order");
			}
			CU_ASSERT(bp_rpc_cache_rule(kinds[k], name, strlen(name), NULL, 0, &b) !=
			    BP_CACHE_NEVER || kinds[k] == BP_CHAIN_EVM);
			CU_ASSERT(bp_rpc_cache_rule(kinds[1 - k], name, strlen(name), "[]", 2, &b) ==
			    BP_CACHE_NEVER);
			prev = name;
		}
	}
}

/* Solana: by commitment; finalized (or the node's default) only. */
static void
test_cache_sol_rules(void)
{
	static const struct {
		const char		*method;
		const char		*params;
		enum bp_rpc_cache_rule	 rule;
	} rows[] = {
#define SIG "\"5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW\""
		{ "getTransaction", "[" SIG ",{\"commitment\":\"finalized\"}]", BP_CACHE_FOREVER },
		{ "getTransaction", "[" SIG ",{\"encoding\":\"json\"}]", BP_CACHE_FOREVER },
		{ "getTransaction", "[" SIG "]", BP_CACHE_FOREVER },
		{ "getTransaction", "[" SIG ",{\"commitment\":\"confirmed\"}]", BP_CACHE_NEVER },
		{ "getTransaction", "[" SIG ",{\"commitment\":\"processed\"}]", BP_CACHE_NEVER },
		{ "getTransaction", "[" SIG ",{\"commitment\":\"max\"}]", BP_CACHE_NEVER },
		{ "getTransaction", "[" SIG ",{\"commitment\":\"\\u0066inalized\"}]", BP_CACHE_FOREVER },
		/* Read two ways by a node: never. */
		{ "getTransaction", "[" SIG ",{\"commitment\":\"finalized\",\"commitment\":\"processed\"}]",
		  BP_CACHE_NEVER },
		{ "getTransaction", "[" SIG ",\"json\"]", BP_CACHE_NEVER },
		{ "getTransaction", "{\"signature\":" SIG "}", BP_CACHE_NEVER },
		{ "getTransaction", "[" SIG ",{\"commitment\":1}]", BP_CACHE_NEVER },
		{ "getBlock", "[5,{\"commitment\":\"finalized\"}]", BP_CACHE_FOREVER },
		{ "getBlock", "[5,{\"commitment\":\"confirmed\"}]", BP_CACHE_NEVER },
		{ "getGenesisHash", NULL, BP_CACHE_FOREVER },
		/* State follows the finalized slot: near the head. */
		{ "getBalance", "[\"11111111111111111111111111111111\"]", BP_CACHE_NEAR_HEAD },
		{ "getBalance", "[\"11111111111111111111111111111111\",{\"commitment\":\"finalized\"}]",
		  BP_CACHE_NEAR_HEAD },
		{ "getBalance", "[\"11111111111111111111111111111111\",{\"commitment\":\"processed\"}]",
		  BP_CACHE_NEVER },
		{ "getSlot", "[{\"commitment\":\"confirmed\"}]", BP_CACHE_NEVER },
		{ "getSlot", "[]", BP_CACHE_NEAR_HEAD },
		{ "getTokenAccountsByOwner", "[\"a\",{\"mint\":\"b\"},{\"commitment\":\"processed\"}]",
		  BP_CACHE_NEVER },
		/* Writes, statuses and what is not in the table: never. */
		{ "sendTransaction", "[\"AQ==\"]", BP_CACHE_NEVER },
		{ "requestAirdrop", "[\"a\",1]", BP_CACHE_NEVER },
		{ "getSignatureStatuses", "[[" SIG "]]", BP_CACHE_NEVER },
		{ "simulateTransaction", "[\"AQ==\"]", BP_CACHE_NEVER },
		{ "eth_chainId", NULL, BP_CACHE_NEVER },
#undef SIG
	};
	size_t i;

	for (i = 0; i < BP_NITEMS(rows); i++) {
		size_t plen = rows[i].params ? strlen(rows[i].params) : 0;
		int64_t b = -1;

		if (bp_rpc_cache_rule(BP_CHAIN_SOLANA, rows[i].method, strlen(rows[i].method),
		    rows[i].params, plen, &b) != rows[i].rule) {
			fprintf(stderr, "\nSolana rule of %s %s\n", rows[i].method,
			    rows[i].params ? rows[i].params : "(none)");
			CU_FAIL("Solana cache rule");
		}
	}
}

/* A block hash as a JSON string. */
#define HASH "\"0x0000000000000000000000000000000000000000000000000000000000000001\""

static void
test_cache_rules(void)
{
	static const struct {
		const char		*method;
		const char		*params;
		enum bp_rpc_cache_rule	 rule;
		int64_t			 block;
	} rows[] = {
		{ "eth_chainId", NULL, BP_CACHE_FOREVER, 0 },
		{ "net_version", "[]", BP_CACHE_FOREVER, 0 },
		{ "eth_blockNumber", "[]", BP_CACHE_NEAR_HEAD, 0 },
		{ "eth_gasPrice", NULL, BP_CACHE_NEAR_HEAD, 0 },
		{ "eth_getBlockByHash", "[\"0xab\",false]", BP_CACHE_FOREVER, 0 },
		{ "eth_getTransactionReceipt", "[\"0x01\"]", BP_CACHE_RESULT_BLOCK, 0 },
		{ "eth_getTransactionByHash", "[\"0x01\"]", BP_CACHE_RESULT_BLOCK, 0 },
		/* Blocks by number: numbers, earliest, tags; pending never. */
		{ "eth_getBlockByNumber", "[\"0x10\",false]", BP_CACHE_AT_BLOCK, 16 },
		{ "eth_getBlockByNumber", "[\"earliest\",true]", BP_CACHE_AT_BLOCK, 0 },
		{ "eth_getBlockByNumber", "[\"latest\",false]", BP_CACHE_NEAR_HEAD, 0 },
		{ "eth_getBlockByNumber", "[\"safe\",false]", BP_CACHE_NEAR_HEAD, 0 },
		{ "eth_getBlockByNumber", "[\"finalized\",false]", BP_CACHE_NEAR_HEAD, 0 },
		{ "eth_getBlockByNumber", "[\"pending\",false]", BP_CACHE_NEVER, 0 },
		{ "eth_getBlockByNumber", "[\"0x010\",false]", BP_CACHE_NEVER, 0 },
		{ "eth_getBlockByNumber", "[\"0X10\",false]", BP_CACHE_NEVER, 0 },
		{ "eth_getBlockByNumber", "[16,false]", BP_CACHE_NEVER, 0 },
		{ "eth_getBlockByNumber", "[]", BP_CACHE_NEVER, 0 },
		{ "eth_getBlockByNumber", NULL, BP_CACHE_NEVER, 0 },
		{ "eth_getBlockByNumber", "{\"block\":\"0x1\"}", BP_CACHE_NEVER, 0 },
		{ "eth_getBlockByNumber", "[\"\\u0030x10\",false]", BP_CACHE_AT_BLOCK, 16 },
		{ "eth_getBlockReceipts", "[\"0x1f\"]", BP_CACHE_AT_BLOCK, 31 },
		{ "eth_getBlockReceipts",
		  "[" HASH "]",
		  BP_CACHE_FOREVER, 0 },
		{ "eth_getBlockReceipts", "[\"0x00000000000000000000000000000000000000000000000000000000000000zz\"]",
		  BP_CACHE_NEVER, 0 },
		/*
		 * 66 hex characters are a hash only where the parameter may be one: a number a
		 * node reads with its leading zeros must not be kept for good.
		 */
		{ "eth_getBlockByNumber", "[" HASH ",false]", BP_CACHE_NEVER, 0 },
		{ "eth_getBlockTransactionCountByNumber", "[" HASH "]", BP_CACHE_NEVER, 0 },
		{ "eth_getTransactionByBlockNumberAndIndex", "[" HASH ",\"0x0\"]",
		  BP_CACHE_NEVER, 0 },
		{ "eth_getUncleCountByBlockNumber", "[" HASH "]", BP_CACHE_NEVER, 0 },
		{ "eth_feeHistory", "[\"0x4\"," HASH ",[]]", BP_CACHE_NEVER, 0 },
		{ "eth_getBlockByNumber", "[{\"blockHash\":" HASH "},false]", BP_CACHE_NEVER, 0 },
		{ "eth_getBalance", "[\"0xaa\"," HASH "]", BP_CACHE_FOREVER, 0 },
		/* State and calls: the block argument after the others, latest when absent. */
		{ "eth_getBalance", "[\"0xaa\",\"0x5\"]", BP_CACHE_AT_BLOCK, 5 },
		{ "eth_getBalance", "[\"0xaa\"]", BP_CACHE_NEAR_HEAD, 0 },
		{ "eth_getBalance", "[\"0xaa\",\"pending\"]", BP_CACHE_NEVER, 0 },
		{ "eth_getStorageAt", "[\"0xaa\",\"0x0\",\"0x7\"]", BP_CACHE_AT_BLOCK, 7 },
		{ "eth_getStorageAt", "[\"0xaa\"]", BP_CACHE_NEVER, 0 },
		{ "eth_call", "[{\"to\":\"0xaa\"},\"latest\"]", BP_CACHE_NEAR_HEAD, 0 },
		{ "eth_call", "[{\"to\":\"0xaa\"}]", BP_CACHE_NEAR_HEAD, 0 },
		{ "eth_call", "[{\"to\":\"0xaa\"},{\"blockNumber\":\"0x9\"}]", BP_CACHE_AT_BLOCK, 9 },
		{ "eth_call", "[{\"to\":\"0xaa\"},{\"blockHash\":" HASH "}]",
		  BP_CACHE_FOREVER, 0 },
		{ "eth_call", "[{\"to\":\"0xaa\"},{\"blockHash\":" HASH ","
		  "\"requireCanonical\":true}]", BP_CACHE_NEVER, 0 },
		/* An object a node could read another block from is never kept. */
		{ "eth_call", "[{},{\"blockNumber\":\"0x9\",\"BlockNumber\":\"0x1\"}]",
		  BP_CACHE_NEVER, 0 },
		{ "eth_call", "[{},{\"blockNumber\":\"0x9\",\"blockNumber\":\"0x1\"}]",
		  BP_CACHE_NEVER, 0 },
		{ "eth_call", "[{},{\"blockNumber\":\"0x9\",\"blockHash\":" HASH "}]",
		  BP_CACHE_NEVER, 0 },
		{ "eth_call", "[{},{}]", BP_CACHE_NEVER, 0 },
		{ "eth_call", "[{},null]", BP_CACHE_NEVER, 0 },
		/* Logs: both ends numbers (the later decides), a hash, or near the head. */
		{ "eth_getLogs", "[{\"fromBlock\":\"0x1\",\"toBlock\":\"0x20\"}]", BP_CACHE_AT_BLOCK, 32 },
		{ "eth_getLogs", "[{\"fromBlock\":\"0x30\",\"toBlock\":\"0x20\"}]", BP_CACHE_AT_BLOCK, 48 },
		{ "eth_getLogs", "[{\"fromBlock\":\"0x1\"}]", BP_CACHE_NEAR_HEAD, 0 },
		{ "eth_getLogs", "[{}]", BP_CACHE_NEAR_HEAD, 0 },
		{ "eth_getLogs", "[{\"fromBlock\":\"0x1\",\"toBlock\":\"pending\"}]", BP_CACHE_NEVER, 0 },
		{ "eth_getLogs", "[{\"fromBlock\":\"0x1\",\"toblock\":\"0x2\"}]", BP_CACHE_NEVER, 0 },
		{ "eth_getLogs", "[{\"blockHash\":" HASH "}]",
		  BP_CACHE_FOREVER, 0 },
		{ "eth_getLogs", "[{\"blockHash\":" HASH ","
		  "\"fromBlock\":\"0x1\"}]", BP_CACHE_NEVER, 0 },
		{ "eth_getLogs", "[\"0x1\"]", BP_CACHE_NEVER, 0 },
		/* Never: writes, filters, unknown methods. */
		{ "eth_sendRawTransaction", "[\"0x00\"]", BP_CACHE_NEVER, 0 },
		{ "eth_getFilterChanges", "[\"0x1\"]", BP_CACHE_NEVER, 0 },
		{ "eth_syncing", NULL, BP_CACHE_NEVER, 0 },
		{ "eth_chainid", NULL, BP_CACHE_NEVER, 0 },
		{ "eth_chainId2", NULL, BP_CACHE_NEVER, 0 },
	};
	size_t i;

	for (i = 0; i < BP_NITEMS(rows); i++) {
		const char *pa = rows[i].params != NULL ? rows[i].params : "";
		int64_t block = -7;
		enum bp_rpc_cache_rule got = bp_rpc_cache_rule(BP_CHAIN_EVM, rows[i].method,
		    strlen(rows[i].method), pa, strlen(pa), &block);

		if (got != rows[i].rule || (got == BP_CACHE_AT_BLOCK && block != rows[i].block)) {
			fprintf(stderr, "\nrule %s %s: %d %lld\n", rows[i].method, pa, got,
			    (long long)block);
			CU_FAIL("cache rule");
		}
	}
}

static void
test_cache_keep(void)
{
	static const char rcpt[] = "{\"blockHash\":\"0x1\",\"blockNumber\":\"0x10\",\"status\":\"0x1\"}";
	static const char pending[] = "{\"hash\":\"0x1\",\"blockNumber\":null}";
	const int64_t F = BP_CACHE_KEEP_FOREVER;

	/* Null and empty results are never kept, whatever the rule. */
	CU_ASSERT_EQUAL(bp_rpc_cache_keep(BP_CACHE_FOREVER, 0, "null", 4, 100, 1000), 0);
	CU_ASSERT_EQUAL(bp_rpc_cache_keep(BP_CACHE_FOREVER, 0, " null ", 6, 100, 1000), 0);
	CU_ASSERT_EQUAL(bp_rpc_cache_keep(BP_CACHE_AT_BLOCK, 5, "null", 4, 100, 1000), 0);
	CU_ASSERT_EQUAL(bp_rpc_cache_keep(BP_CACHE_FOREVER, 0, "", 0, 100, 1000), 0);
	CU_ASSERT_EQUAL(bp_rpc_cache_keep(BP_CACHE_FOREVER, 0, "\"0x1\"", 5, -1, 0), F);
	CU_ASSERT_EQUAL(bp_rpc_cache_keep(BP_CACHE_NEVER, 0, "\"0x1\"", 5, 100, 1000), 0);
	/* Near the head: the TTL, or not at all. */
	CU_ASSERT_EQUAL(bp_rpc_cache_keep(BP_CACHE_NEAR_HEAD, 0, "\"0x1\"", 5, 100, 1000), 1000000);
	CU_ASSERT_EQUAL(bp_rpc_cache_keep(BP_CACHE_NEAR_HEAD, 0, "\"0x1\"", 5, 100, 0), 0);
	/* At a block: for good at or below the finalized height, else the TTL. */
	CU_ASSERT_EQUAL(bp_rpc_cache_keep(BP_CACHE_AT_BLOCK, 100, "{}", 2, 100, 500), F);
	CU_ASSERT_EQUAL(bp_rpc_cache_keep(BP_CACHE_AT_BLOCK, 101, "{}", 2, 100, 500), 500000);
	CU_ASSERT_EQUAL(bp_rpc_cache_keep(BP_CACHE_AT_BLOCK, 101, "{}", 2, 100, 0), 0);
	CU_ASSERT_EQUAL(bp_rpc_cache_keep(BP_CACHE_AT_BLOCK, 0, "{}", 2, -1, 0), 0);
	CU_ASSERT_EQUAL(bp_rpc_cache_keep(BP_CACHE_AT_BLOCK, 0, "[]", 2, 0, 0), F);
	/* A receipt or transaction: the block it names; pending ones never. */
	CU_ASSERT_EQUAL(bp_rpc_cache_keep(BP_CACHE_RESULT_BLOCK, 0, rcpt, strlen(rcpt), 16, 0), F);
	CU_ASSERT_EQUAL(bp_rpc_cache_keep(BP_CACHE_RESULT_BLOCK, 0, rcpt, strlen(rcpt), 15, 0), 0);
	CU_ASSERT_EQUAL(bp_rpc_cache_keep(BP_CACHE_RESULT_BLOCK, 0, rcpt, strlen(rcpt), 15, 9),
	    9000);
	CU_ASSERT_EQUAL(bp_rpc_cache_keep(BP_CACHE_RESULT_BLOCK, 0, pending, strlen(pending), 99,
	    9), 0);
	CU_ASSERT_EQUAL(bp_rpc_cache_keep(BP_CACHE_RESULT_BLOCK, 0, "\"0x1\"", 5, 99, 9), 0);
	CU_ASSERT_EQUAL(bp_rpc_cache_keep(BP_CACHE_RESULT_BLOCK, 0, "{}", 2, 99, 9), 0);
}

static struct bp_network
net_named(const char *chain, const char *network)
{
	struct bp_network n;

	memset(&n, 0, sizeof(n));
	bp_strlcpy(n.chain, chain, sizeof(n.chain));
	bp_strlcpy(n.network, network, sizeof(n.network));
	n.finality_depth = 4;
	return n;
}

static void
test_cache_store(void)
{
	struct bp_network a = net_named("ethereum", "mainnet"), b = net_named("ethereum", "sepolia");
	unsigned char k1[32], k2[32], k3[32];
	struct bp_buf out, scratch;
	struct bp_config cfg;
	struct bp_unit_db u;
	char big[4000];
	int i;

	memset(&cfg, 0, sizeof(cfg));
	cfg.rpc_cache = 1;
	cfg.rpc_cache_mb = 1;
	cfg.rpc_cache_max_item = 2048;
	bp_buf_init(&out, 1 << 20);
	bp_buf_init(&scratch, 1 << 20);
	CU_ASSERT_FATAL(bp_unit_db_open(&u, "rpccache") == 0);
	/* Keys: network, method and params all count. */
	CU_ASSERT(bp_rpc_cache_key(&scratch, &a, "eth_chainId", 11, "", 0, k1) == 0);
	CU_ASSERT(bp_rpc_cache_key(&scratch, &b, "eth_chainId", 11, "", 0, k2) == 0);
	CU_ASSERT(bp_rpc_cache_key(&scratch, &a, "eth_chainId", 11, "[]", 2, k3) == 0);
	CU_ASSERT(memcmp(k1, k2, 32) != 0 && memcmp(k1, k3, 32) != 0);

	CU_ASSERT_EQUAL(bp_rpc_cache_get(u.db, k1, 1000, &out), 0);
	CU_ASSERT(bp_rpc_cache_put(u.db, &cfg, k1, &a, "eth_chainId", "\"0x1\"", 5, 0, 1000) == 0);
	CU_ASSERT_EQUAL(bp_rpc_cache_get(u.db, k1, 2000, &out), 1);
	CU_ASSERT(out.len == 5 && memcmp(out.data, "\"0x1\"", 5) == 0);
	CU_ASSERT_EQUAL(bp_rpc_cache_get(u.db, k2, 2000, &out), 0);
	/* Expiry, and a newer answer replacing an older one. */
	CU_ASSERT(bp_rpc_cache_put(u.db, &cfg, k2, &b, "eth_blockNumber", "\"0x5\"", 5, 3000,
	    1000) == 0);
	bp_buf_reset(&out);
	CU_ASSERT_EQUAL(bp_rpc_cache_get(u.db, k2, 2999, &out), 1);
	CU_ASSERT_EQUAL(bp_rpc_cache_get(u.db, k2, 3000, &out), 0);
	CU_ASSERT(bp_rpc_cache_put(u.db, &cfg, k2, &b, "eth_blockNumber", "\"0x6\"", 5, 9000,
	    4000) == 0);
	bp_buf_reset(&out);
	CU_ASSERT_EQUAL(bp_rpc_cache_get(u.db, k2, 5000, &out), 1);
	CU_ASSERT(out.len == 5 && memcmp(out.data, "\"0x6\"", 5) == 0);
	/* Too large for rpc_cache_max_item: not kept. */
	memset(big, '7', sizeof(big));
	big[0] = big[sizeof(big) - 1] = '"';
	CU_ASSERT(bp_rpc_cache_put(u.db, &cfg, k3, &a, "eth_call", big, sizeof(big), 0, 1) == 0);
	CU_ASSERT_EQUAL(bp_rpc_cache_get(u.db, k3, 2, &out), 0);
	/* The byte bound: 1 MiB of 2,000-byte answers keeps at most about 1 MiB; oldest go first. */
	for (i = 0; i < 800; i++) {
		unsigned char k[32];
		char params[32];

		snprintf(params, sizeof(params), "[%d]", i);
		CU_ASSERT(bp_rpc_cache_key(&scratch, &a, "eth_call", 8, params, strlen(params),
		    k) == 0);
		CU_ASSERT(bp_rpc_cache_put(u.db, &cfg, k, &a, "eth_call", big, 2000, 0,
		    10000 + i) == 0);
	}
	{
		struct bp_stmt *st = bp_db_stmt(u.db, "SELECT entries, bytes, "
		    "(SELECT coalesce(sum(size), 0) FROM rpc_cache), "
		    "(SELECT count(*) FROM rpc_cache) FROM rpc_cache_size");
		unsigned char k[32];

		CU_ASSERT_FATAL(st != NULL && bp_stmt_step(st) == BP_DB_ROW);
		CU_ASSERT(bp_col_int(st, 1) <= 1024 * 1024 && bp_col_int(st, 1) > 700 * 1024);
		CU_ASSERT_EQUAL(bp_col_int(st, 0), bp_col_int(st, 3));
		CU_ASSERT_EQUAL(bp_col_int(st, 1), bp_col_int(st, 2));
		bp_stmt_reset(st);
		/* The first answers are gone, the last is there. */
		CU_ASSERT(bp_rpc_cache_key(&scratch, &a, "eth_call", 8, "[0]", 3, k) == 0);
		CU_ASSERT_EQUAL(bp_rpc_cache_get(u.db, k, 1, &out), 0);
		CU_ASSERT(bp_rpc_cache_key(&scratch, &a, "eth_call", 8, "[799]", 5, k) == 0);
		CU_ASSERT_EQUAL(bp_rpc_cache_get(u.db, k, 1, &out), 1);
	}
	/* Another writer holds the lock (the indexer's batch): the store gives up within ms. */
	{
		struct bp_db *other = bp_db_open(u.path, 0);
		unsigned char k[32];
		int64_t t0;

		CU_ASSERT_FATAL(other != NULL);
		CU_ASSERT(bp_db_begin(other) == 0);
		CU_ASSERT(bp_rpc_cache_key(&scratch, &a, "eth_call", 8, "[\"busy\"]", 8, k) == 0);
		t0 = bp_mono_us();
		CU_ASSERT_EQUAL(bp_rpc_cache_put(u.db, &cfg, k, &a, "eth_call", "\"0x1\"", 5, 0, 1),
		    -1);
		CU_ASSERT(bp_mono_us() - t0 < 500000);
		CU_ASSERT_EQUAL(bp_rpc_cache_get(u.db, k, 1, &out), 0);	/* readers are not held */
		CU_ASSERT(bp_db_commit(other) == 0);
		CU_ASSERT_EQUAL(bp_rpc_cache_put(u.db, &cfg, k, &a, "eth_call", "\"0x1\"", 5, 0, 1),
		    0);
		bp_db_close(other);
	}
	bp_unit_db_close(&u);
	bp_buf_free(&out);
	bp_buf_free(&scratch);
}

/* Threads sharing one database file, each with its own connection, as the programs do. */
static struct bp_unit_db shared;
static struct bp_config shared_cfg;

static void *
store_thread(void *arg)
{
	size_t t = (size_t)arg;
	struct bp_network n = net_named("ethereum", "mainnet");
	struct bp_buf out, scratch;
	struct bp_db *db = bp_db_open(shared.path, 0);
	void *bad = NULL;
	int i;

	if (db == NULL)
		return (void *)1;
	bp_buf_init(&out, 1 << 16);
	bp_buf_init(&scratch, 1 << 16);
	for (i = 0; i < 50; i++) {
		unsigned char k[32];
		char params[32];

		/* Half the keys shared by all threads, half their own. */
		snprintf(params, sizeof(params), "[%zu,%d]", i % 2 ? t : 99, i);
		if (bp_rpc_cache_key(&scratch, &n, "eth_call", 8, params, strlen(params), k) == -1) {
			bad = (void *)1;
			break;
		}
		/* Best effort: a store that met the lock busy for over 2 ms is skipped. */
		if (bp_rpc_cache_put(db, &shared_cfg, k, &n, "eth_call", params, strlen(params), 0,
		    i) == -1)
			continue;
		bp_buf_reset(&out);
		if (bp_rpc_cache_get(db, k, 1, &out) != 1 || out.len != strlen(params) ||
		    memcmp(out.data, params, out.len) != 0) {
			bad = (void *)1;
			break;
		}
	}
	bp_buf_free(&out);
	bp_buf_free(&scratch);
	bp_db_close(db);
	return bad;
}

static void
test_cache_threads(void)
{
	memset(&shared_cfg, 0, sizeof(shared_cfg));
	shared_cfg.rpc_cache_mb = 64;
	shared_cfg.rpc_cache_max_item = 4096;
	CU_ASSERT_FATAL(bp_unit_db_open(&shared, "rpccache-threads") == 0);
	CU_ASSERT_EQUAL(bp_unit_threads(8, store_thread), 0);
	{
		struct bp_stmt *st = bp_db_stmt(shared.db, "SELECT entries, "
		    "(SELECT count(*) FROM rpc_cache) FROM rpc_cache_size");

		CU_ASSERT_FATAL(st != NULL && bp_stmt_step(st) == BP_DB_ROW);
		/* At most 25 shared keys and 25 of each of 8 threads; the count kept right. */
		CU_ASSERT(bp_col_int(st, 1) > 0 && bp_col_int(st, 1) <= 25 + 8 * 25);
		CU_ASSERT_EQUAL(bp_col_int(st, 0), bp_col_int(st, 1));
		bp_stmt_reset(st);
	}
	bp_unit_db_close(&shared);
}

static void
test_head_mark(void)
{
	struct bp_network a = net_named("ethereum", "mainnet"), b = net_named("ethereum", "sepolia");
	struct bp_head_mark *m, *m2;
	struct bp_config cfg;
	char dir[] = "/tmp/bp-unit-heads.XXXXXX", path[128];

	memset(&cfg, 0, sizeof(cfg));
	CU_ASSERT_PTR_NULL(bp_head_mark_open(&cfg));	/* no limits file: none */
	CU_ASSERT_EQUAL(bp_head_mark_see(NULL, &a, 5, 0), 5);
	CU_ASSERT_EQUAL(bp_head_mark_get(NULL, &a), -1);
	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	snprintf(cfg.limits_file, sizeof(cfg.limits_file), "%s/limits", dir);
	CU_ASSERT_FATAL((m = bp_head_mark_open(&cfg)) != NULL);
	CU_ASSERT_FATAL((m2 = bp_head_mark_open(&cfg)) != NULL);	/* another process */
	CU_ASSERT_EQUAL(bp_head_mark_get(m, &a), -1);
	CU_ASSERT_EQUAL(bp_head_mark_owner(m, &a), -1);
	CU_ASSERT_EQUAL(bp_head_mark_see(m, &a, 100, 0), 100);
	CU_ASSERT_EQUAL(bp_head_mark_get(m2, &a), 100);
	CU_ASSERT_EQUAL(bp_head_mark_owner(m2, &a), 0);
	CU_ASSERT_EQUAL(bp_head_mark_get(m2, &b), -1);
	/* A fallback behind: answered with the mark, which stays. */
	CU_ASSERT_EQUAL(bp_head_mark_see(m2, &a, 95, 1), 100);
	CU_ASSERT_EQUAL(bp_head_mark_get(m, &a), 100);
	/* Ahead: the mark moves; the same head from another upstream changes nothing. */
	CU_ASSERT_EQUAL(bp_head_mark_see(m2, &a, 101, 1), 101);
	CU_ASSERT_EQUAL(bp_head_mark_owner(m, &a), 1);
	CU_ASSERT_EQUAL(bp_head_mark_see(m, &a, 101, 0), 101);
	CU_ASSERT_EQUAL(bp_head_mark_owner(m, &a), 1);
	CU_ASSERT_EQUAL(bp_head_mark_see(m, &a, 99, 0), 101);
	/* The upstream that set the mark goes back (its reorg, a reverted dev chain): believed. */
	CU_ASSERT_EQUAL(bp_head_mark_see(m, &a, 90, 1), 90);
	CU_ASSERT_EQUAL(bp_head_mark_get(m2, &a), 90);
	CU_ASSERT_EQUAL(bp_head_mark_see(m, &a, 0, 0), 90);
	CU_ASSERT_EQUAL(bp_head_mark_see(m, &a, -1, 0), -1);
	CU_ASSERT_EQUAL(bp_head_mark_init(&cfg), 0);
	bp_head_mark_close(m);
	bp_head_mark_close(m2);
	snprintf(path, sizeof(path), "%s/limits-heads", dir);
	CU_ASSERT(unlink(path) == 0);
	CU_ASSERT(rmdir(dir) == 0);
}

BP_UNIT_SUITE(rpc_cache, NULL, NULL,
	{ "cache method table", test_cache_method_table },
	{ "cache rules", test_cache_rules },
	{ "cache Solana rules", test_cache_sol_rules },
	{ "cache keep", test_cache_keep },
	{ "cache store, expiry, bound", test_cache_store },
	{ "cache store from threads", test_cache_threads },
	{ "head high-water mark", test_head_mark },
)
