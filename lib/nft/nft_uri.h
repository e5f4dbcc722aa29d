/*
 * NFT URIs (docs/nfts.md): what a tokenURI/uri/contractURI or an image field of untrusted
 * metadata means as something to fetch or show. ipfs://CID/path, ipfs://ipfs/CID/path and bare
 * CIDs (v0 "Qm" + 44 base58 characters, v1 "b" + base32) go through the IPFS gateway, ar://ID
 * through the Arweave gateway, data:application/json[;base64], is decoded in place, and http(s)
 * URLs are used as they are. ERC-1155's {id} becomes 64 lower-case hex digits (EIP-1155,
 * "Metadata").
 *
 * Pure functions over pointer + length: no network, no allocation beyond the output buffer,
 * thread-safe. Everything here parses untrusted text (tests/fuzz/fuzz_nft_uri.c).
 */
#ifndef BP_NFT_URI_H
#define BP_NFT_URI_H

#include <stddef.h>

#include "core/buf.h"
#include "evm/u256.h"

#define BP_NFT_URI_MAX		4096		/* longest URL we fetch or answer */
#define BP_NFT_DATA_MAX		(1024 * 1024)	/* largest data: document decoded */
#define BP_NFT_IPFS_GATEWAY	"https://ipfs.io/ipfs/"
#define BP_NFT_AR_GATEWAY	"https://arweave.net/"

/* The gateways a deployment configured ([server] ipfs_gateway, arweave_gateway). */
struct bp_nft_gateways {
	const char	*ipfs;		/* ends with '/' or not: one is added */
	const char	*arweave;
};

enum bp_nft_uri_kind {
	BP_NFT_URI_BAD = -1,	/* empty, another scheme, a control byte, too long, bad data: */
	BP_NFT_URI_URL = 0,	/* out holds the http(s) URL to fetch */
	BP_NFT_URI_DATA = 1,	/* out holds the decoded document (data: JSON) */
};

/*
 * Resolves uri[0..len) (leading and trailing ASCII spaces ignored) into out (reset first; its
 * cap bounds the result). Returns the kind; on BP_NFT_URI_BAD out is empty.
 */
enum bp_nft_uri_kind	bp_nft_uri_resolve(const char *uri, size_t len,
			    const struct bp_nft_gateways *, struct bp_buf *out);

/*
 * The HTTP URL an image field means (image_gateway_url): the same mapping as
 * bp_nft_uri_resolve for ipfs, ar, bare CIDs and http(s). Returns 0 with the URL in out, or -1
 * (out empty) for anything else, data: images included (they have no HTTP URL).
 */
int			bp_nft_image_url(const char *uri, size_t len,
			    const struct bp_nft_gateways *, struct bp_buf *out);

/*
 * Replaces every "{id}" of uri[0..len) with id as 64 lower-case hex digits, into out (reset
 * first). Returns 0, or -1 when out's cap is passed.
 */
int			bp_nft_uri_subst_id(const char *uri, size_t len, const struct bp_u256 *id,
			    struct bp_buf *out);

#endif
