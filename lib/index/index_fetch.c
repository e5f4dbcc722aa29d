/*
 * The indexer's fetch step (index_fetch.h): one batch of blocks, logs and receipts, checked for
 * continuity.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index_fetch.h"

#define HASH_STR	BP_BLOCKS_HASH_STR

void
bp_index_fetch_free(struct bp_index_fetch *b)
{
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
