/*
 * indexer: follows the head of every configured EVM network and stores what later features need
 * (schema/002_indexer.sql, docs/indexer.md): blocks, transactions, ERC-20/721/1155 transfers,
 * ERC-20 holdings and NFT ownership, and the ERC-4337 events of the network's entry point.
 *
 * A pass does, for each network, at most one batch of index_batch blocks:
 *   1. eth_blockNumber;
 *   2. one JSON-RPC batch: eth_getBlockByNumber(n, true) for each block, eth_getLogs over the
 *      range (in pieces of at most logs_range blocks, each halved again when the node refuses
 *      it), eth_getBlockReceipts(n) for each block (status, gas used, contract created);
 *   3. checks that the answer is one chain: each block's parentHash is the hash before it (the
 *      first one the stored head's hash, else a reorg), every log and receipt names its block's
 *      hash and every receipt its transaction;
 *   4. one SQLite transaction: the rows, the holdings and the cursor, so a crash leaves no gap
 *      and no duplicate;
 *   5. pruning of raw blocks and transactions past index_retention_blocks, a bounded slice.
 * A reorg is found when the next block does not link to the stored head, or when the chain's
 * head block differs from the one stored at its height: the indexer walks back comparing stored
 * hashes with the chain's, deletes what it stored above the common ancestor, recomputes the
 * ownership those rows touched from the transfers that remain, and indexes forward again.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "db.h"
#include "evm/address.h"
#include "hex.h"
#include "evm/u256.h"
#include "index.h"
#include "jsonrpc.h"
#include "log.h"
#include "upstream.h"
#include "util.h"
#include "worker.h"

#define WALK_STEP	32		/* stored blocks compared per request while walking back */
#define PRUNE_SLICE	1000		/* blocks pruned at most per pass */
#define MIN_RETENTION	128		/* blocks kept beyond the confirmations, at least */
#define HASH_STR	BP_INDEX_HASH_STR
#define ADDR_STR	BP_INDEX_ADDR_STR

static const char zero_addr[] = "0x0000000000000000000000000000000000000000";

/* One indexed network. */
struct chain {
	const struct bp_network	*net;
	char			 key[BP_INDEX_CHAIN_MAX];	/* "ethereum.devnet" */
	uint8_t			 entry_point[20];
	int			 has_entry_point;
	int64_t			 batch;		/* blocks per batch */
	int64_t			 logs_range;	/* blocks per eth_getLogs; halved on refusal */
	int64_t			 retention;	/* 0 = keep everything */
	int			 receipts;	/* eth_getBlockReceipts is used (and works) */
	int			 fails;		/* failed passes in a row */
	int64_t			 retry_at;	/* monotonic us: skipped until then after a failure */
	char			 last_err[160];
	struct bp_upstream	*up;		/* the process's pool (the state's) */
};

struct state {
	struct bp_upstream *up;
	struct chain	 chains[BP_MAX_NETWORKS];
	size_t		 nchains;
	uint8_t		*data;		/* decoded log data, reused */
	size_t		 datacap;
};

/* The stored cursor of a chain. */
struct cursor {
	int64_t		head;
	char		hash[HASH_STR];
};

/* What one batch fetched: borrowed views into the JSON answers, which the batch owns. */
struct batch {
	int64_t		 from, to;	/* block range */
	size_t		 n;		/* to - from + 1 */
	struct bp_jsonrpc_call *calls;	/* the main batch, whose results the batch owns */
	size_t		 ncalls;
	cJSON		**extra;	/* results of split eth_getLogs calls */
	size_t		 nextra;
	const cJSON	**blocks;	/* n block objects */
	const cJSON	**receipts;	/* n receipt arrays, or NULLs */
	const cJSON	**logs;		/* arrays of logs, nlogs of them */
	size_t		 nlogs;
	size_t		 logscap;
	char		(*hashes)[HASH_STR];	/* n block hashes */
};

/* Counts of one batch, for the pass message and the benchmark. */
struct counts {
	int64_t		blocks, txs, logs, transfers, userops, malformed;
};

/* ---- small formatting helpers (the JSON readers are lib/index.h's bp_index_j*) ---- */

static void
addr_str(const uint8_t a[20], char out[ADDR_STR])
{
	bp_addr_format_lower(a, out, ADDR_STR);
}

static void
u256_str(const struct bp_u256 *v, char out[BP_U256_DEC_MAX])
{
	bp_u256_to_dec(v, out, BP_U256_DEC_MAX);
}

/*
 * Steps st, a statement without rows (INSERT, DELETE), once and resets it for its next use.
 * 0 when it ran, -1 when it failed (bp_stmt_step logged why).
 */
static int
stmt_run(struct bp_stmt *st)
{
	int rc = bp_stmt_step(st) == BP_DB_DONE ? 0 : -1;

	bp_stmt_reset(st);
	return rc;
}

/* ---- the cursor ---- */

static int
cursor_load(struct bp_db *db, struct chain *c, struct cursor *cur)
{
	static const char sql[] = "SELECT head, head_hash FROM index_cursors WHERE chain = ?";
	struct bp_stmt *st;
	enum bp_db_step r;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	r = bp_stmt_step(st);
	if (r == BP_DB_ROW) {
		cur->head = bp_col_int(st, 0);
		bp_strlcpy(cur->hash, bp_col_text(st, 1), sizeof(cur->hash));
	} else if (r == BP_DB_DONE) {
		/* A new chain starts at start_block; the cursor is the block before it. */
		cur->head = c->net->start_block - 1;
		cur->hash[0] = '\0';
	}
	bp_stmt_reset(st);
	return r == BP_DB_ERROR ? -1 : 0;
}

static int64_t
confirmed_of(const struct chain *c, int64_t head, int64_t chain_head)
{
	int64_t conf = chain_head - c->net->confirmations;

	if (conf > head)
		conf = head;
	return conf < -1 ? -1 : conf;
}

/*
 * Writes the cursor (inside the caller's transaction, or on its own). reorg adds one to the
 * reorg count. 0 or -1.
 */
static int
cursor_save(struct bp_db *db, const struct chain *c, const struct cursor *cur,
    int64_t chain_head, int reorg)
{
	static const char sql[] = "INSERT INTO index_cursors (chain, head, head_hash, chain_head,"
	    " confirmed, checked_at, reorgs) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
	    " ON CONFLICT(chain) DO UPDATE SET head = ?2, head_hash = ?3, chain_head = ?4,"
	    " confirmed = ?5, checked_at = ?6, reorgs = reorgs + ?7";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_int(st, 2, cur->head);
	bp_stmt_text(st, 3, cur->hash);
	bp_stmt_int(st, 4, chain_head);
	bp_stmt_int(st, 5, confirmed_of(c, cur->head, chain_head));
	bp_stmt_int(st, 6, (int64_t)time(NULL));
	bp_stmt_int(st, 7, reorg ? 1 : 0);
	return stmt_run(st);
}

/* ---- fetching ---- */

static void
batch_free(struct batch *b)
{
	size_t i;

	for (i = 0; i < b->ncalls; i++)
		cJSON_Delete(b->calls[i].result);
	free(b->calls);
	for (i = 0; i < b->nextra; i++)
		cJSON_Delete(b->extra[i]);
	free(b->extra);
	free(b->blocks);
	free(b->receipts);
	free(b->logs);
	free(b->hashes);
	memset(b, 0, sizeof(*b));
}

