/*
 * The JSON-RPC response cache (lib/rpc/rpc_cache.h; docs/rpc.md): which answers may be kept and for
 * how long (a table of methods and the reading of their block arguments; Solana's by commitment),
 * and the table that keeps them (rpc_cache, this module's), bounded in bytes with the oldest
 * answers evicted first.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/db.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/util.h"
#include "rpc_cache.h"
#include "rpc_scan.h"

/* How a method's answer is judged. */
enum how {
	H_FOREVER,	/* the same answer whatever the head */
	H_NEAR_HEAD,	/* follows the head */
	H_BLOCK,	/* the block argument at index decides */
	H_RESULT,	/* the answer names its block */
	H_LOGS,		/* an eth_getLogs filter */
	H_SOL_FINAL,	/* Solana: immutable once at finalized commitment (config at index) */
	H_SOL_STATE,	/* Solana: follows the finalized slot (config at index): a TTL */
};

struct cached_method {
	const char	*name;
	enum how	 how;
	int		 index;		/* H_BLOCK: of the block argument in params */
	int		 hash_ok;	/* H_BLOCK: it may be a block hash (EIP-1898) */
};

/* Sorted by name in byte order (bsearch; the unit tests check it). EVM only. */
static const struct cached_method methods[] = {
	{ "eth_blobBaseFee", H_NEAR_HEAD, -1, 0 },
	{ "eth_blockNumber", H_NEAR_HEAD, -1, 0 },
	{ "eth_call", H_BLOCK, 1, 1 },
	{ "eth_chainId", H_FOREVER, -1, 0 },
	{ "eth_createAccessList", H_BLOCK, 1, 1 },
	{ "eth_estimateGas", H_BLOCK, 1, 1 },
	{ "eth_feeHistory", H_BLOCK, 1, 0 },
	{ "eth_gasPrice", H_NEAR_HEAD, -1, 0 },
	{ "eth_getAccount", H_BLOCK, 1, 1 },
	{ "eth_getBalance", H_BLOCK, 1, 1 },
	{ "eth_getBlockByHash", H_FOREVER, -1, 0 },
	{ "eth_getBlockByNumber", H_BLOCK, 0, 0 },
	{ "eth_getBlockReceipts", H_BLOCK, 0, 1 },
	{ "eth_getBlockTransactionCountByHash", H_FOREVER, -1, 0 },
	{ "eth_getBlockTransactionCountByNumber", H_BLOCK, 0, 0 },
	{ "eth_getCode", H_BLOCK, 1, 1 },
	{ "eth_getLogs", H_LOGS, 0, 0 },
	{ "eth_getProof", H_BLOCK, 2, 1 },
	{ "eth_getStorageAt", H_BLOCK, 2, 1 },
	{ "eth_getTransactionByBlockHashAndIndex", H_FOREVER, -1, 0 },
	{ "eth_getTransactionByBlockNumberAndIndex", H_BLOCK, 0, 0 },
	{ "eth_getTransactionByHash", H_RESULT, -1, 0 },
	{ "eth_getTransactionCount", H_BLOCK, 1, 1 },
	{ "eth_getTransactionReceipt", H_RESULT, -1, 0 },
	{ "eth_getUncleByBlockHashAndIndex", H_FOREVER, -1, 0 },
	{ "eth_getUncleByBlockNumberAndIndex", H_BLOCK, 0, 0 },
	{ "eth_getUncleCountByBlockHash", H_FOREVER, -1, 0 },
	{ "eth_getUncleCountByBlockNumber", H_BLOCK, 0, 0 },
	{ "eth_maxPriorityFeePerGas", H_NEAR_HEAD, -1, 0 },
	{ "net_version", H_FOREVER, -1, 0 },
};

/*
 * Solana, sorted likewise. A transaction or a block at finalized commitment never changes (a
 * node's default commitment is finalized); state at finalized follows the finalized slot, so
 * it is kept for cache_ttl_ms like EVM's "finalized" tag. At processed or confirmed nothing
 * is kept: a confirmed block can still be dropped. index is where the config object goes.
 */
