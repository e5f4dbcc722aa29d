/*
 * The indexer's reorg step (docs/indexer.md, "Reorgs"): finding that the stored blocks are no
 * longer the chain's, walking back to the common ancestor, and rolling back what was stored
 * above it in one transaction: rows deleted, NFT ownership recomputed from the transfers that
 * remain, the store hook told of each removed block (index_store.h), the cursor moved.
 */
#ifndef BP_INDEX_REORG_H
#define BP_INDEX_REORG_H

#include <stddef.h>
#include <stdint.h>

#include "evm/blocks.h"
#include "index_store.h"

struct bp_db;

/*
 * Deletes everything stored above block ancestor and recomputes the ownership it touched, in one
 * transaction with the cursor (head ancestor, its stored hash or "", chain_head, one more reorg).
 * The hook's rollback function is called first for each stored block above ancestor, newest
 * first. Returns 0, or -1 on a database or hook failure (nothing changed).
 */
int	bp_index_reorg_rollback(struct bp_db *, const struct bp_index_store_chain *, int64_t ancestor,
	    int64_t chain_head);

/*
 * The stored head cur no longer is the chain's: walks back, comparing the stored hashes with
 * the chain's a few dozen blocks per batch, and rolls back (bp_index_reorg_rollback) to the highest
 * block on which they agree. When no stored block agrees (a reorg deeper than the retention),
 * everything stored is rolled back to just below the oldest stored block. 0, or -1 with err set.
 */
int	bp_index_reorg_walk(struct bp_db *, const struct bp_index_store_chain *, struct bp_blocks_src *,
	    const struct bp_index_store_cursor *cur, int64_t chain_head, char *err, size_t errlen);

/*
 * When the node's head is at or below the stored head: whether the chain's block at height
 * head is the one stored there. A different hash is a reorg (anvil's evm_revert followed by a
 * new block, a short reorg at the tip), which is then rolled back (bp_index_reorg_walk). A height with
 * nothing stored, or a block the node does not have, is not evidence. Returns 1 when a reorg was
 * rolled back, 0 when none was found, -1 with err set.
 */
int	bp_index_reorg_check_head(struct bp_db *, const struct bp_index_store_chain *,
	    struct bp_blocks_src *, const struct bp_index_store_cursor *cur, int64_t head, char *err,
	    size_t errlen);

#endif
