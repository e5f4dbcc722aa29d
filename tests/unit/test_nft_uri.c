/*
 * lib/nft/nft_uri.c: the gateway mapping, data: decoding and {id} substitution, table-driven with
 * hostile rows (NULs, control bytes, other schemes, bad base64, over-long input).
 */
#include <string.h>

#include "core/util.h"
#include "nft/nft_uri.h"
#include "unit.h"

struct row {
	const char	*in;
	size_t		 len;		/* 0: strlen(in) */
	int		 kind;		/* enum bp_nft_uri_kind */
	const char	*out;
};

#define GW	{ "http://127.0.0.1:9/gw/ipfs", "https://ar.example/" }

static void
test_resolve(void)
{
	static const struct row rows[] = {
		{ "ipfs://QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG/1.json", 0,
		    BP_NFT_URI_URL,
		    "http://127.0.0.1:9/gw/ipfs/QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG/1.json" },
		{ "ipfs://ipfs/QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG", 0, BP_NFT_URI_URL,
		    "http://127.0.0.1:9/gw/ipfs/QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG" },
		{ "IPFS://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/7", 0,
		    BP_NFT_URI_URL, "http://127.0.0.1:9/gw/ipfs/"
		    "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/7" },
		{ "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG", 0, BP_NFT_URI_URL,
		    "http://127.0.0.1:9/gw/ipfs/QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG" },
		{ "  bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/a.json\n", 0,
		    BP_NFT_URI_URL, "http://127.0.0.1:9/gw/ipfs/"
		    "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/a.json" },
		{ "ar://bNbA3TEQVL60xlgCcqdz4ZPHFZ711cZ3hmkpGttDt_U", 0, BP_NFT_URI_URL,
		    "https://ar.example/bNbA3TEQVL60xlgCcqdz4ZPHFZ711cZ3hmkpGttDt_U" },
		{ "https://example.com/t/1?x=y", 0, BP_NFT_URI_URL, "https://example.com/t/1?x=y" },
		{ "HTTP://127.0.0.1:8000/1", 0, BP_NFT_URI_URL, "HTTP://127.0.0.1:8000/1" },
		{ "data:application/json;base64,eyJuYW1lIjoiQSJ9", 0, BP_NFT_URI_DATA,
		    "{\"name\":\"A\"}" },
		{ "data:application/json;base64,eyJuYW1lIjoiQSJ9\n", 0, BP_NFT_URI_DATA,
		    "{\"name\":\"A\"}" },
		{ "data:application/json;base64,eyJuIjoxfQ", 0, BP_NFT_URI_DATA, "{\"n\":1}" },
		{ "data:application/json;base64,eyJuIjoxfQ==", 0, BP_NFT_URI_DATA, "{\"n\":1}" },
		{ "data:application/json,%7B%22name%22%3A%22caf%C3%A9%22%7D", 0, BP_NFT_URI_DATA,
		    "{\"name\":\"caf\xc3\xa9\"}" },
		{ "data:application/json;utf8,{\"d\":\"100%\"}", 0, BP_NFT_URI_DATA,
		    "{\"d\":\"100%\"}" },
		{ "Data:Application/JSON;charset=utf-8;BASE64,e30=", 0, BP_NFT_URI_DATA, "{}" },
		/* Refused. */
		{ "", 0, BP_NFT_URI_BAD, "" },
		{ "   ", 0, BP_NFT_URI_BAD, "" },
		{ "ftp://example.com/1", 0, BP_NFT_URI_BAD, "" },
		{ "file:///etc/passwd", 0, BP_NFT_URI_BAD, "" },
		{ "gopher://127.0.0.1:6379/_x", 0, BP_NFT_URI_BAD, "" },
		{ "javascript:alert(1)", 0, BP_NFT_URI_BAD, "" },
		{ "ipfs://", 0, BP_NFT_URI_BAD, "" },
		{ "ipfs://ipfs/", 0, BP_NFT_URI_BAD, "" },
		{ "ipfs://../etc", 0, BP_NFT_URI_BAD, "" },
		{ "ipfs://@evil.example/x", 0, BP_NFT_URI_BAD, "" },
		{ "ar://", 0, BP_NFT_URI_BAD, "" },
		{ "ar://a.b@evil/", 0, BP_NFT_URI_BAD, "" },
		{ "http://", 0, BP_NFT_URI_BAD, "" },
		{ "http:///x", 0, BP_NFT_URI_BAD, "" },
		{ "https://exa mple.com/", 0, BP_NFT_URI_BAD, "" },
		{ "https://example.com/\x01", 0, BP_NFT_URI_BAD, "" },
		{ "https://example.com/\xff", 0, BP_NFT_URI_BAD, "" },
		{ "https://a\0.example/", sizeof("https://a\0.example/") - 1, BP_NFT_URI_BAD, "" },
		{ "Qm123", 0, BP_NFT_URI_BAD, "" },
		{ "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPb0l", 0, BP_NFT_URI_BAD, "" },
		{ "bafy", 0, BP_NFT_URI_BAD, "" },
		{ "data:text/html,<script>", 0, BP_NFT_URI_BAD, "" },
		{ "data:application/jsonx,{}", 0, BP_NFT_URI_BAD, "" },
		{ "data:application/json;base64", 0, BP_NFT_URI_BAD, "" },
		{ "data:application/json;base64,", 0, BP_NFT_URI_BAD, "" },
		{ "data:application/json;base64,e30=e30=", 0, BP_NFT_URI_BAD, "" },
		{ "data:application/json;base64,e30*", 0, BP_NFT_URI_BAD, "" },
		{ "data:application/json;base64,e", 0, BP_NFT_URI_BAD, "" },
		{ "data:application/json;base64;x=1,e30=", 0, BP_NFT_URI_BAD, "" },
		{ "data:application/json,%00", 0, BP_NFT_URI_BAD, "" },
		{ "data:application/json;base64,AA==", 0, BP_NFT_URI_BAD, "" },
	};
	struct bp_nft_gateways gw = GW;
	struct bp_buf out;
	size_t i, len;
	int kind;

	bp_buf_init(&out, 1 << 16);
	for (i = 0; i < BP_NITEMS(rows); i++) {
		len = rows[i].len ? rows[i].len : strlen(rows[i].in);
		kind = bp_nft_uri_resolve(rows[i].in, len, &gw, &out);
		if (kind != rows[i].kind || out.len != strlen(rows[i].out) ||
		    (out.len > 0 && memcmp(out.data, rows[i].out, out.len) != 0))
			CU_FAIL(rows[i].in);
	}
	bp_buf_free(&out);
}