static const struct cached_method sol_methods[] = {
	{ "getAccountInfo", H_SOL_STATE, 1, 0 },
	{ "getBalance", H_SOL_STATE, 1, 0 },
	{ "getBlock", H_SOL_FINAL, 1, 0 },
	{ "getBlockHeight", H_SOL_STATE, 0, 0 },
	{ "getEpochInfo", H_SOL_STATE, 0, 0 },
	{ "getGenesisHash", H_FOREVER, -1, 0 },
	{ "getLatestBlockhash", H_SOL_STATE, 0, 0 },
	{ "getMultipleAccounts", H_SOL_STATE, 1, 0 },
	{ "getProgramAccounts", H_SOL_STATE, 1, 0 },
	{ "getSlot", H_SOL_STATE, 0, 0 },
	{ "getTokenAccountBalance", H_SOL_STATE, 1, 0 },
	{ "getTokenAccountsByDelegate", H_SOL_STATE, 2, 0 },
	{ "getTokenAccountsByOwner", H_SOL_STATE, 2, 0 },
	{ "getTokenSupply", H_SOL_STATE, 1, 0 },
	{ "getTransaction", H_SOL_FINAL, 1, 0 },
	{ "getTransactionCount", H_SOL_STATE, 0, 0 },
};

/* For the unit tests: the table of kind and its size. */
const void	*bp_rpc_cache_methods_for_test(enum bp_chain_kind kind, size_t *n, size_t *stride);

const void *
bp_rpc_cache_methods_for_test(enum bp_chain_kind kind, size_t *n, size_t *stride)
{
	*n = kind == BP_CHAIN_SOLANA ? BP_NITEMS(sol_methods) : BP_NITEMS(methods);
	*stride = sizeof(methods[0]);
	return kind == BP_CHAIN_SOLANA ? sol_methods : methods;
}

