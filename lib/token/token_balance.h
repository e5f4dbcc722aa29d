/*
 * The token balance list of an address (docs/tokens.md, "Balances"): every ERC-20 contract the
 * index says the address has sent or received (index_read.h), its balanceOf read from the chain
 * at the index's head block through Multicall3 (or one JSON-RPC batch) for all holdings at once,
 * zero balances left out, metadata from lib/token/token.c, USD values from lib/token/price.c, logos from
 * the token list, ordered by USD value descending (unpriced last), then symbol, then contract,
 * and cut into pages.
 *
 * Ordering by USD value needs every holding's balance before a page can be cut, so one request
 * reads them all (at most [server] token_balances_max: past it, the holdings the owner chose
 * first and known spam last, and the answer says it was cut). The sorted list is
 * kept per thread, per address and head block hash, for BP_TOKEN_BALANCE_CACHE_SECONDS at most:
 * the next pages, and other requests at the same block, read nothing from the chain.
 */
#ifndef BP_TOKEN_BALANCE_H
#define BP_TOKEN_BALANCE_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"

struct bp_buf;
struct bp_chain;
struct bp_db;
struct bp_token_list;
struct bp_token_memo;

#define BP_TOKEN_BALANCE_CACHE		4	/* sorted lists kept per thread */
#define BP_TOKEN_BALANCE_CACHE_SECONDS	5	/* at most this old, even at the same block */
#define BP_TOKEN_BALANCE_CALLS		500	/* balanceOf calls per Multicall3 call */
#define BP_TOKEN_BALANCE_LAG		64	/* index head this far behind: read at latest */
#define BP_TOKEN_BALANCE_SCAN		100000	/* holdings ranked for the cut, at most */
#define BP_TOKEN_BALANCE_CHOSEN_TXS	10000	/* the owner's last transactions it looks at */

/* A thread's context for the tokens program: its chain reads and its list cache. */
struct bp_token_ctx;

/*
 * A context over cfg (borrowed; it must outlive the context). Returns it, owned by the caller
 * (bp_token_ctx_free), or NULL when out of memory.
 */
struct bp_token_ctx	*bp_token_ctx_new(const struct bp_config *cfg);
void			 bp_token_ctx_free(struct bp_token_ctx *);
/* The context's chain reader and metadata memo, for lib/token/token.c's calls. */
struct bp_chain		*bp_token_ctx_chain(struct bp_token_ctx *);
struct bp_token_memo	*bp_token_ctx_memo(struct bp_token_ctx *);

struct bp_token_balance_query {
	const struct bp_network	*net;		/* the network {chain} means for the key */
	const char		*chain;		/* {chain}, as the answer names it */
	uint8_t			 owner[20];
	int64_t			 page, limit;	/* checked by the caller: >= 1, 1..100 */
	int			 exclude_spam;
};

/*
 * Appends the token balance list answer (SPEC.md section 2, with `spam` on each entry) of q to
 * out. logos may be NULL. now is Unix seconds. Returns 0; 1 when the chain did not answer (a
 * read failed for want of a node, not by reverting); -1 on a database error or when out is
 * full (logged).
 */
int	bp_token_balances(struct bp_db *, struct bp_token_ctx *, const struct bp_config *,
	    const struct bp_token_list *logos, const struct bp_token_balance_query *q,
	    int64_t now, struct bp_buf *out);

/*
 * Compares two exact non-negative decimal strings ("12.5", "3", "0.0001") by value: <0, 0, >0.
 * For the order of USD values.
 */
int	bp_token_cmp_decimal(const char *a, const char *b);

#endif
