/*
 * The token symbols and decimals of webhook events (docs/webhooks.md): the matcher runs inside
 * the indexer's transaction and may not call the chain, so it records a token event with
 * symbol, decimals (and address_activity's asset) null and names the contract; before the
 * event's first attempt the worker reads symbol() and decimals() once per contract (cached in
 * webhook_tokens) and completes the body. A contract that does not answer them stays null.
 */
#ifndef BP_WEBHOOK_TOKEN_H
#define BP_WEBHOOK_TOKEN_H

#include <stddef.h>

struct bp_db;
struct bp_config;
struct bp_chain;

/*
 * Reads the tokens of up to max waiting events that are not known yet, then completes those
 * events' bodies. Returns the number of events completed, or -1 on a database error.
 */
int	bp_webhook_tokens_fill(struct bp_db *, const struct bp_config *, struct bp_chain *,
	    size_t max);

#endif
