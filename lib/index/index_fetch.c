/*
 * The indexer's fetch step (index_fetch.h): one batch of blocks, logs and receipts, checked for
 * continuity.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/rpc_client.h"
#include "index_fetch.h"

#define HASH_STR	BP_BLOCKS_HASH_STR

void
bp_index_fetch_free(struct bp_index_fetch *b)
{
	size_t i;

	for (i = 0; b->traces != NULL && i < b->r.n; i++)
		cJSON_Delete(b->traces[i]);
	free(b->traces);
	b->traces = NULL;
	bp_blocks_range_free(&b->r);
	free(b->hashes);
	b->hashes = NULL;
}

/* Checks that block i's receipts name its hash and its transactions, in order. 0 or -1. */
static int
check_receipts(const struct bp_index_fetch *b, size_t i, const cJSON *txs)
{
	const cJSON *r = b->r.receipts[i]->child, *t = txs->child;
	char th[HASH_STR], h[HASH_STR];

	for (; t != NULL && r != NULL; t = t->next, r = r->next) {
		if (bp_blocks_jhash(t, "hash", th) == -1 ||
		    bp_blocks_jhash(r, "transactionHash", h) == -1 || strcmp(th, h) != 0 ||
		    bp_blocks_jhash(r, "blockHash", h) == -1 || strcmp(h, b->hashes[i]) != 0)
			return -1;
	}
	return t != NULL || r != NULL ? -1 : 0;
}

/* Checks that every log names one of the blocks, by number and hash. 0 or -1. */
static int
check_logs(const struct bp_index_fetch *b)
{
	char h[HASH_STR];
	size_t j;

	for (j = 0; j < b->r.nlogs; j++) {
		const cJSON *l;

		cJSON_ArrayForEach(l, b->r.logs[j]) {
			uint64_t num;

			if (bp_blocks_jquantity(l, "blockNumber", &num) == -1 ||
			    (int64_t)num < b->r.from || (int64_t)num > b->r.to ||
			    bp_blocks_jhash(l, "blockHash", h) == -1 ||
			    strcmp(h, b->hashes[num - (uint64_t)b->r.from]) != 0)
				return -1;
		}
	}
	return 0;
}

int
bp_index_fetch_check(struct bp_index_fetch *b, int64_t head, const char *head_hash, char *err,
    size_t errlen)
{
	char parent[HASH_STR];
	size_t i;

	free(b->hashes);
	if ((b->hashes = calloc(b->r.n ? b->r.n : 1, sizeof(*b->hashes))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < b->r.n; i++) {
		const cJSON *blk = b->r.blocks[i], *txs;
		int64_t number = b->r.from + (int64_t)i;
		uint64_t num;

		if (bp_blocks_jquantity(blk, "number", &num) == -1 || num > INT64_MAX ||
		    (int64_t)num != number || bp_blocks_jhash(blk, "hash", b->hashes[i]) == -1 ||
		    bp_blocks_jhash(blk, "parentHash", parent) == -1) {
			snprintf(err, errlen, "block %lld: bad number, hash or parentHash",
			    (long long)number);
			return -1;
		}
		if (i == 0) {
			if (head_hash[0] != '\0' && head == b->r.from - 1 &&
			    strcmp(parent, head_hash) != 0)
				return 1;
		} else if (strcmp(parent, b->hashes[i - 1]) != 0) {
			snprintf(err, errlen, "block %lld does not link to %lld in one answer: the"
			    " chain moved; retrying", (long long)number, (long long)(number - 1));
			return -1;
		}
		txs = cJSON_GetObjectItemCaseSensitive(blk, "transactions");
		if (!cJSON_IsArray(txs)) {
			snprintf(err, errlen, "block %lld: no transactions array",
			    (long long)number);
			return -1;
		}
		if (b->r.receipts != NULL && b->r.receipts[i] != NULL &&
		    check_receipts(b, i, txs) == -1) {
			snprintf(err, errlen, "block %lld: receipts do not match the block;"
			    " retrying", (long long)number);
			return -1;
		}
	}
	if (check_logs(b) == -1) {
		snprintf(err, errlen, "a log of blocks %lld-%lld is not from the blocks fetched:"
		    " the chain moved; retrying", (long long)b->r.from, (long long)b->r.to);
		return -1;
	}
	return 0;
}

int
bp_index_fetch_batch(struct bp_blocks_src *src, int64_t from, int64_t to, int64_t head,
    const char *head_hash, struct bp_index_fetch *b, int *too_large, char *err, size_t errlen)
{
	memset(b, 0, sizeof(*b));
	if (bp_blocks_range(src, from, to, &b->r, too_large, err, errlen) == -1)
		return -1;
	return bp_index_fetch_check(b, head, head_hash, err, errlen);
}

/* Whether trace answer t of block i is a callTracer array: one frame per transaction. */
static int
frames_match(const struct bp_index_fetch *b, size_t i, const cJSON *t)
{
	const cJSON *txs = cJSON_GetObjectItemCaseSensitive(b->r.blocks[i], "transactions"), *x, *f;
	char th[HASH_STR], h[HASH_STR];

	if (!cJSON_IsArray(t) || cJSON_GetArraySize(t) != cJSON_GetArraySize(txs))
		return 0;
	for (f = t->child, x = txs->child; f != NULL && x != NULL; f = f->next, x = x->next) {
		if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(f, "result")))
			return 0;
		/* geth and anvil name the transaction; a node that does not is taken in order. */
		if (cJSON_GetObjectItemCaseSensitive(f, "txHash") != NULL &&
		    (bp_blocks_jhash(f, "txHash", h) == -1 || bp_blocks_jhash(x, "hash", th) == -1 ||
		    strcmp(h, th) != 0))
			return 0;
	}
	return 1;
}

