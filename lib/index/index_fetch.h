/*
 * The indexer's fetch step (docs/indexer.md, "One batch"): a batch of blocks with their logs
 * and receipts, read in one JSON-RPC batch (evm/blocks.h) and checked to be one piece of one
 * chain that continues the stored head.
 */
#ifndef BP_INDEX_FETCH_H
#define BP_INDEX_FETCH_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "evm/blocks.h"

/* A fetched batch: the answers, and each block's hash once checked. */
struct bp_index_fetch {
	struct bp_blocks_range	 r;		/* blocks r.from .. r.to, their logs and receipts */
	char			(*hashes)[BP_BLOCKS_HASH_STR];	/* r.n block hashes, lower-case */
	/* r.n call-trace arrays (bp_index_fetch_traces), or NULL: none fetched. Owned. */
	cJSON			**traces;
	int			 traces_flat;	/* trace_block's entries; else callTracer's */
};

/* Frees what b owns and zeroes it. */
void	bp_index_fetch_free(struct bp_index_fetch *b);

/*
 * Checks that b->r is one piece of one chain that continues the stored head (head, head_hash;
 * head_hash "" when nothing is stored): block numbers as asked, each parentHash the hash before
 * it, a transactions array in each block, receipts (when there are any) naming their block and
 * their transaction in the block's order, every log naming one of the blocks by number and hash.
 * Fills b->hashes (allocating it). Returns 0, 1 when the first block does not link to the stored
 * head (a reorg), or -1 with err set when the answer is inconsistent in itself or out of memory
 * (the chain moved while it was read: try again later). The node is not trusted.
 */
int	bp_index_fetch_check(struct bp_index_fetch *b, int64_t head, const char *head_hash, char *err,
	    size_t errlen);

/*
 * Fetches blocks [from, to] (bp_blocks_range) and checks them (bp_index_fetch_check against the
 * stored head). Returns what bp_index_fetch_check returns, or -1 with err set when the fetch failed;
 * *too_large is then set when the answer was over max_response. b is filled either way: the
 * caller frees it with bp_index_fetch_free.
 */
int	bp_index_fetch_batch(struct bp_blocks_src *, int64_t from, int64_t to, int64_t head,
	    const char *head_hash, struct bp_index_fetch *b, int *too_large, char *err, size_t errlen);

/*
 * The call traces of the checked blocks of b (bp_index_fetch_check returned 0), read outside
 * any database transaction in one JSON-RPC batch: trace_block (parity's flat entries, each
 * naming its block's hash, checked), or, from a node without it (geth),
 * debug_traceBlockByHash with the callTracer (by the hashes checked; one frame per
 * transaction, in order). Fills b->traces and b->traces_flat. Returns 0; 1 when the node
 * serves neither (-32601: no tracing); -1 with err set when no upstream answered or an answer
 * is malformed or of another block (try again later).
 */
int	bp_index_fetch_traces(struct bp_blocks_src *, struct bp_index_fetch *b, char *err,
	    size_t errlen);

#endif