static int
batch_add_logs(struct batch *b, const cJSON *arr)
{
	if (b->nlogs == b->logscap) {
		size_t ncap = b->logscap ? b->logscap * 2 : 16;
		const cJSON **p = realloc(b->logs, ncap * sizeof(*p));

		if (p == NULL)
			return -1;
		b->logs = p;
		b->logscap = ncap;
	}
	b->logs[b->nlogs++] = arr;
	return 0;
}

static int
batch_keep(struct batch *b, cJSON *answer)
{
	cJSON **p = realloc(b->extra, (b->nextra + 1) * sizeof(*p));

	if (p == NULL) {
		cJSON_Delete(answer);
		return -1;
	}
	b->extra = p;
	b->extra[b->nextra++] = answer;
	return 0;
}

/* The params of eth_getLogs over [from, to]. */
static cJSON *
logs_params(int64_t from, int64_t to)
{
	char f[BP_HEX_QUANTITY64_MAX], t[BP_HEX_QUANTITY64_MAX];
	cJSON *params = cJSON_CreateArray(), *filter = cJSON_CreateObject();

	bp_hex_quantity_encode((uint64_t)from, f, sizeof(f));
	bp_hex_quantity_encode((uint64_t)to, t, sizeof(t));
	if (params == NULL || filter == NULL || cJSON_AddStringToObject(filter, "fromBlock",
	    f) == NULL || cJSON_AddStringToObject(filter, "toBlock", t) == NULL) {
		cJSON_Delete(params);
		cJSON_Delete(filter);
		return NULL;
	}
	cJSON_AddItemToArray(params, filter);
	return params;
}

/* The params [number, full] of eth_getBlockByNumber, or [number] (eth_getBlockReceipts). */
static cJSON *
block_params(int64_t n, int full)
{
	char q[BP_HEX_QUANTITY64_MAX];
	cJSON *params = cJSON_CreateArray();

	bp_hex_quantity_encode((uint64_t)n, q, sizeof(q));
	if (params == NULL || !cJSON_AddItemToArray(params, cJSON_CreateString(q)) ||
	    (full >= 0 && !cJSON_AddItemToArray(params, cJSON_CreateBool(full)))) {
		cJSON_Delete(params);
		return NULL;
	}
	return params;
}

/*
 * Whether a JSON-RPC error to eth_getLogs says the range or the result was too big, in the
 * words providers use (they state their caps only in message text; anchors.md): splitting the
 * range is then the answer.
 */
static int
logs_refused(const struct bp_jsonrpc_error *e)
{
	static const char *const words[] = { "too many", "range", "limit", "exceed",
	    "more than", "too large", "too big", "response size", "max", "timeout" };
	size_t i;

	if (e->kind == BP_JSONRPC_ERR_TRANSPORT)
		return strcasestr(e->message, "large") != NULL;
	if (e->kind != BP_JSONRPC_ERR_RPC)
		return 0;
	if (e->code == -32005 || e->code == -32614)
		return 1;
	for (i = 0; i < BP_NITEMS(words); i++)
		if (strcasestr(e->message, words[i]) != NULL)
			return 1;
	return 0;
}

/* Whether a JSON-RPC error says the method does not exist. */
static int
method_missing(const struct bp_jsonrpc_error *e)
{
	if (e->kind != BP_JSONRPC_ERR_RPC)
		return 0;
	return e->code == -32601 || strcasestr(e->message, "not supported") != NULL ||
	    strcasestr(e->message, "does not exist") != NULL ||
	    strcasestr(e->message, "not available") != NULL ||
	    strcasestr(e->message, "unsupported") != NULL;
}

/*
 * Fetches the logs of [from, to] on its own, halving the range while the node refuses it.
 * The results are kept in b. 0, or -1 with err set.
 */
