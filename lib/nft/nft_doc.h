/*
 * NFT metadata documents (docs/nfts.md): the JSON a tokenURI or contractURI points at, as
 * OpenSea's metadata standard and EIP-721/EIP-1155 describe it. Untrusted: size and nesting are
 * capped before parsing, every member's type is checked, and what is kept is re-rendered by us
 * (tests/fuzz/fuzz_nft_uri.c drives it too). Thread-safe; no I/O.
 */
#ifndef BP_NFT_DOC_H
#define BP_NFT_DOC_H

#include <stddef.h>

#include "core/buf.h"

#define BP_NFT_DOC_DEPTH	32		/* nesting allowed in a document */
#define BP_NFT_FIELD_MAX	(64 * 1024)	/* longest name/description/image kept */
#define BP_NFT_TRAITS_MAX	(256 * 1024)	/* rendered traits array */

/* What a document said; each string NULL when absent or not a string. */
struct bp_nft_doc {
	char		*name;
	char		*description;
	char		*image;		/* image, else image_url */
	char		*banner;	/* banner_image (contract-level documents) */
	char		*traits;	/* JSON array of {"trait_type","value"} strings; never NULL
					   after a successful parse ("[]" when none) */
};

/*
 * Parses the document json[0..len) into doc (zeroed first). name, description and image may
 * be strings or numbers (numbers become their text); attributes are read as traits: each an
 * object whose value is a string, number or boolean (numbers and booleans become strings,
 * others are left out) and whose trait_type, missing or not a string, is "". Returns 0, or -1
 * when the text is not a JSON object within the caps (doc then holds nothing). Free with
 * bp_nft_doc_free.
 */
int	bp_nft_doc_parse(const char *json, size_t len, struct bp_nft_doc *doc);
void	bp_nft_doc_free(struct bp_nft_doc *);

/* Appends the JSON string literal of s (with quotes), or null for NULL; 0 or -1. */
int	bp_nft_json_str_or_null(struct bp_buf *, const char *s);
/* Appends ,"name": and the string s or null; 0 or -1. */
int	bp_nft_json_member(struct bp_buf *, const char *name, const char *s);

#endif
