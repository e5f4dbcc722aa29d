/*
 * libFuzzer harness for lib/nft/nft_uri.c: tokenURIs, image fields and ERC-1155 templates as a
 * contract or a metadata server may give them. Beyond memory safety it checks that a URL answer
 * is printable ASCII within BP_NFT_URI_MAX and starts with http(s) or a gateway, that a data:
 * answer holds no NUL, that the image mapping agrees with the tokenURI mapping on URLs, and that
 * {id} substitution leaves no "{id}" behind. The same bytes, and a data: URI's decoded document,
 * go through the metadata document parser, whose traits must be a JSON array.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nft/nft_doc.h"
#include "nft/nft_uri.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_url(const struct bp_buf *b)
{
	size_t i;

	if (b->len == 0 || b->len > BP_NFT_URI_MAX)
		abort();
	for (i = 0; i < b->len; i++)
		if ((unsigned char)b->data[i] <= 0x20 || (unsigned char)b->data[i] >= 0x7f)
			abort();
	if (strncasecmp(b->data, "http://", 7) != 0 && strncasecmp(b->data, "https://", 8) != 0)
		abort();
}

static void
check_doc(const char *s, size_t len)
{
	struct bp_nft_doc d;
	size_t n;

	if (bp_nft_doc_parse(s, len, &d) == 0) {
		n = strlen(d.traits);
		if (n < 2 || d.traits[0] != '[' || d.traits[n - 1] != ']')
			abort();
	}
	bp_nft_doc_free(&d);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct bp_nft_gateways gw = { "https://gw.example/ipfs", "https://ar.example/" };
	struct bp_buf a, b;
	struct bp_u256 id;
	const char *s = (const char *)data;
	int kind;

	bp_buf_init(&a, BP_NFT_DATA_MAX);
	bp_buf_init(&b, BP_NFT_DATA_MAX);
	kind = bp_nft_uri_resolve(s, size, &gw, &a);
	if (kind == BP_NFT_URI_URL) {
		check_url(&a);
		if (bp_nft_image_url(s, size, &gw, &b) != 0 || b.len != a.len ||
		    memcmp(a.data, b.data, a.len) != 0)
			abort();
	} else if (kind == BP_NFT_URI_DATA) {
		if (a.len == 0 || memchr(a.data, '\0', a.len) != NULL)
			abort();
		check_doc(a.data, a.len);
	} else if (kind != BP_NFT_URI_BAD || a.len != 0)
		abort();
	if (bp_nft_image_url(s, size, &gw, &b) == 0)
		check_url(&b);
	check_doc(s, size);
	memset(&id, 0, sizeof(id));
	if (size >= 8)
		memcpy(&id.w[0], data, 8);
	if (bp_nft_uri_subst_id(s, size, &id, &b) == 0 && b.len > 0 &&
	    memmem(b.data, b.len, "{id}", 4) != NULL && memmem(s, size, "{{id}}", 6) == NULL &&
	    memmem(s, size, "{id}}", 5) == NULL)
		abort();
	bp_buf_free(&a);
	bp_buf_free(&b);
	return 0;
}
