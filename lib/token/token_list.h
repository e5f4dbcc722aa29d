/*
 * Token logos from a Uniswap-format token list (https://tokenlists.org; `[server] token_list`,
 * docs/tokens.md): {"tokens": [{"chainId": 1, "address": "0x...", "logoURI": "https://..."},
 * ...]}. Loaded once when a program starts, read-only afterwards, so any thread may look up.
 */
#ifndef BP_TOKEN_LIST_H
#define BP_TOKEN_LIST_H

#include <stddef.h>
#include <stdint.h>

#define BP_TOKEN_LIST_MAX_BYTES	(32 * 1024 * 1024)	/* the file, at most */
#define BP_TOKEN_LIST_URI_MAX	2048			/* a longer logoURI is left out */

struct bp_token_list;

/*
 * Parses the token list text (len bytes; from a file the operator gave, still checked: entries
 * without a whole chainId, a 0x address of 40 hex digits and an http(s):// or ipfs:// logoURI
 * are skipped). Returns the list, owned by the caller (bp_token_list_free), or NULL when the
 * text is not a JSON object with a "tokens" array (logged).
 */
struct bp_token_list	*bp_token_list_parse(const char *text, size_t len);

/* Reads and parses the file at path (at most BP_TOKEN_LIST_MAX_BYTES); NULL as above. */
struct bp_token_list	*bp_token_list_load(const char *path);

void			 bp_token_list_free(struct bp_token_list *);

/* The logo URI of contract (any case) on chain_id, or NULL; valid while the list is. */
const char		*bp_token_list_logo(const struct bp_token_list *, int64_t chain_id,
			    const char *contract);

/* The number of entries kept. */
size_t			 bp_token_list_size(const struct bp_token_list *);

#endif
