/*
 * The token symbols and decimals of webhook events (docs/webhooks.md): the matcher runs inside
 * the indexer's transaction and may not call the chain, so it records a token event with
 * symbol, decimals (and address_activity's asset) null and names the contract; before the
 * event's first attempt the worker reads symbol() and decimals() once per contract (cached in
 * webhook_tokens) and completes the body. A contract that does not answer them stays null.
 * Format B's NFT_ACTIVITY waits the same way, for its metadata from the NFT cache.
 */
#ifndef BP_WEBHOOK_TOKEN_H
#define BP_WEBHOOK_TOKEN_H

#include <stddef.h>

struct bp_db;
struct bp_config;
struct bp_chain;

struct bp_buf;

/*
 * Format B's NFT_ACTIVITY metadata, from the NFT module's cache, which lib/webhook may not read
 * (scripts/layers.sh): the worker above both gives it. fn appends the metadata of token_id
 * (decimal) of contract (0x hex) on network ("ethereum.mainnet") to out, a JSON object or
 * null; 0 or -1.
 */
struct bp_webhook_nft_meta {
	int	(*fn)(void *arg, struct bp_db *, const char *network, const char *contract,
		    const char *token_id, struct bp_buf *out);
	void	*arg;
};

/*
 * Reads the tokens of up to max waiting events that are not known yet, then completes those
 * events' bodies: symbols and decimals, and (meta not NULL) format B's NFT metadata, null
 * when the cache has none then. Returns the number of events completed, or -1 on a database
 * error.
 */
int	bp_webhook_tokens_fill(struct bp_db *, const struct bp_config *, struct bp_chain *,
	    const struct bp_webhook_nft_meta *meta, size_t max);

#endif
