/*
 * Webhook matching (docs/webhooks.md, "Events"): the indexer's store hook (index_store.h). For
 * each stored block, inside the store's transaction, it records one webhook_events row per
 * (webhook, transaction or log, direction) that a webhook of the block's network matches, with
 * the whole envelope of SPEC.md format A fixed at once (evt_ id, data). A row is delivered only
 * once its block is at the network's confirmations depth (index_cursors.confirmed); a block a
 * reorg removes before that takes its undelivered rows with it (the hook's rollback), so a
 * reorg never sends an event twice.
 */
#ifndef BP_WEBHOOK_MATCH_H
#define BP_WEBHOOK_MATCH_H

#include <cjson/cJSON.h>

#include "index/index_store.h"

struct bp_config;

/*
 * The hook to put in struct bp_index_store_chain: block and rollback as index_store.h describes; arg
 * is the config (for the chain names). Stateless: one hook serves every network and thread.
 */
void	bp_webhook_match_hook(const struct bp_config *, struct bp_index_store_hook *out);

/* The hook's functions, for tests. */
int	bp_webhook_match_block(void *cfg, struct bp_db *db, const char *chain,
	    const struct bp_index_store_block *block);
int	bp_webhook_match_rollback(void *cfg, struct bp_db *db, const char *chain, int64_t number,
	    const char *hash);

/*
 * Format B's PENDING_TRANSACTION (cron/pending, in its own transaction): records an event per
 * transaction of txs (the node's transaction objects, eth_getTransactionByHash) that a
 * webhook of network chain with that type matches. 0 or -1.
 */
int	bp_webhook_match_pending(const struct bp_config *, struct bp_db *db, const char *chain,
	    const cJSON *txs);
/* Whether a webhook of network chain wants pending transactions: 1, 0, or -1 on error. */
int	bp_webhook_match_pending_wanted(struct bp_db *db, const char *chain);
/*
 * Whether a webhook of network chain wants INTERNAL_TRANSFER, so that the indexer fetches the
 * blocks' call traces (index_fetch.h) before its store step: 1, 0, or -1 on error.
 */
int	bp_webhook_match_traces_wanted(struct bp_db *db, const char *chain);

#endif