/* Whether trace answer t of block i is a trace_block array, each entry of that block. */
static int
flat_match(const struct bp_index_fetch *b, size_t i, const cJSON *t)
{
	const cJSON *e;
	char h[HASH_STR];

	if (!cJSON_IsArray(t))
		return 0;
	cJSON_ArrayForEach(e, t)
		if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(e, "action")) ||
		    bp_blocks_jhash(e, "blockHash", h) == -1 || strcmp(h, b->hashes[i]) != 0)
			return 0;
	return 1;
}

/*
 * One batch of method for the n blocks of b: trace_block by number (its answers name their
 * block's hash, checked) or debug_traceBlockByHash. What bp_index_fetch_traces returns.
 */
static int
traces_batch(struct bp_blocks_src *src, struct bp_index_fetch *b, int flat, char *err,
    size_t errlen)
{
	const char *method = flat ? "trace_block" : "debug_traceBlockByHash";
	struct bp_rpc_client_call *calls;
	size_t i, n = b->r.n;
	int rc = -1;

	if ((calls = calloc(n, sizeof(*calls))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < n; i++) {
		char p[BP_BLOCKS_HASH_STR + 40];

		if (flat)
			snprintf(p, sizeof(p), "[\"0x%llx\"]", (unsigned long long)(b->r.from +
			    (int64_t)i));
		else
			snprintf(p, sizeof(p), "[\"%s\",{\"tracer\":\"callTracer\"}]", b->hashes[i]);
		calls[i].method = method;
		if ((calls[i].params = cJSON_Parse(p)) == NULL) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
	}
	if (bp_rpc_client_batch(src->up, src->net, calls, n) == 0 &&
	    calls[0].err.kind == BP_RPC_CLIENT_ERR_TRANSPORT) {
		snprintf(err, errlen, "traces of blocks %lld-%lld: %s", (long long)b->r.from,
		    (long long)b->r.to, calls[0].err.message);
		goto out;
	}
	for (i = 0; i < n; i++) {
		/* A node without the method; any other error (a block gone by now) is tried again. */
		if (calls[i].result == NULL && calls[i].err.kind == BP_RPC_CLIENT_ERR_RPC &&
		    (calls[i].err.code == -32601 || strcasestr(calls[i].err.message,
		    "method") != NULL)) {
			snprintf(err, errlen, "block %lld: %s: %s",
			    (long long)(b->r.from + (int64_t)i), method, calls[i].err.message);
			rc = 1;
			goto out;
		}
		if (!(flat ? flat_match(b, i, calls[i].result) :
		    frames_match(b, i, calls[i].result))) {
			snprintf(err, errlen, "block %lld: %s; retrying",
			    (long long)(b->r.from + (int64_t)i), calls[i].result == NULL ?
			    calls[i].err.message : "its call traces do not match it");
			goto out;
		}
		b->traces[i] = calls[i].result;
		calls[i].result = NULL;
	}
	b->traces_flat = flat;
	rc = 0;
out:
	bp_rpc_client_calls_free(calls, n);
	return rc;
}

int
bp_index_fetch_traces(struct bp_blocks_src *src, struct bp_index_fetch *b, char *err,
    size_t errlen)
{
	int rc;

	if ((b->traces = calloc(b->r.n, sizeof(*b->traces))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/*
	 * trace_block first: anvil, erigon, reth and nethermind keep what it answers (anvil: 1 ms
	 * a block of 20 transfers), where debug_traceBlockByHash replays the block (anvil: 110
	 * ms); geth has only the second.
	 */
	if ((rc = traces_batch(src, b, 1, err, errlen)) != 1)
		return rc;
	return traces_batch(src, b, 0, err, errlen);
}