static const struct cached_method *
find(const struct cached_method *tab, size_t ntab, const char *name, size_t len)
{
	size_t lo = 0, hi = ntab;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2, rl = strlen(tab[mid].name);
		int c = memcmp(tab[mid].name, name, rl < len ? rl : len);

		if (c == 0)
			c = rl < len ? -1 : rl > len;
		if (c == 0)
			return &tab[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * A block named by a JSON string s (the span v of text t, quotes included): a tag, a number or
 * (when hash_ok) a block hash.
 */
static enum bp_rpc_cache_rule
block_string(const char *t, struct bp_rpc_scan_span v, int hash_ok, int64_t *block)
{
	char buf[80];
	uint8_t h[32];
	uint64_t q;
	size_t n;

	if (v.len < 2 || t[v.off] != '"' || bp_rpc_scan_decode((const unsigned char *)t + v.off,
	    v.len, buf, sizeof(buf), &n) == -1)
		return BP_CACHE_NEVER;
	if ((n == 6 && memcmp(buf, "latest", 6) == 0) || (n == 4 && memcmp(buf, "safe", 4) == 0) ||
	    (n == 9 && memcmp(buf, "finalized", 9) == 0))
		return BP_CACHE_NEAR_HEAD;
	if (n == 8 && memcmp(buf, "earliest", 8) == 0) {
		*block = 0;
		return BP_CACHE_AT_BLOCK;
	}
	if (n == 66) {
		if (hash_ok && bp_hex_decode_fixed(buf, n, h, sizeof(h)) == 0)
			return BP_CACHE_FOREVER;
		return BP_CACHE_NEVER;
	}
	/* "pending" and anything else not understood is never kept. */
	if (bp_hex_quantity_strict(buf, n, &q) == -1 || q > (uint64_t)INT64_MAX)
		return BP_CACHE_NEVER;
	*block = (int64_t)q;
	return BP_CACHE_AT_BLOCK;
}

/*
 * A block argument: a string, or (where the parameter may be a hash, hash_ok) an EIP-1898
 * object {"blockNumber"} / {"blockHash"}. Where it may not (eth_getBlockByNumber,
 * eth_feeHistory, ...), 66 hex characters are a number some node may read with its leading
 * zeros, not a hash: never kept, lest a recent block's answer be kept for good.
 */
static enum bp_rpc_cache_rule
block_arg(const char *t, struct bp_rpc_scan_span e, int hash_ok, int64_t *block)
{
	struct bp_rpc_scan_span v, w;
	int bh, bn;

	if (t[e.off] == '"')
		return block_string(t, e, hash_ok, block);
	if (t[e.off] != '{' || !hash_ok)
		return BP_CACHE_NEVER;
	bh = bp_rpc_scan_member_strict(t + e.off, e.len, "blockHash", &v);
	bn = bp_rpc_scan_member_strict(t + e.off, e.len, "blockNumber", &w);
	if (bh < 0 || bn < 0 || bh + bn != 1)
		return BP_CACHE_NEVER;
	if (bn == 1) {
		w.off += e.off;
		return block_string(t, w, 0, block);
	}
	/* requireCanonical: the answer turns into an error if the block leaves the chain. */
	if (bp_rpc_scan_member(t + e.off, e.len, "requireCanonical", &w) != 0)
		return BP_CACHE_NEVER;
	v.off += e.off;
	return block_string(t, v, 1, block) == BP_CACHE_FOREVER ? BP_CACHE_FOREVER :
	    BP_CACHE_NEVER;
}

/* Combines the rules of a filter's two ends: the weaker wins; two blocks: the later one. */
static enum bp_rpc_cache_rule
both(enum bp_rpc_cache_rule a, int64_t na, enum bp_rpc_cache_rule b, int64_t nb, int64_t *block)
{
	if (a == BP_CACHE_NEVER || b == BP_CACHE_NEVER)
		return BP_CACHE_NEVER;
	if (a == BP_CACHE_AT_BLOCK && b == BP_CACHE_AT_BLOCK) {
		*block = na > nb ? na : nb;
		return BP_CACHE_AT_BLOCK;
	}
	if (a == BP_CACHE_FOREVER || b == BP_CACHE_FOREVER)	/* a hash where a number goes */
		return BP_CACHE_NEVER;
	return BP_CACHE_NEAR_HEAD;
}

/* An eth_getLogs filter: {"blockHash"} or {"fromBlock", "toBlock"} (each "latest" if absent). */
static enum bp_rpc_cache_rule
logs_filter(const char *t, struct bp_rpc_scan_span e, int64_t *block)
{
	enum bp_rpc_cache_rule rf = BP_CACHE_NEAR_HEAD, rt = BP_CACHE_NEAR_HEAD;
	struct bp_rpc_scan_span v;
	int64_t nf = 0, nt = 0;
	int bh, f, to;

	if (t[e.off] != '{')
		return BP_CACHE_NEVER;
	bh = bp_rpc_scan_member_strict(t + e.off, e.len, "blockHash", &v);
	f = bp_rpc_scan_member_strict(t + e.off, e.len, "fromBlock", &v);
	to = bp_rpc_scan_member_strict(t + e.off, e.len, "toBlock", &v);
	if (bh < 0 || f < 0 || to < 0)
		return BP_CACHE_NEVER;
	if (bh == 1) {
		if (f + to != 0)
			return BP_CACHE_NEVER;
		bp_rpc_scan_member(t + e.off, e.len, "blockHash", &v);
		v.off += e.off;
		return block_string(t, v, 1, block) == BP_CACHE_FOREVER ? BP_CACHE_FOREVER :
		    BP_CACHE_NEVER;
	}
	if (f == 1) {
		bp_rpc_scan_member(t + e.off, e.len, "fromBlock", &v);
		v.off += e.off;
		rf = block_string(t, v, 0, &nf);
	}
	if (to == 1) {
		bp_rpc_scan_member(t + e.off, e.len, "toBlock", &v);
		v.off += e.off;
		rt = block_string(t, v, 0, &nt);
	}
	return both(rf, nf, rt, nt, block);
}

/*
 * A Solana call's commitment: 1 finalized (named, or absent: a node's default), 0 anything
 * else (processed, confirmed, what is not understood). The config object is the params element
 * at index; none there is the default too. A config object a node could read two ways (a key
 * given twice) counts as not understood.
 */
static int
sol_finalized(const char *params, size_t plen, int index)
{
	struct bp_rpc_scan_iter it;
	struct bp_rpc_scan_span e, v;
	char buf[16];
	size_t n;
	int i = 0, r;

	if (plen == 0)
		return 1;
	if (params[0] != '[')
		return 0;	/* named params are not read */
	bp_rpc_scan_iter_init(&it, params, plen);
	while ((r = bp_rpc_scan_iter_next(&it, &e)) == 1 && i++ != index)
		;
	if (r == 0)
		return 1;	/* fewer params: no config */
	if (r != 1 || params[e.off] != '{')
		return 0;
	r = bp_rpc_scan_member_strict(params + e.off, e.len, "commitment", &v);
	if (r == 0)
		return 1;
	if (r != 1 || params[e.off + v.off] != '"' || bp_rpc_scan_decode((const unsigned char *)
	    params + e.off + v.off, v.len, buf, sizeof(buf), &n) == -1)
		return 0;
	return n == 9 && memcmp(buf, "finalized", 9) == 0;
}

enum bp_rpc_cache_rule
bp_rpc_cache_rule(enum bp_chain_kind kind, const char *method, size_t mlen, const char *params,
    size_t plen, int64_t *block)
{
	const struct cached_method *m;
	struct bp_rpc_scan_iter it;
	struct bp_rpc_scan_span e;
	int i = 0, r;

	if (kind == BP_CHAIN_SOLANA) {
		if ((m = find(sol_methods, BP_NITEMS(sol_methods), method, mlen)) == NULL)
			return BP_CACHE_NEVER;
		if (m->how == H_FOREVER)
			return BP_CACHE_FOREVER;
		if (!sol_finalized(params, plen, m->index))
			return BP_CACHE_NEVER;
		return m->how == H_SOL_FINAL ? BP_CACHE_FOREVER : BP_CACHE_NEAR_HEAD;
	}
	if (kind != BP_CHAIN_EVM || (m = find(methods, BP_NITEMS(methods), method, mlen)) == NULL)
		return BP_CACHE_NEVER;
	switch (m->how) {
	case H_FOREVER:
		return BP_CACHE_FOREVER;
	case H_NEAR_HEAD:
		return BP_CACHE_NEAR_HEAD;
	case H_RESULT:
		return BP_CACHE_RESULT_BLOCK;
	default:
		break;
	}
	/* Named params (an object) are not read: never kept. */
	if (plen == 0)
		return m->how == H_BLOCK && m->index > 0 ? BP_CACHE_NEAR_HEAD : BP_CACHE_NEVER;
	if (params[0] != '[')
		return BP_CACHE_NEVER;
	bp_rpc_scan_iter_init(&it, params, plen);
	while ((r = bp_rpc_scan_iter_next(&it, &e)) == 1)
		if (i++ == m->index)
			return m->how == H_LOGS ? logs_filter(params, e, block) :
			    block_arg(params, e, m->hash_ok, block);
	/* No block argument: the node reads "latest" (when the method has other params). */
	if (r == 0 && m->how == H_BLOCK && m->index > 0 && i == m->index)
		return BP_CACHE_NEAR_HEAD;
	return BP_CACHE_NEVER;
}

/* The span of s without the white space around it. */
static void
strip(const char **s, size_t *len)
{
	while (*len > 0 && (**s == ' ' || **s == '\t' || **s == '\r' || **s == '\n')) {
		(*s)++;
		(*len)--;
	}
	while (*len > 0 && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t' ||
	    (*s)[*len - 1] == '\r' || (*s)[*len - 1] == '\n'))
		(*len)--;
}

int64_t
bp_rpc_cache_keep(enum bp_rpc_cache_rule rule, int64_t block, const char *result, size_t rlen,
    int64_t finalized, int64_t ttl_ms)
{
	struct bp_rpc_scan_span v;
	int64_t ttl = ttl_ms > 0 ? ttl_ms * 1000 : 0;

	strip(&result, &rlen);
	if (rlen == 0 || (rlen == 4 && memcmp(result, "null", 4) == 0))
		return 0;
	switch (rule) {
	case BP_CACHE_FOREVER:
		return BP_CACHE_KEEP_FOREVER;
	case BP_CACHE_NEAR_HEAD:
		return ttl;
	case BP_CACHE_RESULT_BLOCK:
		/* A transaction or receipt: its block; none (pending) is never kept. */
		if (result[0] != '{' || bp_rpc_scan_member(result, rlen, "blockNumber", &v) != 1 ||
		    block_string(result, v, 0, &block) != BP_CACHE_AT_BLOCK)
			return 0;
		/* FALLTHROUGH */
	case BP_CACHE_AT_BLOCK:
		if (finalized >= 0 && block <= finalized)
			return BP_CACHE_KEEP_FOREVER;
		return ttl;
	default:
		return 0;
	}
}

int
bp_rpc_cache_key(struct bp_buf *scratch, const struct bp_network *net, const char *method,
    size_t mlen, const char *params, size_t plen, unsigned char key[32])
{
	bp_buf_reset(scratch);
	if (bp_buf_adds(scratch, net->chain) == -1 || bp_buf_add(scratch, ".", 1) == -1 ||
	    bp_buf_adds(scratch, net->network) == -1 || bp_buf_add(scratch, "", 1) == -1 ||
	    bp_buf_add(scratch, method, mlen) == -1 || bp_buf_add(scratch, "", 1) == -1 ||
	    bp_buf_add(scratch, params, plen) == -1)
		return -1;
	bp_sha256(scratch->data, scratch->len, key);
	return 0;
}

int
bp_rpc_cache_get(struct bp_db *db, const unsigned char key[32], int64_t now, struct bp_buf *out)
{
	static const char sql[] = "SELECT result, expires_at FROM rpc_cache WHERE key = ?1";
	struct bp_stmt *st;
	const void *p;
	size_t len;
	int hit = 0;

	if ((st = bp_db_stmt(db, sql)) == NULL || bp_stmt_blob(st, 1, key, 32) == -1)
		return 0;
	if (bp_stmt_step(st) == BP_DB_ROW) {
		int64_t exp = bp_col_int(st, 1);

		p = bp_col_blob(st, 0, &len);
		if ((exp == 0 || exp > now) && p != NULL && len > 0 &&
		    bp_buf_add(out, p, len) == 0)
			hit = 1;
	}
	bp_stmt_reset(st);
	return hit;
}

#define PUT_WAIT_US	2000	/* the longest a store waits for the write lock */

/* Each row's bytes beyond its result: key, names, numbers, index entries. */
#define ROW_OVERHEAD	160

/* Runs one statement that returns no rows; 0 or -1. */
static int
run(struct bp_stmt *st)
{
	enum bp_db_step s = st != NULL ? bp_stmt_step(st) : BP_DB_ERROR;

	if (st != NULL)
		bp_stmt_reset(st);
	return s == BP_DB_DONE ? 0 : -1;
}

/* Evicts the oldest eighth of the answers and recounts; within the writer's transaction. */
static int
evict(struct bp_db *db, int64_t entries)
{
	static const char del[] = "DELETE FROM rpc_cache WHERE key IN "
	    "(SELECT key FROM rpc_cache ORDER BY stored_at LIMIT ?1)";
	static const char recount[] = "UPDATE rpc_cache_size SET "
	    "entries = (SELECT count(*) FROM rpc_cache), "
	    "bytes = (SELECT coalesce(sum(size), 0) FROM rpc_cache) WHERE id = 1";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, del)) == NULL || bp_stmt_int(st, 1, entries / 8 + 1) == -1 ||
	    run(st) == -1)
		return -1;
	return run(bp_db_stmt(db, recount));
}