static void
test_defaults_and_caps(void)
{
	struct bp_buf out;
	char big[BP_NFT_URI_MAX + 16];

	bp_buf_init(&out, 1 << 16);
	CU_ASSERT_EQUAL(bp_nft_uri_resolve("ipfs://QmX/1", 12, NULL, &out), BP_NFT_URI_URL);
	CU_ASSERT_STRING_EQUAL(out.data, "https://ipfs.io/ipfs/QmX/1");
	CU_ASSERT_EQUAL(bp_nft_uri_resolve("ar://abc", 8, NULL, &out), BP_NFT_URI_URL);
	CU_ASSERT_STRING_EQUAL(out.data, "https://arweave.net/abc");
	memcpy(big, "https://a.example/", 18);
	memset(big + 18, 'a', sizeof(big) - 18);
	CU_ASSERT_EQUAL(bp_nft_uri_resolve(big, sizeof(big), NULL, &out), BP_NFT_URI_BAD);
	CU_ASSERT_EQUAL(out.len, 0);
	CU_ASSERT_EQUAL(bp_nft_uri_resolve(NULL, 0, NULL, &out), BP_NFT_URI_BAD);
	bp_buf_free(&out);
	/* A cap smaller than the document fails cleanly. */
	bp_buf_init(&out, 4);
	CU_ASSERT_EQUAL(bp_nft_uri_resolve("data:application/json,{\"a\":1}", 29, NULL, &out),
	    BP_NFT_URI_BAD);
	bp_buf_free(&out);
}

static void
test_image(void)
{
	struct bp_nft_gateways gw = GW;
	struct bp_buf out;

	bp_buf_init(&out, 1 << 16);
	CU_ASSERT_EQUAL(bp_nft_image_url("ipfs://QmA/img.png", 18, &gw, &out), 0);
	CU_ASSERT_STRING_EQUAL(out.data, "http://127.0.0.1:9/gw/ipfs/QmA/img.png");
	CU_ASSERT_EQUAL(bp_nft_image_url("https://x.example/i.png", 23, &gw, &out), 0);
	CU_ASSERT_STRING_EQUAL(out.data, "https://x.example/i.png");
	CU_ASSERT_EQUAL(bp_nft_image_url("data:image/svg+xml;base64,PHN2Zz4=", 34, &gw, &out),
	    -1);
	CU_ASSERT_EQUAL(out.len, 0);
	CU_ASSERT_EQUAL(bp_nft_image_url("data:application/json,{}", 24, &gw, &out), -1);
	bp_buf_free(&out);
}

static void
test_subst(void)
{
	struct bp_u256 id;
	struct bp_buf out;
	static const char u[] = "https://x.example/{id}.json?a={id}&{i}{id";

	bp_buf_init(&out, 1 << 16);
	bp_u256_from_u64(&id, 0x1a);
	CU_ASSERT_EQUAL(bp_nft_uri_subst_id(u, strlen(u), &id, &out), 0);
	CU_ASSERT_STRING_EQUAL(out.data, "https://x.example/"
	    "000000000000000000000000000000000000000000000000000000000000001a.json?a="
	    "000000000000000000000000000000000000000000000000000000000000001a&{i}{id");
	memset(&id, 0xff, sizeof(id));
	CU_ASSERT_EQUAL(bp_nft_uri_subst_id("{id}", 4, &id, &out), 0);
	CU_ASSERT_STRING_EQUAL(out.data,
	    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff");
	CU_ASSERT_EQUAL(bp_nft_uri_subst_id("plain", 5, &id, &out), 0);
	CU_ASSERT_STRING_EQUAL(out.data, "plain");
	bp_buf_free(&out);
	bp_buf_init(&out, 10);
	CU_ASSERT_EQUAL(bp_nft_uri_subst_id("{id}", 4, &id, &out), -1);
	bp_buf_free(&out);
}

BP_UNIT_SUITE(nft_uri, NULL, NULL,
	{ "resolve table (gateways, data:, refusals)", test_resolve },
	{ "default gateways, caps, NULL", test_defaults_and_caps },
	{ "image_gateway_url mapping", test_image },
	{ "ERC-1155 {id} substitution", test_subst })