static int
fetch_logs_split(struct chain *c, struct batch *b, int64_t from, int64_t to, char *err,
    size_t errlen)
{
	struct bp_jsonrpc_error e;
	cJSON *params, *res;
	int64_t mid;

	if ((params = logs_params(from, to)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	res = bp_jsonrpc_call(c->up, c->net, "eth_getLogs", params, &e);
	cJSON_Delete(params);
	if (res == NULL) {
		if (from == to || !logs_refused(&e)) {
			snprintf(err, errlen, "eth_getLogs %lld-%lld: %s", (long long)from,
			    (long long)to, e.message);
			return -1;
		}
		mid = from + (to - from) / 2;
		if (c->logs_range > mid - from + 1)
			c->logs_range = mid - from + 1;
		bp_info("%s: eth_getLogs %lld-%lld refused (%s); splitting, range now %lld",
		    c->key, (long long)from, (long long)to, e.message, (long long)c->logs_range);
		if (fetch_logs_split(c, b, from, mid, err, errlen) == -1)
			return -1;
		return fetch_logs_split(c, b, mid + 1, to, err, errlen);
	}
	if (batch_keep(b, res) == -1) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (!cJSON_IsArray(res)) {
		snprintf(err, errlen, "eth_getLogs %lld-%lld: the result is not an array",
		    (long long)from, (long long)to);
		return -1;
	}
	return batch_add_logs(b, res);
}

/*
 * Fetches blocks [from, to] with their transactions, their logs and (when on) their receipts
 * in one JSON-RPC batch. Returns 0, or -1 with err set; *too_large is set when the answer was
 * over max_response (a smaller batch may pass). b is filled (free with batch_free either way).
 */
static int
fetch_batch(struct chain *c, struct batch *b, int64_t from, int64_t to, int *too_large,
    char *err, size_t errlen)
{
	size_t nlogcalls, i, k, ngot;
	int64_t f;
	int rc = -1;

	*too_large = 0;
	memset(b, 0, sizeof(*b));
	b->from = from;
	b->to = to;
	b->n = (size_t)(to - from + 1);
	nlogcalls = (size_t)((to - from) / c->logs_range + 1);
	b->ncalls = b->n + nlogcalls + (c->receipts ? b->n : 0);
	b->calls = calloc(b->ncalls, sizeof(*b->calls));
	b->blocks = calloc(b->n, sizeof(*b->blocks));
	b->receipts = calloc(b->n, sizeof(*b->receipts));
	b->hashes = calloc(b->n, sizeof(*b->hashes));
	if (b->calls == NULL || b->blocks == NULL || b->receipts == NULL || b->hashes == NULL) {
		b->ncalls = 0;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	/* Calls: blocks 0..n-1, then the eth_getLogs pieces, then the receipts. */
	k = 0;
	for (i = 0; i < b->n; i++, k++) {
		b->calls[k].method = "eth_getBlockByNumber";
		b->calls[k].params = block_params(from + (int64_t)i, 1);
	}
	for (f = from; f <= to; f += c->logs_range, k++) {
		b->calls[k].method = "eth_getLogs";
		b->calls[k].params = logs_params(f, f + c->logs_range - 1 < to ?
		    f + c->logs_range - 1 : to);
	}
	for (i = 0; c->receipts && i < b->n; i++, k++) {
		b->calls[k].method = "eth_getBlockReceipts";
		b->calls[k].params = block_params(from + (int64_t)i, -1);
	}
	for (k = 0; k < b->ncalls; k++)
		if (b->calls[k].params == NULL) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
	ngot = bp_jsonrpc_batch(c->up, c->net, b->calls, b->ncalls);
	if (ngot == 0 && b->calls[0].err.kind == BP_JSONRPC_ERR_TRANSPORT) {
		*too_large = strcasestr(b->calls[0].err.message, "large") != NULL;
		snprintf(err, errlen, "blocks %lld-%lld: %s", (long long)from, (long long)to,
		    b->calls[0].err.message);
		goto out;
	}
	for (i = 0; i < b->n; i++) {
		const struct bp_jsonrpc_call *call = &b->calls[i];

		if (call->result == NULL || !cJSON_IsObject(call->result)) {
			snprintf(err, errlen, "block %lld: %s", (long long)(from + (int64_t)i),
			    call->result == NULL ? call->err.message : "not available yet");
			goto out;
		}
		b->blocks[i] = call->result;
	}
	k = b->n;
	for (f = from; f <= to; f += c->logs_range, k++) {
		const struct bp_jsonrpc_call *call = &b->calls[k];
		int64_t t = f + c->logs_range - 1 < to ? f + c->logs_range - 1 : to;

		if (call->result != NULL && cJSON_IsArray(call->result)) {
			if (batch_add_logs(b, call->result) == -1) {
				snprintf(err, errlen, "out of memory");
				goto out;
			}
			continue;
		}
		if (call->result != NULL || f == t || !logs_refused(&call->err)) {
			snprintf(err, errlen, "eth_getLogs %lld-%lld: %s", (long long)f,
			    (long long)t, call->result != NULL ? "the result is not an array" :
			    call->err.message);
			goto out;
		}
		if (fetch_logs_split(c, b, f, t, err, errlen) == -1)
			goto out;
	}
	for (i = 0; c->receipts && i < b->n; i++, k++) {
		const struct bp_jsonrpc_call *call = &b->calls[k];

		if (call->result == NULL && method_missing(&call->err)) {
			bp_warn("%s: the upstream has no eth_getBlockReceipts (%s): transactions"
			    " are stored without status from now on", c->key, call->err.message);
			c->receipts = 0;
			memset(b->receipts, 0, b->n * sizeof(*b->receipts));
			break;
		}
		if (call->result == NULL || !cJSON_IsArray(call->result)) {
			snprintf(err, errlen, "receipts of block %lld: %s",
			    (long long)(from + (int64_t)i), call->result == NULL ?
			    call->err.message : "not available yet");
			goto out;
		}
		b->receipts[i] = call->result;
	}
	rc = 0;
out:
	/* The params are ours; the results stay with the batch. */
	for (k = 0; k < b->ncalls; k++) {
		cJSON_Delete((cJSON *)b->calls[k].params);
		b->calls[k].params = NULL;
	}
	return rc;
}

/*
 * Checks that the batch is one piece of one chain that continues the stored head: returns 0,
 * 1 when the first block does not link to the stored head (a reorg), or -1 with err set when
 * the answer is inconsistent in itself (the chain moved while it was read; try again later).
 */
static int
check_batch(const struct chain *c, struct batch *b, const struct cursor *cur, char *err,
    size_t errlen)
{
	char parent[HASH_STR], h[HASH_STR];
	size_t i, j;

	for (i = 0; i < b->n; i++) {
		const cJSON *blk = b->blocks[i], *txs;
		uint64_t num;

		if (bp_index_jquantity(blk, "number", &num) == -1 ||
		    (int64_t)num != b->from + (int64_t)i ||
		    bp_index_jhash(blk, "hash", b->hashes[i]) == -1 ||
		    bp_index_jhash(blk, "parentHash", parent) == -1) {
			snprintf(err, errlen, "block %lld: bad number, hash or parentHash",
			    (long long)(b->from + (int64_t)i));
			return -1;
		}
		if (i == 0) {
			if (cur->hash[0] != '\0' && cur->head == b->from - 1 &&
			    strcmp(parent, cur->hash) != 0)
				return 1;
		} else if (strcmp(parent, b->hashes[i - 1]) != 0) {
			snprintf(err, errlen, "block %lld does not link to %lld in one answer: the"
			    " chain moved; retrying", (long long)(b->from + (int64_t)i),
			    (long long)(b->from + (int64_t)i - 1));
			return -1;
		}
		txs = cJSON_GetObjectItemCaseSensitive(blk, "transactions");
		if (!cJSON_IsArray(txs)) {
			snprintf(err, errlen, "block %lld: no transactions array",
			    (long long)(b->from + (int64_t)i));
			return -1;
		}
		if (b->receipts[i] != NULL) {
			const cJSON *r = b->receipts[i]->child, *t = txs->child;

			for (; t != NULL && r != NULL; t = t->next, r = r->next) {
				char th[HASH_STR];

				if (bp_index_jhash(t, "hash", th) == -1 ||
				    bp_index_jhash(r, "transactionHash", h) == -1 || strcmp(th, h) != 0 ||
				    bp_index_jhash(r, "blockHash", h) == -1 || strcmp(h, b->hashes[i]) != 0)
					break;
			}
			if (t != NULL || r != NULL) {
				snprintf(err, errlen, "block %lld: receipts do not match the block;"
				    " retrying", (long long)(b->from + (int64_t)i));
				return -1;
			}
		}
	}
	for (j = 0; j < b->nlogs; j++) {
		const cJSON *l;

		cJSON_ArrayForEach(l, b->logs[j]) {
			uint64_t num;

			if (bp_index_jquantity(l, "blockNumber", &num) == -1 ||
			    (int64_t)num < b->from || (int64_t)num > b->to ||
			    bp_index_jhash(l, "blockHash", h) == -1 ||
			    strcmp(h, b->hashes[num - (uint64_t)b->from]) != 0) {
				snprintf(err, errlen, "a log of blocks %lld-%lld is not from the"
				    " blocks fetched: the chain moved; retrying", (long long)b->from,
				    (long long)b->to);
				return -1;
			}
		}
	}
	(void)c;
	return 0;
}

/* ---- storing ---- */

static int
store_block(struct bp_db *db, const struct chain *c, const cJSON *blk, const char *hash,
    int64_t number, struct counts *n)
{
	static const char sql[] = "INSERT INTO index_blocks (chain, number, hash, parent_hash,"
	    " timestamp, gas_used, gas_limit, base_fee, tx_count)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
	char parent[HASH_STR], basefee[BP_U256_DEC_MAX];
	uint64_t ts, used, limit;
	struct bp_stmt *st;
	int ntx, rc;

	if (bp_index_jhash(blk, "parentHash", parent) == -1 ||
	    bp_index_jquantity(blk, "timestamp", &ts) == -1 ||
	    bp_index_jquantity(blk, "gasUsed", &used) == -1 ||
	    bp_index_jquantity(blk, "gasLimit", &limit) == -1 ||
	    ts > INT64_MAX || used > INT64_MAX || limit > INT64_MAX) {
		bp_err("%s: block %lld: bad header fields", c->key, (long long)number);
		return -1;
	}
	ntx = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(blk, "transactions"));
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_int(st, 2, number);
	bp_stmt_text(st, 3, hash);
	bp_stmt_text(st, 4, parent);
	bp_stmt_int(st, 5, (int64_t)ts);
	bp_stmt_int(st, 6, (int64_t)used);
	bp_stmt_int(st, 7, (int64_t)limit);
	bp_stmt_text(st, 8, bp_index_jdec(blk, "baseFeePerGas", basefee) == 0 ? basefee : NULL);
	bp_stmt_int(st, 9, ntx);
	rc = stmt_run(st);
	n->blocks++;
	return rc;
}

static int
store_tx(struct bp_db *db, const struct chain *c, const cJSON *tx, const cJSON *receipt,
    int64_t number, struct counts *n)
{
	static const char sql[] = "INSERT INTO index_transactions (chain, hash, block_number,"
	    " tx_index, from_addr, to_addr, value, nonce, status, gas_used, contract_created)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	char hash[HASH_STR], from[ADDR_STR], to[ADDR_STR], value[BP_U256_DEC_MAX];
	char created[ADDR_STR];
	uint64_t idx, nonce, status = 2, gas = 0;
	struct bp_stmt *st;
	int rc, have_gas = 0;

	if (bp_index_jhash(tx, "hash", hash) == -1 || bp_index_jaddr(tx, "from", from, 0) == -1 ||
	    bp_index_jaddr(tx, "to", to, 1) == -1 || bp_index_jdec(tx, "value", value) == -1 ||
	    bp_index_jquantity(tx, "transactionIndex", &idx) == -1 ||
	    bp_index_jquantity(tx, "nonce", &nonce) == -1 ||
	    idx > INT64_MAX || nonce > INT64_MAX) {
		bp_err("%s: a transaction of block %lld has bad fields", c->key, (long long)number);
		return -1;
	}
	created[0] = '\0';
	if (receipt != NULL) {
		/* Receipts before Byzantium carry a state root instead of a status. */
		if (bp_index_jquantity(receipt, "status", &status) == -1 || status > 1)
			status = 2;
		have_gas = bp_index_jquantity(receipt, "gasUsed", &gas) == 0 && gas <= INT64_MAX;
		if (bp_index_jaddr(receipt, "contractAddress", created, 1) == -1 || status == 0)
			created[0] = '\0';
	}
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_text(st, 2, hash);
	bp_stmt_int(st, 3, number);
	bp_stmt_int(st, 4, (int64_t)idx);
	bp_stmt_text(st, 5, from);
	bp_stmt_text(st, 6, to[0] ? to : NULL);
	bp_stmt_text(st, 7, value);
	bp_stmt_int(st, 8, (int64_t)nonce);
	if (status <= 1)
		bp_stmt_int(st, 9, (int64_t)status);
	if (have_gas)
		bp_stmt_int(st, 10, (int64_t)gas);
	bp_stmt_text(st, 11, created[0] ? created : NULL);
	rc = stmt_run(st);
	n->txs++;
	return rc;
}

static int
insert_transfer(struct bp_db *db, const struct chain *c, const struct bp_index_logpos *p,
    int64_t batch_index, const char *standard, const char *operator_, const char *from,
    const char *to, const char *token_id, const char *value)
{
	static const char sql[] = "INSERT INTO index_transfers (chain, block_number, tx_hash,"
	    " log_index, batch_index, standard, contract, from_addr, to_addr, token_id, value,"
	    " operator) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_int(st, 2, p->block);
	bp_stmt_text(st, 3, p->tx_hash);
	bp_stmt_int(st, 4, p->log_index);
	bp_stmt_int(st, 5, batch_index);
	bp_stmt_text(st, 6, standard);
	bp_stmt_text(st, 7, p->contract);
	bp_stmt_text(st, 8, from);
	bp_stmt_text(st, 9, to);
	bp_stmt_text(st, 10, token_id);
	bp_stmt_text(st, 11, value);
	bp_stmt_text(st, 12, operator_);
	return stmt_run(st);
}

static int
erc20_touch(struct bp_db *db, const struct chain *c, const char *owner, const char *contract,
    int64_t block)
{
	static const char sql[] = "INSERT OR IGNORE INTO index_erc20_holdings (chain, owner,"
	    " contract, first_block) VALUES (?, ?, ?, ?)";
	struct bp_stmt *st;

	if (strcmp(owner, zero_addr) == 0)
		return 0;
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_text(st, 2, owner);
	bp_stmt_text(st, 3, contract);
	bp_stmt_int(st, 4, block);
	return stmt_run(st);
}

/* Removes every owner row of one token of a standard. */
static int
owners_clear(struct bp_db *db, const struct chain *c, const char *contract, const char *id,
    const char *standard)
{
	static const char sql[] = "DELETE FROM index_nft_owners WHERE chain = ? AND contract = ?"
	    " AND token_id = ? AND standard = ?";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_text(st, 2, contract);
	bp_stmt_text(st, 3, id);
	bp_stmt_text(st, 4, standard);
	return stmt_run(st);
}

/* Sets owner's quantity of a token; "0" removes the row. */
static int
owner_set(struct bp_db *db, const struct chain *c, const char *contract, const char *id,
    const char *owner, const char *standard, const char *quantity, int64_t block)
{
	static const char put[] = "INSERT OR REPLACE INTO index_nft_owners (chain, contract,"
	    " token_id, owner, standard, quantity, block_number) VALUES (?, ?, ?, ?, ?, ?, ?)";
	static const char del[] = "DELETE FROM index_nft_owners WHERE chain = ? AND contract = ?"
	    " AND token_id = ? AND owner = ?";
	int zero = strcmp(quantity, "0") == 0;
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, zero ? del : put)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_text(st, 2, contract);
	bp_stmt_text(st, 3, id);
	bp_stmt_text(st, 4, owner);
	if (!zero) {
		bp_stmt_text(st, 5, standard);
		bp_stmt_text(st, 6, quantity);
		bp_stmt_int(st, 7, block);
	}
	return stmt_run(st);
}

/* owner's current ERC-1155 quantity of a token into *q (zero when none). 0 or -1. */
static int
owner_get(struct bp_db *db, const struct chain *c, const char *contract, const char *id,
    const char *owner, struct bp_u256 *q)
{
	static const char sql[] = "SELECT quantity FROM index_nft_owners WHERE chain = ?"
	    " AND contract = ? AND token_id = ? AND owner = ?";
	struct bp_stmt *st;
	enum bp_db_step r;
	const char *t;

	bp_u256_from_u64(q, 0);
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_text(st, 2, contract);
	bp_stmt_text(st, 3, id);
	bp_stmt_text(st, 4, owner);
	if ((r = bp_stmt_step(st)) == BP_DB_ROW) {
		t = bp_col_text(st, 0);
		if (bp_u256_from_dec(q, t, strlen(t)) == -1)
			bp_u256_from_u64(q, 0);
	}
	bp_stmt_reset(st);
	return r == BP_DB_ERROR ? -1 : 0;
}

/*
 * Adds (sign > 0) or takes (sign < 0) v from owner's ERC-1155 quantity. A quantity that would go
 * below zero (history before start_block) stays at zero.
 */
static int
owner_add(struct bp_db *db, const struct chain *c, const char *contract, const char *id,
    const char *owner, const struct bp_u256 *v, int sign, int64_t block)
{
	char dec[BP_U256_DEC_MAX];
	struct bp_u256 q;

	if (strcmp(owner, zero_addr) == 0)
		return 0;
	if (owner_get(db, c, contract, id, owner, &q) == -1)
		return -1;
	if (sign > 0)
		bp_u256_add(&q, &q, v);
	else if (bp_u256_sub(&q, &q, v) != 0)
		bp_u256_from_u64(&q, 0);
	u256_str(&q, dec);
	return owner_set(db, c, contract, id, owner, "erc1155", dec, block);
}

static int
store_1155(struct bp_db *db, const struct chain *c, const struct bp_index_logpos *p, int64_t bi,
    const char *op, const char *from, const char *to, const struct bp_u256 *id,
    const struct bp_u256 *v)
{
	char ids[BP_U256_DEC_MAX], vs[BP_U256_DEC_MAX];

	u256_str(id, ids);
	u256_str(v, vs);
	if (insert_transfer(db, c, p, bi, "erc1155", op, from, to, ids, vs) == -1 ||
	    owner_add(db, c, p->contract, ids, from, v, -1, p->block) == -1 ||
	    owner_add(db, c, p->contract, ids, to, v, 1, p->block) == -1)
		return -1;
	return 0;
}

static int
store_user_op(struct bp_db *db, const struct chain *c, const struct bp_index_logpos *p,
    const struct bp_index_event *ev)
{
	static const char sql[] = "INSERT INTO index_user_ops (chain, user_op_hash, sender,"
	    " paymaster, nonce, success, actual_gas_cost, actual_gas_used, tx_hash, block_number,"
	    " log_index) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	char h[HASH_STR], s[ADDR_STR], pm[ADDR_STR], nonce[BP_U256_DEC_MAX];
	char cost[BP_U256_DEC_MAX], used[BP_U256_DEC_MAX];
	struct bp_stmt *st;

	bp_hex_encode(ev->user_op_hash, 32, h, sizeof(h));
	addr_str(ev->sender, s);
	addr_str(ev->paymaster, pm);
	u256_str(&ev->nonce, nonce);
	u256_str(&ev->gas_cost, cost);
	u256_str(&ev->gas_used, used);
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_text(st, 2, h);
	bp_stmt_text(st, 3, s);
	bp_stmt_text(st, 4, pm);
	bp_stmt_text(st, 5, nonce);
	bp_stmt_int(st, 6, ev->success);
	bp_stmt_text(st, 7, cost);
	bp_stmt_text(st, 8, used);
	bp_stmt_text(st, 9, p->tx_hash);
	bp_stmt_int(st, 10, p->block);
	bp_stmt_int(st, 11, p->log_index);
	return stmt_run(st);
}

static int
store_deployment(struct bp_db *db, const struct chain *c, const struct bp_index_logpos *p,
    const struct bp_index_event *ev)
{
	static const char sql[] = "INSERT INTO index_account_deployments (chain, sender, factory,"
	    " paymaster, user_op_hash, tx_hash, block_number, log_index)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
	char h[HASH_STR], s[ADDR_STR], f[ADDR_STR], pm[ADDR_STR];
	struct bp_stmt *st;

	bp_hex_encode(ev->user_op_hash, 32, h, sizeof(h));
	addr_str(ev->sender, s);
	addr_str(ev->factory, f);
	addr_str(ev->paymaster, pm);
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_text(st, 2, s);
	bp_stmt_text(st, 3, f);
	bp_stmt_text(st, 4, pm);
	bp_stmt_text(st, 5, h);
	bp_stmt_text(st, 6, p->tx_hash);
	bp_stmt_int(st, 7, p->block);
	bp_stmt_int(st, 8, p->log_index);
	return stmt_run(st);
}

static int
store_log(struct bp_db *db, struct state *s, const struct chain *c, const cJSON *j,
    struct counts *n)
{
	char from[ADDR_STR], to[ADDR_STR], op[ADDR_STR], id[BP_U256_DEC_MAX];
	char v[BP_U256_DEC_MAX];
	struct bp_index_event ev;
	struct bp_index_log l;
	struct bp_index_logpos p;
	size_t i;

	memset(&p, 0, sizeof(p));
	if (bp_index_parse_log(j, &l, &p, &s->data, &s->datacap) == -1) {
		bp_err("%s: a log in the answer has bad fields", c->key);
		return -1;
	}
	n->logs++;
	switch (bp_index_decode_log(&l, c->has_entry_point ? c->entry_point : NULL, &ev)) {
	case BP_INDEX_OTHER:
		return 0;
	case BP_INDEX_MALFORMED:
		n->malformed++;
		bp_log(BP_LOG_DEBUG, "%s: skipping a malformed transfer log %s#%lld", c->key,
		    p.tx_hash, (long long)p.log_index);
		return 0;
	case BP_INDEX_ERC20:
		addr_str(ev.from, from);
		addr_str(ev.to, to);
		u256_str(&ev.value, v);
		n->transfers++;
		if (insert_transfer(db, c, &p, 0, "erc20", NULL, from, to, NULL, v) == -1 ||
		    erc20_touch(db, c, from, p.contract, p.block) == -1 ||
		    erc20_touch(db, c, to, p.contract, p.block) == -1)
			return -1;
		return 0;
	case BP_INDEX_ERC721:
		addr_str(ev.from, from);
		addr_str(ev.to, to);
		u256_str(&ev.id, id);
		n->transfers++;
		if (insert_transfer(db, c, &p, 0, "erc721", NULL, from, to, id, "1") == -1 ||
		    owners_clear(db, c, p.contract, id, "erc721") == -1)
			return -1;
		if (strcmp(to, zero_addr) != 0 &&
		    owner_set(db, c, p.contract, id, to, "erc721", "1", p.block) == -1)
			return -1;
		return 0;
	case BP_INDEX_ERC1155_SINGLE:
		addr_str(ev.operator_, op);
		addr_str(ev.from, from);
		addr_str(ev.to, to);
		n->transfers++;
		return store_1155(db, c, &p, 0, op, from, to, &ev.id, &ev.value);
	case BP_INDEX_ERC1155_BATCH:
		addr_str(ev.operator_, op);
		addr_str(ev.from, from);
		addr_str(ev.to, to);
		for (i = 0; i < ev.count; i++) {
			struct bp_u256 tid, tv;

			bp_index_batch_item(&ev, i, &tid, &tv);
			n->transfers++;
			if (store_1155(db, c, &p, (int64_t)i, op, from, to, &tid, &tv) == -1)
				return -1;
		}
		return 0;
	case BP_INDEX_USER_OP:
		n->userops++;
		return store_user_op(db, c, &p, &ev);
	case BP_INDEX_ACCOUNT_DEPLOYED:
		n->userops++;
		return store_deployment(db, c, &p, &ev);
	default:
		break;
	}
	return 0;
}

/* Writes the whole batch and the new cursor in one transaction. 0 or -1 (rolled back). */
static int
store_batch(struct bp_db *db, struct state *s, const struct chain *c, struct batch *b,
    int64_t chain_head, struct counts *n)
{
	struct cursor cur;
	size_t i, j;

	if (bp_db_begin(db) == -1)
		return -1;
	for (i = 0; i < b->n; i++) {
		const cJSON *blk = b->blocks[i], *tx, *r = NULL;
		int64_t num = b->from + (int64_t)i;

		if (store_block(db, c, blk, b->hashes[i], num, n) == -1)
			goto fail;
		if (b->receipts[i] != NULL)
			r = b->receipts[i]->child;
		cJSON_ArrayForEach(tx, cJSON_GetObjectItemCaseSensitive(blk, "transactions")) {
			if (store_tx(db, c, tx, r, num, n) == -1)
				goto fail;
			if (r != NULL)
				r = r->next;
		}
	}
	for (j = 0; j < b->nlogs; j++) {
		const cJSON *l;

		cJSON_ArrayForEach(l, b->logs[j]) {
			const cJSON *removed = cJSON_GetObjectItemCaseSensitive(l, "removed");

			if (cJSON_IsTrue(removed))
				continue;
			if (store_log(db, s, c, l, n) == -1)
				goto fail;
		}
	}
	cur.head = b->to;
	bp_strlcpy(cur.hash, b->hashes[b->n - 1], sizeof(cur.hash));
	if (cursor_save(db, c, &cur, chain_head, 0) == -1 || bp_db_commit(db) == -1)
		goto fail;
	return 0;
fail:
	bp_db_rollback(db);
	return -1;
}

/* ---- reorgs ---- */

/* A token (and for ERC-1155, a holder) whose ownership a rollback must recompute. */
struct affected {
	char	contract[ADDR_STR];
	char	id[BP_U256_DEC_MAX];
	char	owner[ADDR_STR];	/* ERC-1155 only */
	int	erc721;
};

/* Collects the tokens touched above block `above`. The list is the caller's to free. */
static int
collect_affected(struct bp_db *db, const struct chain *c, int64_t above, struct affected **out,
    size_t *nout)
{
	static const char sql[] = "SELECT DISTINCT contract, token_id, standard, from_addr"
	    " FROM index_transfers WHERE chain = ?1 AND block_number > ?2 AND standard != 'erc20'"
	    " UNION SELECT DISTINCT contract, token_id, standard, to_addr FROM index_transfers"
	    " WHERE chain = ?1 AND block_number > ?2 AND standard != 'erc20'";
	struct affected *list = NULL, *p;
	size_t n = 0, cap = 0;
	struct bp_stmt *st;
	enum bp_db_step r;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_int(st, 2, above);
	while ((r = bp_stmt_step(st)) == BP_DB_ROW) {
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			if ((p = realloc(list, cap * sizeof(*p))) == NULL) {
				r = BP_DB_ERROR;
				break;
			}
			list = p;
		}
		p = &list[n++];
		bp_strlcpy(p->contract, bp_col_text(st, 0), sizeof(p->contract));
		bp_strlcpy(p->id, bp_col_text(st, 1), sizeof(p->id));
		p->erc721 = strcmp(bp_col_text(st, 2), "erc721") == 0;
		bp_strlcpy(p->owner, bp_col_text(st, 3), sizeof(p->owner));
	}
	bp_stmt_reset(st);
	if (r == BP_DB_ERROR) {
		free(list);
		return -1;
	}
	*out = list;
	*nout = n;
	return 0;
}