int
bp_rpc_cache_put(struct bp_db *db, const struct bp_config *cfg, const unsigned char key[32],
    const struct bp_network *net, const char *method, const char *result, size_t rlen,
    int64_t expires, int64_t now)
{
	static const char old_sql[] = "SELECT size FROM rpc_cache WHERE key = ?1";
	static const char put_sql[] = "INSERT INTO rpc_cache "
	    "(key, network, method, result, size, expires_at, stored_at) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (key) DO UPDATE SET "
	    "result = excluded.result, size = excluded.size, expires_at = excluded.expires_at, "
	    "stored_at = excluded.stored_at";
	static const char add_sql[] = "UPDATE rpc_cache_size SET entries = entries + ?1, "
	    "bytes = bytes + ?2 WHERE id = 1";
	static const char size_sql[] = "SELECT entries, bytes FROM rpc_cache_size WHERE id = 1";
	char name[2 * BP_NAME_MAX + 2];
	int64_t size = (int64_t)rlen + ROW_OVERHEAD, old = 0, entries = 0, bytes = 0;
	int existed = 0;
	struct bp_stmt *st;

	if (rlen == 0 || (int64_t)rlen > cfg->rpc_cache_max_item)
		return 0;
	snprintf(name, sizeof(name), "%s.%s", net->chain, net->network);
	/*
	 * Best effort: a store waits for the write lock no longer than PUT_WAIT_US (other stores
	 * hold it for tens of microseconds; the indexer's batches for tens of milliseconds), so a
	 * busy database costs a miss the store, never the client's time.
	 */
	if (bp_db_try_begin(db, PUT_WAIT_US) == -1)
		return -1;
	if ((st = bp_db_stmt(db, old_sql)) == NULL || bp_stmt_blob(st, 1, key, 32) == -1)
		goto fail;
	if (bp_stmt_step(st) == BP_DB_ROW) {
		existed = 1;
		old = bp_col_int(st, 0);
	}
	bp_stmt_reset(st);
	if ((st = bp_db_stmt(db, put_sql)) == NULL || bp_stmt_blob(st, 1, key, 32) == -1 ||
	    bp_stmt_text(st, 2, name) == -1 || bp_stmt_text(st, 3, method) == -1 ||
	    bp_stmt_blob(st, 4, result, rlen) == -1 || bp_stmt_int(st, 5, size) == -1 ||
	    bp_stmt_int(st, 6, expires) == -1 || bp_stmt_int(st, 7, now) == -1 || run(st) == -1)
		goto fail;
	if ((st = bp_db_stmt(db, add_sql)) == NULL || bp_stmt_int(st, 1, existed ? 0 : 1) == -1 ||
	    bp_stmt_int(st, 2, size - old) == -1 || run(st) == -1)
		goto fail;
	if ((st = bp_db_stmt(db, size_sql)) == NULL)
		goto fail;
	if (bp_stmt_step(st) == BP_DB_ROW) {
		entries = bp_col_int(st, 0);
		bytes = bp_col_int(st, 1);
	}
	bp_stmt_reset(st);
	if (bytes > cfg->rpc_cache_mb * 1024 * 1024 && evict(db, entries) == -1)
		goto fail;
	return bp_db_commit(db);
fail:
	bp_db_rollback(db);
	return -1;
}
