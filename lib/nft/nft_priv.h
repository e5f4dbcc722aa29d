/*
 * Inside the NFT resource (lib/nft/nft.c, lib/nft/nft_owned.c, lib/nft/nft_cache.c); not for other modules.
 * The context, and the rows of the caches of schema/006_nfts.sql, whose SQL lives in
 * lib/nft/nft_cache.c, the one writer of those tables.
 */
#ifndef BP_NFT_PRIV_H
#define BP_NFT_PRIV_H

#include <stdint.h>

#include "evm/address.h"
#include "evm/u256.h"
#include "index/index_read.h"

struct bp_db;
struct bp_config;
struct bp_upstream;
struct bp_chain;

/* The token standards, as ERC-165 tells them. */
enum bp_nft_std {
	BP_NFT_STD_NONE,	/* 0 */
	BP_NFT_STD_721,	/* 1 */
	BP_NFT_STD_1155,	/* 2 */
	BP_NFT_STD__MAX
};

/* Answers of GET owned kept per thread while their inputs stay put (nft_owned.c). */
#define BP_NFT_OWNED_SLOTS	8
struct bp_nft_owned_slot {
	char		key[160];	/* chain, owner, page, limit, exclude_spam */
	char		head_hash[BP_INDEX_HASH_STR];	/* the index's head when rendered */
	int64_t		head;
	int64_t		version;	/* the caches' version (bp_nft_cache_version) */
	uint64_t	used;
	char		*body;
	size_t		len;
};

struct bp_nft {
	const struct bp_config	*cfg;
	struct bp_upstream	*up;
	struct bp_chain		*chain;
	uint64_t		 tick;
	struct bp_nft_owned_slot owned[BP_NFT_OWNED_SLOTS];
};

/* A collection's cached row; strings malloc'd (NULL when unknown), bp_nft_coll_free frees. */
struct bp_nft_coll {
	int		 found;
	enum bp_nft_std	 standard;
	char		*name, *symbol, *contract_uri, *description, *image, *banner;
	int		 spam;		/* -1 not judged */
	char		 status[8];
	int64_t		 attempts, next_retry;
};

/* A token's cached metadata row, as struct bp_nft_coll. */
struct bp_nft_meta {
	int		 found;
	int		 ok;
	char		*token_uri, *name, *description, *image, *traits, *error;
	int64_t		 attempts, next_retry;
};

/* The strings a call works with: the chain key and the lower-case contract. */
struct bp_nft_names {
	char	chain[BP_INDEX_CHAIN_MAX];
	char	contract[BP_ADDR_STR_MAX];
	char	contract_cs[BP_ADDR_STR_MAX];
	char	token_id[BP_U256_DEC_MAX];
};

/* Rows of the caches (bp_nft_*_load fill them; bp_nft_*_free free their strings). */
int	bp_nft_coll_load(struct bp_db *, const struct bp_nft_names *, struct bp_nft_coll *);
int	bp_nft_coll_store(struct bp_db *, const struct bp_nft_names *, const struct bp_nft_coll *);
void	bp_nft_coll_free(struct bp_nft_coll *);
int	bp_nft_meta_load(struct bp_db *, const struct bp_nft_names *, struct bp_nft_meta *);
int	bp_nft_meta_store(struct bp_db *, const struct bp_nft_names *, const struct bp_nft_meta *);
void	bp_nft_meta_free(struct bp_nft_meta *);

/* chain's cache version: moved by every store above (0 before any); 0 or -1. */
int	bp_nft_cache_version(struct bp_db *, const char *chain, int64_t *version);

/* Where cron/nftmeta's walk stopped ("" and "": the beginning); 0 or -1. */
int	bp_nft_cursor_load(struct bp_db *, const char *chain, char *contract, char *token);
int	bp_nft_cursor_store(struct bp_db *, const char *chain, const char *contract,
	    const char *token);

/* For the owned list: a token's cached name and image (malloc'd or NULL); 0 or -1. */
int	bp_nft_cached_token(struct bp_db *, const char *chain, const char *contract,
	    const char *token_id, char **name, char **image);
/* A collection's cached name (malloc'd or NULL); 0 or -1. */
int	bp_nft_cached_collection(struct bp_db *, const char *chain, const char *contract,
	    char **name);
/* The contracts of chain judged spam: *list (malloc'd, free it), *n of them; 0 or -1. */
int	bp_nft_spam_contracts(struct bp_db *, const char *chain, char (**list)[BP_ADDR_STR_MAX],
	    size_t *n);

#endif