/* Recomputes an ERC-721 token's owner from the transfers that remain. */
static int
recompute_721(struct bp_db *db, const struct chain *c, const struct affected *a)
{
	static const char sql[] = "SELECT to_addr, block_number FROM index_transfers"
	    " WHERE chain = ? AND contract = ? AND token_id = ? AND standard = 'erc721'"
	    " ORDER BY block_number DESC, log_index DESC LIMIT 1";
	char owner[ADDR_STR];
	struct bp_stmt *st;
	enum bp_db_step r;
	int64_t block = 0;

	if (owners_clear(db, c, a->contract, a->id, "erc721") == -1 ||
	    (st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_text(st, 2, a->contract);
	bp_stmt_text(st, 3, a->id);
	owner[0] = '\0';
	if ((r = bp_stmt_step(st)) == BP_DB_ROW) {
		bp_strlcpy(owner, bp_col_text(st, 0), sizeof(owner));
		block = bp_col_int(st, 1);
	}
	bp_stmt_reset(st);
	if (r == BP_DB_ERROR)
		return -1;
	if (owner[0] == '\0' || strcmp(owner, zero_addr) == 0)
		return 0;
	return owner_set(db, c, a->contract, a->id, owner, "erc721", "1", block);
}

/*
 * Recomputes one holder's ERC-1155 quantity from the transfers that remain, in block order, with
 * the same clamping at zero as the forward path.
 */
static int
recompute_1155(struct bp_db *db, const struct chain *c, const struct affected *a)
{
	static const char sql[] = "SELECT from_addr, to_addr, value, block_number"
	    " FROM index_transfers WHERE chain = ?1 AND contract = ?2 AND token_id = ?3"
	    " AND standard = 'erc1155' AND (from_addr = ?4 OR to_addr = ?4)"
	    " ORDER BY block_number, log_index, batch_index";
	char dec[BP_U256_DEC_MAX];
	struct bp_u256 q, v;
	struct bp_stmt *st;
	enum bp_db_step r;
	int64_t block = 0;

	if (strcmp(a->owner, zero_addr) == 0)
		return 0;
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_text(st, 2, a->contract);
	bp_stmt_text(st, 3, a->id);
	bp_stmt_text(st, 4, a->owner);
	bp_u256_from_u64(&q, 0);
	while ((r = bp_stmt_step(st)) == BP_DB_ROW) {
		const char *t = bp_col_text(st, 2);

		if (bp_u256_from_dec(&v, t, strlen(t)) == -1)
			continue;
		/* A self-transfer takes and gives back: net zero, as on the forward path. */
		if (strcmp(bp_col_text(st, 0), a->owner) == 0 && bp_u256_sub(&q, &q, &v) != 0)
			bp_u256_from_u64(&q, 0);
		if (strcmp(bp_col_text(st, 1), a->owner) == 0)
			bp_u256_add(&q, &q, &v);
		block = bp_col_int(st, 3);
	}
	bp_stmt_reset(st);
	if (r == BP_DB_ERROR)
		return -1;
	u256_str(&q, dec);
	return owner_set(db, c, a->contract, a->id, a->owner, "erc1155", dec, block);
}

/* The stored hash of block number into out; 1 when stored, 0 when not, -1 on error. */
static int
stored_hash(struct bp_db *db, const struct chain *c, int64_t number, char out[HASH_STR])
{
	static const char sql[] = "SELECT hash FROM index_blocks WHERE chain = ? AND number = ?";
	struct bp_stmt *st;
	enum bp_db_step r;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_int(st, 2, number);
	if ((r = bp_stmt_step(st)) == BP_DB_ROW)
		bp_strlcpy(out, bp_col_text(st, 0), HASH_STR);
	bp_stmt_reset(st);
	return r == BP_DB_ROW ? 1 : r == BP_DB_DONE ? 0 : -1;
}

/*
 * Deletes everything stored above block ancestor and recomputes the ownership it touched, in one
 * transaction with the cursor. 0 or -1.
 */
static int
rollback_to(struct bp_db *db, const struct chain *c, int64_t ancestor, int64_t chain_head)
{
	static const char *const dels[] = {
		"DELETE FROM index_blocks WHERE chain = ? AND number > ?",
		"DELETE FROM index_transactions WHERE chain = ? AND block_number > ?",
		"DELETE FROM index_transfers WHERE chain = ? AND block_number > ?",
		"DELETE FROM index_user_ops WHERE chain = ? AND block_number > ?",
		"DELETE FROM index_account_deployments WHERE chain = ? AND block_number > ?",
		/* first_block above the ancestor: no transfer at or below it touched the pair. */
		"DELETE FROM index_erc20_holdings WHERE chain = ? AND first_block > ?",
	};
	struct affected *aff = NULL;
	struct cursor cur;
	size_t naff = 0, i;
	int r;

	if (bp_db_begin(db) == -1)
		return -1;
	if (collect_affected(db, c, ancestor, &aff, &naff) == -1)
		goto fail;
	for (i = 0; i < BP_NITEMS(dels); i++) {
		struct bp_stmt *st = bp_db_stmt(db, dels[i]);

		if (st == NULL)
			goto fail;
		bp_stmt_text(st, 1, c->key);
		bp_stmt_int(st, 2, ancestor);
		if (stmt_run(st) == -1)
			goto fail;
	}
	for (i = 0; i < naff; i++)
		if ((aff[i].erc721 ? recompute_721(db, c, &aff[i]) :
		    recompute_1155(db, c, &aff[i])) == -1)
			goto fail;
	cur.head = ancestor;
	if ((r = stored_hash(db, c, ancestor, cur.hash)) == -1)
		goto fail;
	if (r == 0)
		cur.hash[0] = '\0';
	if (cursor_save(db, c, &cur, chain_head, 1) == -1 || bp_db_commit(db) == -1)
		goto fail;
	bp_warn("%s: reorg: rolled back to block %lld (%zu tokens' owners recomputed)", c->key,
	    (long long)ancestor, naff);
	free(aff);
	return 0;
fail:
	free(aff);
	bp_db_rollback(db);
	return -1;
}

/* The hashes the chain has now for blocks [lo, hi] (header-only reads), into out[hi-lo+1]. */
static int
chain_hashes(struct chain *c, int64_t lo, int64_t hi, char (*out)[HASH_STR], char *err,
    size_t errlen)
{
	size_t n = (size_t)(hi - lo + 1), i;
	struct bp_jsonrpc_call *calls;
	int rc = -1;

	if ((calls = calloc(n, sizeof(*calls))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < n; i++) {
		calls[i].method = "eth_getBlockByNumber";
		if ((calls[i].params = block_params(lo + (int64_t)i, 0)) == NULL) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
	}
	if (bp_jsonrpc_batch(c->up, c->net, calls, n) == 0 &&
	    calls[0].err.kind == BP_JSONRPC_ERR_TRANSPORT) {
		snprintf(err, errlen, "block hashes %lld-%lld: %s", (long long)lo, (long long)hi,
		    calls[0].err.message);
		goto out;
	}
	for (i = 0; i < n; i++) {
		/* A block the chain no longer has (the head went back) matches nothing. */
		if (!cJSON_IsObject(calls[i].result) ||
		    bp_index_jhash(calls[i].result, "hash", out[i]) == -1)
			out[i][0] = '\0';
	}
	rc = 0;
out:
	for (i = 0; i < n; i++) {
		cJSON_Delete((cJSON *)calls[i].params);
		cJSON_Delete(calls[i].result);
	}
	free(calls);
	return rc;
}

/*
 * The stored head no longer is the chain's: walks back WALK_STEP blocks at a time comparing the
 * stored hashes with the chain's, then rolls back to the highest block on which they agree.
 * When no stored block agrees (a reorg deeper than the retention), everything stored is rolled
 * back to just below the oldest stored block. 0 or -1.
 */
static int
handle_reorg(struct bp_db *db, struct chain *c, const struct cursor *cur, int64_t chain_head,
    char *err, size_t errlen)
{
	char theirs[WALK_STEP][HASH_STR], ours[HASH_STR];
	int64_t hi = cur->head, lo, n, ancestor = -2;
	int r;

	while (ancestor == -2) {
		lo = hi - WALK_STEP + 1 < 0 ? 0 : hi - WALK_STEP + 1;
		if (hi < 0) {
			ancestor = -1;
			break;
		}
		if (chain_hashes(c, lo, hi, theirs, err, errlen) == -1)
			return -1;
		for (n = hi; n >= lo; n--) {
			if ((r = stored_hash(db, c, n, ours)) == -1) {
				snprintf(err, errlen, "database error");
				return -1;
			}
			if (r == 0) {
				/* Below the stored blocks (pruned, or before start_block). */
				bp_warn("%s: reorg deeper than the stored blocks: rolling back to %lld",
				    c->key, (long long)n);
				ancestor = n;
				break;
			}
			if (theirs[n - lo][0] != '\0' && strcmp(ours, theirs[n - lo]) == 0) {
				ancestor = n;
				break;
			}
		}
		hi = lo - 1;
	}
	if (rollback_to(db, c, ancestor, chain_head) == -1) {
		snprintf(err, errlen, "database error while rolling back a reorg");
		return -1;
	}
	return 0;
}

/* ---- pruning ---- */

/* Deletes at most PRUNE_SLICE of the oldest raw blocks (and their transactions) past retention. */
static int
prune(struct bp_db *db, const struct chain *c, int64_t head)
{
	static const char oldest[] = "SELECT min(number) FROM index_blocks WHERE chain = ?";
	static const char delb[] = "DELETE FROM index_blocks WHERE chain = ? AND number <= ?";
	static const char delt[] = "DELETE FROM index_transactions WHERE chain = ?"
	    " AND block_number <= ?";
	int64_t keep, limit, lo;
	struct bp_stmt *st;
	int rc = -1;

	if (c->retention == 0)
		return 0;
	keep = c->retention;
	if (keep < c->net->confirmations + MIN_RETENTION)
		keep = c->net->confirmations + MIN_RETENTION;
	limit = head - keep;
	if ((st = bp_db_stmt(db, oldest)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	if (bp_stmt_step(st) != BP_DB_ROW || bp_col_is_null(st, 0)) {
		bp_stmt_reset(st);
		return 0;
	}
	lo = bp_col_int(st, 0);
	bp_stmt_reset(st);
	if (lo > limit)
		return 0;
	if (limit > lo + PRUNE_SLICE - 1)
		limit = lo + PRUNE_SLICE - 1;
	if (bp_db_begin(db) == -1)
		return -1;
	if ((st = bp_db_stmt(db, delb)) == NULL)
		goto out;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_int(st, 2, limit);
	if (bp_stmt_step(st) != BP_DB_DONE)
		goto out;
	if ((st = bp_db_stmt(db, delt)) == NULL)
		goto out;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_int(st, 2, limit);
	if (bp_stmt_step(st) != BP_DB_DONE)
		goto out;
	rc = bp_db_commit(db);
out:
	if (rc == -1)
		bp_db_rollback(db);
	return rc;
}

/* ---- one chain, one pass ---- */

/* The chain's current head block number. 0 or -1 with err set. */
static int
chain_head_of(struct chain *c, int64_t *head, char *err, size_t errlen)
{
	struct bp_jsonrpc_error e;
	cJSON *r;
	uint64_t v;
	int rc = -1;

	if ((r = bp_jsonrpc_call(c->up, c->net, "eth_blockNumber", NULL, &e)) == NULL) {
		snprintf(err, errlen, "eth_blockNumber: %s", e.message);
		return -1;
	}
	if (cJSON_IsString(r) && bp_hex_quantity_lenient(r->valuestring, strlen(r->valuestring),
	    &v) == 0 && v <= INT64_MAX) {
		*head = (int64_t)v;
		rc = 0;
	} else
		snprintf(err, errlen, "eth_blockNumber: bad answer");
	cJSON_Delete(r);
	return rc;
}

/*
 * Indexes one batch of chain c. Returns BP_WORKER_IDLE when caught up, BP_WORKER_MORE when more
 * blocks are ready, BP_WORKER_FAILED with err set. *n gets the counts.
 */
static int
index_chain(struct bp_worker_ctx *w, struct chain *c, struct counts *n, char *err,
    size_t errlen)
{
	struct state *s = w->state;
	struct cursor cur;
	struct batch b;
	int64_t head, to;
	int r;

	memset(&b, 0, sizeof(b));
	if (cursor_load(w->db, c, &cur) == -1) {
		snprintf(err, errlen, "database error");
		return BP_WORKER_FAILED;
	}
	if (chain_head_of(c, &head, err, errlen) == -1)
		return BP_WORKER_FAILED;
	if (head <= cur.head && cur.hash[0] != '\0') {
		/*
		 * Nothing new. Is the chain's head block the one stored at its height? A different
		 * hash is a reorg (anvil's evm_revert followed by a new block, or a short reorg at
		 * the tip). A node whose head is merely below ours (a lagging fallback upstream,
		 * the moment after evm_revert) is not: the blocks it lacks are not evidence, and
		 * the first block it adds above our head is checked against our head's hash.
		 */
		char theirs[1][HASH_STR], ours[HASH_STR];

		if ((r = stored_hash(w->db, c, head, ours)) == -1) {
			snprintf(err, errlen, "database error");
			return BP_WORKER_FAILED;
		}
		if (r == 1) {
			if (chain_hashes(c, head, head, theirs, err, errlen) == -1)
				return BP_WORKER_FAILED;
			if (theirs[0][0] != '\0' && strcmp(theirs[0], ours) != 0) {
				if (handle_reorg(w->db, c, &cur, head, err, errlen) == -1)
					return BP_WORKER_FAILED;
				return BP_WORKER_MORE;
			}
		}
		if (head < cur.head)
			bp_log(BP_LOG_DEBUG, "%s: the node's head %lld is below the index's %lld",
			    c->key, (long long)head, (long long)cur.head);
	}
	if (head <= cur.head) {
		if (cursor_save(w->db, c, &cur, head, 0) == -1) {
			snprintf(err, errlen, "database error");
			return BP_WORKER_FAILED;
		}
		return BP_WORKER_IDLE;
	}
	for (;;) {
		int too_large;

		to = cur.head + c->batch < head ? cur.head + c->batch : head;
		if (fetch_batch(c, &b, cur.head + 1, to, &too_large, err, errlen) == 0)
			break;
		batch_free(&b);
		if (!too_large || to == cur.head + 1)
			return BP_WORKER_FAILED;
		/* Blocks that do not fit max_response: smaller batches, for this process. */
		c->batch = (to - cur.head) / 2;
		bp_warn("%s: %s; index_batch now %lld", c->key, err, (long long)c->batch);
	}
	if ((r = check_batch(c, &b, &cur, err, errlen)) == -1)
		goto failed;
	if (r == 1) {
		batch_free(&b);
		if (handle_reorg(w->db, c, &cur, head, err, errlen) == -1)
			return BP_WORKER_FAILED;
		return BP_WORKER_MORE;
	}
	if (store_batch(w->db, s, c, &b, head, n) == -1) {
		snprintf(err, errlen, "database error while storing blocks %lld-%lld",
		    (long long)b.from, (long long)b.to);
		goto failed;
	}
	batch_free(&b);
	if (prune(w->db, c, to) == -1)
		bp_warn("%s: pruning failed; will try again", c->key);
	return to < head ? BP_WORKER_MORE : BP_WORKER_IDLE;
failed:
	batch_free(&b);
	return BP_WORKER_FAILED;
}

/* Appends to the pass message; it stays NUL-terminated when it fills up. */
static void
msg_add(char *msg, size_t msglen, size_t *off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
msg_add(char *msg, size_t msglen, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (*off >= msglen)
		return;
	va_start(ap, fmt);
	k = vsnprintf(msg + *off, msglen - *off, fmt, ap);
	va_end(ap);
	if (k > 0)
		*off += (size_t)k;
}

/*
 * One pass: a batch (at most) for each network. A network whose pass failed is skipped for a
 * while (1 s, doubling to 60 s) so that it cannot hold up the others; the pass is then recorded
 * as failed while the healthy networks decide when the next one runs.
 */
static int
indexer_pass(struct bp_worker_ctx *w, char *msg, size_t msglen)
{
	struct state *s = w->state;
	int any_more = 0, any_ok = 0, any_failed = 0;
	size_t i, off = 0;

	msg[0] = '\0';
	for (i = 0; i < s->nchains && !bp_worker_stopping(); i++) {
		struct chain *c = &s->chains[i];
		int64_t now = bp_mono_us();
		struct counts n;
		char err[512];
		int r;

		if (off > 0)
			msg_add(msg, msglen, &off, "; ");
		if (c->retry_at > now) {
			any_failed = 1;
			msg_add(msg, msglen, &off, "%s: retry in %llds after: %s", c->key,
			    (long long)((c->retry_at - now) / 1000000 + 1), c->last_err);
			continue;
		}
		memset(&n, 0, sizeof(n));
		err[0] = '\0';
		r = index_chain(w, c, &n, err, sizeof(err));
		if (r == BP_WORKER_FAILED) {
			int64_t wait_s = c->fails < 6 ? INT64_C(1) << c->fails : 60;

			bp_err("%s: %s", c->key, err);
			c->fails++;
			c->retry_at = now + wait_s * 1000000;
			bp_strlcpy(c->last_err, err, sizeof(c->last_err));
			any_failed = 1;
			msg_add(msg, msglen, &off, "%s: %s", c->key, err);
			continue;
		}
		c->fails = 0;
		c->retry_at = 0;
		any_ok = 1;
		any_more |= r == BP_WORKER_MORE;
		if (n.blocks > 0) {
			bp_log(BP_LOG_DEBUG, "%s: %lld blocks, %lld txs, %lld logs, %lld transfers,"
			    " %lld 4337 events, %lld malformed", c->key, (long long)n.blocks,
			    (long long)n.txs, (long long)n.logs, (long long)n.transfers,
			    (long long)n.userops, (long long)n.malformed);
			msg_add(msg, msglen, &off, "%s: +%lld blocks, %lld logs", c->key,
			    (long long)n.blocks, (long long)n.logs);
		} else
			msg_add(msg, msglen, &off, "%s: up to date", c->key);
	}
	if (s->nchains == 0)
		snprintf(msg, msglen, "no evm networks to index");
	if (any_failed && !any_ok)
		return BP_WORKER_FAILED;
	w->failed = any_failed;
	return any_more ? BP_WORKER_MORE : BP_WORKER_IDLE;
}

static int
indexer_init(struct bp_worker_ctx *w)
{
	struct state *s;
	size_t i;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -1;
	w->state = s;
	if ((s->up = bp_upstream_new(w->cfg)) == NULL)
		return -1;
	for (i = 0; i < w->cfg->nnets; i++) {
		const struct bp_network *net = &w->cfg->nets[i];
		struct chain *c;

		if (net->kind != BP_CHAIN_EVM || !net->index)
			continue;
		c = &s->chains[s->nchains];
		c->net = net;
		snprintf(c->key, sizeof(c->key), "%s.%s", net->chain, net->network);
		if (net->entry_point[0] != '\0' && bp_addr_parse(net->entry_point,
		    strlen(net->entry_point), 0, c->entry_point) == 0)
			c->has_entry_point = 1;
		c->batch = net->index_batch;
		c->logs_range = net->index_logs_range < net->index_batch ? net->index_logs_range :
		    net->index_batch;
		c->retention = net->index_retention_blocks;
		c->receipts = net->index_receipts;
		c->up = s->up;
		s->nchains++;
	}
	return 0;
}

static void
indexer_fini(struct bp_worker_ctx *w)
{
	struct state *s = w->state;

	if (s == NULL)
		return;
	bp_upstream_free(s->up);
	free(s->data);
	free(s);
	w->state = NULL;
}

static const struct bp_worker_def indexer = {
	"indexer", indexer_init, indexer_pass, indexer_fini,
};

int
main(int argc, char *argv[])
{
	return bp_worker_main(&indexer, argc, argv);
}
