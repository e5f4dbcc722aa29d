/*
 * The NFT resource (SPEC.md sections 2 and 4, "NFTs"; docs/nfts.md): token metadata, collection
 * metadata and the NFTs an address owns. Chain reads (ERC-165 supportsInterface, ownerOf,
 * tokenURI/uri, name, symbol, totalSupply, contractURI) go through lib/evm/chain.h, the metadata
 * documents through the one SSRF-safe fetcher (lib/net/fetch.h), ownership through the indexer's
 * readers (lib/index/index_read.h). This module owns the caches of schema/006_nfts.sql.
 *
 * A context holds no request state: the upstream pool and chain context of one thread.
 */
#ifndef BP_NFT_H
#define BP_NFT_H

#include <stdint.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/error.h"
#include "evm/u256.h"

struct bp_db;
struct bp_nft;

/*
 * A context for cfg (borrowed; it must outlive the context): its own upstream pool. Returns it,
 * owned by the caller (bp_nft_free), or NULL after logging why.
 */
struct bp_nft	*bp_nft_new(const struct bp_config *cfg);
void		 bp_nft_free(struct bp_nft *);

/*
 * GET /v1/nfts/{chain}/metadata/{contract}/{token_id}: appends the answer to out. The metadata
 * comes from the cache, or is fetched now when the cache has none for the current tokenURI and
 * no backoff is running; a failed fetch answers with null metadata. Returns 0, or -1 with err
 * (404 for a contract that is neither ERC-721 nor ERC-1155 or a token that does not exist, 500
 * when the node or the database failed).
 */
int		 bp_nft_metadata(struct bp_nft *, struct bp_db *, const struct bp_network *,
		    const uint8_t contract[20], const struct bp_u256 *token_id, struct bp_buf *out,
		    struct bp_error *err);

/*
 * The cached metadata of a token, from the cache only (never a fetch: a webhook's delivery
 * must not wait on a token's server), appended to out as {name, description, image,
 * imageGatewayUrl, traits}, or null when the cache has no good document for it. Returns 0, or
 * -1 on a database error or out of memory.
 */
int		 bp_nft_cached_metadata(const struct bp_config *, struct bp_db *,
		    const struct bp_network *, const uint8_t contract[20],
		    const struct bp_u256 *token_id, struct bp_buf *out);

/* GET /v1/nfts/{chain}/collection/{contract}: as bp_nft_metadata. */
int		 bp_nft_collection(struct bp_nft *, struct bp_db *, const struct bp_network *,
		    const uint8_t contract[20], struct bp_buf *out, struct bp_error *err);

/*
 * GET /v1/nfts/{chain}/owned/{address}: page (from 1) of limit entries from the index and the
 * caches only (never a chain read or a fetch); with exclude_spam, collections judged spam are
 * left out of the entries and the total. Returns 0, or -1 with err (500).
 */
int		 bp_nft_owned(struct bp_nft *, struct bp_db *, const struct bp_network *,
		    const uint8_t owner[20], int64_t page, int64_t limit, int exclude_spam,
		    struct bp_buf *out, struct bp_error *err);

/*
 * cron/nftmeta: one pass over net's indexed tokens from where the last pass stopped, looking at
 * most scan tokens and fetching the metadata of at most max of those the cache lacks (or whose
 * backoff is over). Returns the number fetched (successfully or not), or -1 on a database error.
 */
int		 bp_nft_fill(struct bp_nft *, struct bp_db *, const struct bp_network *,
		    int scan, int max);

#endif
