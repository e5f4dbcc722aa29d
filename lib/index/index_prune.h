/*
 * The indexer's prune step (docs/indexer.md, "Pruning"): raw blocks and transactions older than
 * the retention are deleted, a bounded slice per pass. Transfers, holdings, NFT owners and the
 * ERC-4337 tables are kept whole.
 */
#ifndef BP_INDEX_PRUNE_H
#define BP_INDEX_PRUNE_H

#include <stdint.h>

#include "index_store.h"

struct bp_db;

#define BP_INDEX_PRUNE_SLICE		1000	/* blocks pruned at most per call */
#define BP_INDEX_PRUNE_MIN_KEEP	128	/* blocks kept beyond the confirmations, at least */

/*
 * Deletes, in one transaction, at most BP_INDEX_PRUNE_SLICE of the oldest stored blocks (and their
 * transactions) that are more than retention blocks below head; retention is raised to
 * confirmations + BP_INDEX_PRUNE_MIN_KEEP when below it, and 0 keeps everything. Returns 0 (also when
 * there was nothing to prune), or -1 on a database error (nothing deleted).
 */
int	bp_index_prune(struct bp_db *, const struct bp_index_store_chain *, int64_t retention, int64_t head);

#endif
