/*
 * The finality-aware JSON-RPC response cache (lib/rpc/rpc_cache.c; docs/rpc.md), shared by every
 * program, process and thread through the database (table rpc_cache, schema/010_rpc_cache.sql).
 * The model is eRPC's (finalized, unfinalized and realtime answers kept by different rules):
 *
 *  - kept for good: answers named by a block hash, eth_chainId, net_version, and answers about a
 *    block at or below the finalized height (the known head minus the network's finality_depth):
 *    blocks, receipts and transactions in them, state and calls at such a block, logs of a
 *    range that ends there;
 *  - kept for the network's cache_ttl_ms (0, the default: not kept): answers near the head
 *    (eth_blockNumber, eth_gasPrice, calls and state at latest/safe/finalized, blocks above the
 *    finalized height);
 *  - Solana: at finalized commitment (named, or the node's default), transactions and blocks
 *    for good and state (balances, accounts, slots) for cache_ttl_ms; the genesis hash for
 *    good; never at processed or confirmed;
 *  - never kept: errors, null results, anything at "pending", writes, filters, and whatever
 *    this module does not know.
 *
 * The cache keeps the answer's "result" only; the proxy writes the envelope with the caller's
 * id bytes around it.
 */
#ifndef BP_RPC_CACHE_H
#define BP_RPC_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/config.h"

struct bp_db;

/* What a request alone says about keeping its answer. */
enum bp_rpc_cache_rule {
	BP_CACHE_NEVER,		/* 0: never kept */
	BP_CACHE_FOREVER,	/* 1: immutable: by block hash, the chain id */
	BP_CACHE_NEAR_HEAD,	/* 2: kept for cache_ttl_ms */
	BP_CACHE_AT_BLOCK,	/* 3: about block *block: for good once finalized, else the TTL */
	BP_CACHE_RESULT_BLOCK,	/* 4: about the block the result names ("blockNumber"), likewise */
	BP_CACHE__MAX
};

#define BP_CACHE_KEEP_FOREVER	INT64_MAX	/* bp_rpc_cache_keep: no expiry */

/*
 * The rule for method (mlen bytes) with params (the raw JSON of the params, plen bytes; 0 when
 * absent) on a network of kind; sets *block for BP_CACHE_AT_BLOCK. Params are the client's
 * (untrusted): anything not understood is BP_CACHE_NEVER.
 */
enum bp_rpc_cache_rule bp_rpc_cache_rule(enum bp_chain_kind kind, const char *method,
		    size_t mlen, const char *params, size_t plen, int64_t *block);

/*
 * How long to keep result (the raw JSON of an answer's "result", rlen bytes) under rule and
 * block: 0 not at all (null, or the rule says never), BP_CACHE_KEEP_FOREVER, or microseconds.
 * finalized is the highest finalized block known (-1: unknown, nothing counts as finalized);
 * ttl_ms the network's cache_ttl_ms.
 */
int64_t		 bp_rpc_cache_keep(enum bp_rpc_cache_rule rule, int64_t block,
		    const char *result, size_t rlen, int64_t finalized, int64_t ttl_ms);

/*
 * The key of a call: SHA-256 of chain.network, method and params, built in scratch. 0 or -1
 * (out of memory).
 */
int		 bp_rpc_cache_key(struct bp_buf *scratch, const struct bp_network *net,
		    const char *method, size_t mlen, const char *params, size_t plen,
		    unsigned char key[32]);

/*
 * Appends the kept result of key to out when it has one that has not expired at now (Unix
 * microseconds): 1, else 0 (also on a database error, logged: the cache is best effort).
 */
int		 bp_rpc_cache_get(struct bp_db *, const unsigned char key[32], int64_t now,
		    struct bp_buf *out);

/*
 * Keeps result (rlen bytes) under key until expires (Unix microseconds; 0: for good), for
 * net's method, and evicts the oldest answers when the cache passes cfg's rpc_cache_mb.
 * Results over rpc_cache_max_item are not kept. Waits at most 2 ms for another writer's lock.
 * 0, or -1 (not kept: the lock was busy, or an error, logged).
 */
int		 bp_rpc_cache_put(struct bp_db *, const struct bp_config *cfg,
		    const unsigned char key[32], const struct bp_network *net, const char *method,
		    const char *result, size_t rlen, int64_t expires, int64_t now);

#endif
