/*
 * ERC-20 token metadata (docs/tokens.md): name, symbol, decimals and totalSupply read from the
 * contract in one JSON-RPC batch and cached in SQLite (schema/005_tokens.sql, token_metadata,
 * owned here). name and symbol may be ABI strings or bytes32 (MKR-style), and may revert: the
 * token then answers with what is known (NULL). An address without code, or a contract without
 * decimals() and totalSupply(), is not a token.
 *
 * Name, symbol and decimals are read once; total_supply and the spam verdict (lib/token/spam.h) again
 * once older than [server] token_refresh_seconds. Thread-safe: callers give their own database
 * connection and chain context.
 */
#ifndef BP_TOKEN_H
#define BP_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "evm/u256.h"

struct bp_db;
struct bp_buf;
struct bp_chain;

#define BP_TOKEN_TEXT_MAX	129	/* name or symbol: longer ones are cut at 128 bytes */
#define BP_TOKEN_BATCH		20	/* tokens read per JSON-RPC batch (5 reads each) */

struct bp_token {
	char		contract[43];		/* lower case */
	char		name[BP_TOKEN_TEXT_MAX];
	char		symbol[BP_TOKEN_TEXT_MAX];
	int		has_name, has_symbol;	/* 0: unknown (reverted, not text): null */
	unsigned	decimals;
	struct bp_u256	total_supply;
	int		spam;			/* bits of enum bp_spam_reason; 0 none */
};

/* Results of bp_token_get_many per token. */
enum bp_token_found {
	BP_TOKEN_NONE,		/* 0: not an ERC-20 (no code, no decimals/totalSupply) */
	BP_TOKEN_OK,		/* 1 */
	BP_TOKEN_UNREAD,	/* 2: the chain did not answer for it */
};

/*
 * A thread's copy of fresh cache rows (BP_TOKEN_MEMO of them, by a hash of chain and contract):
 * a row is rewritten once it is stale or the indexer saw a mint or burn of its token
 * (bp_token_supply_changed), so a copy serves at most BP_TOKEN_MEMO_SECONDS before the row is
 * read again. One per thread; not shared.
 */
#define BP_TOKEN_MEMO	128
#define BP_TOKEN_MEMO_SECONDS	2	/* a copy is read again from its row after this */
struct bp_token_memo;

/* A new memo, owned by the caller (bp_token_memo_free), or NULL when out of memory. */
struct bp_token_memo	*bp_token_memo_new(void);
void			 bp_token_memo_free(struct bp_token_memo *);

/*
 * The metadata of the tokens contracts[0..n) (lower-case 0x strings) on net, from memo (may be
 * NULL) or the cache or, when missing or stale, from the chain in batches of BP_TOKEN_BATCH,
 * then cached. out[i] and found[i] (enum bp_token_found) are filled for each. now is Unix
 * seconds. Returns 0, or -1 on a database error (logged). No transaction is held across a
 * chain read.
 */
int	bp_token_get_many(struct bp_db *, struct bp_chain *, struct bp_token_memo *memo,
	    const struct bp_config *, const struct bp_network *net, const char *const contracts[],
	    size_t n, int64_t now, struct bp_token *out, int *found);

/*
 * The cached spam verdicts of contracts[0..n) (lower-case 0x strings) on chain
 * ("CHAIN.NETWORK"), whatever their age, from the cache only (no chain read): verdict[i] the
 * bits of enum bp_spam_reason, 0 when not spam, -1 when the contract was never read. Returns 0,
 * or -1 on a database error.
 */
int	bp_token_spam_known(struct bp_db *, const char *chain, const char *const contracts[],
	    size_t n, int *verdict);

/*
 * Marks the cached total supply (and spam verdict) of contracts[0..n) (lower-case 0x strings)
 * on chain ("CHAIN.NETWORK") stale, so the next read takes totalSupply() from the chain: the
 * indexer calls it after it has stored their mints and burns, in a small transaction of its
 * own after the store's. The memos of other processes follow within BP_TOKEN_MEMO_SECONDS.
 * Contracts not cached are skipped. Returns 0, or -1 on a database error.
 */
int	bp_token_supply_changed(struct bp_db *, const char *chain, const char *const contracts[],
	    size_t n);

/*
 * Decodes the return data of name() or symbol() (untrusted): an ABI string, or a bytes32 whose
 * text ends at the first NUL. Writes at most cap - 1 bytes and a NUL to out (a longer text is
 * cut; a NUL inside ends it). Returns 0, or -1 when the data is neither (out is then "").
 */
int	bp_token_decode_text(const uint8_t *data, size_t len, char *out, size_t cap);

/*
 * The chain key "CHAIN.NETWORK" of net into out (room for cap bytes; BP_INDEX_CHAIN_MAX is
 * enough). 0 or -1 when it does not fit.
 */
int	bp_token_chain_key(const struct bp_network *net, char *out, size_t cap);

/*
 * Appends the token metadata answer (SPEC.md section 2) of t on chain (the {chain} of the path)
 * to out: price (NULL: unknown) gives price_usd and market_cap_usd, logo (NULL: unknown)
 * logo_url. Returns 0, or -1 when out is full.
 */
struct bp_price;
int	bp_token_metadata_json(const struct bp_token *t, const char *chain,
	    const struct bp_price *price, const char *logo, struct bp_buf *out);

/* Appends ,"name":"text" (escaped) or, for text NULL, ,"name":null to b. 0, or -1 when full. */
int	bp_token_json_member(struct bp_buf *b, const char *name, const char *text);

#endif
