/*
 * NFT URIs: the gateway mapping, data: decoding and ERC-1155 {id} substitution of nft_uri.h.
 * Every input is untrusted (a contract's tokenURI, a metadata document's image): lengths are
 * explicit, a NUL is just a bad byte, and the output buffer's cap bounds what is written.
 */
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "core/hex.h"
#include "nft_uri.h"

/* Case-insensitive prefix test of s[0..len). */
static int
has_prefix(const char *s, size_t len, const char *p)
{
	size_t n = strlen(p);

	return len >= n && strncasecmp(s, p, n) == 0;
}

/* A byte that may stand in a URL we fetch or answer: printable ASCII other than space. */
static int
url_byte_ok(unsigned char c)
{
	return c > 0x20 && c < 0x7f;
}

static int
all_url_bytes(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!url_byte_ok((unsigned char)s[i]))
			return 0;
	return 1;
}

static int
is_alnum(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Length of the first path segment of s[0..len) (up to '/', '?' or '#'). */
static size_t
segment_len(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len && s[i] != '/' && s[i] != '?' && s[i] != '#'; i++)
		;
	return i;
}

/* A CID as the first segment of an ipfs:// URI: 1 to 128 alphanumerics. */
static int
cid_like(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 128)
		return 0;
	for (i = 0; i < n; i++)
		if (!is_alnum((unsigned char)s[i]))
			return 0;
	return 1;
}

/*
 * A bare CID: v0 is "Qm" + 44 base58btc characters (a sha2-256 multihash); v1 in its default
 * text form is "b" + lower-case base32 (RFC 4648 without padding), 59 characters for the usual
 * sha2-256 CIDs; we take 50 to 128.
 */
static int
bare_cid(const char *s, size_t n)
{
	static const char b58[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
	size_t i;

	if (n == 46 && s[0] == 'Q' && s[1] == 'm') {
		for (i = 2; i < n; i++)
			if (s[i] == '\0' || strchr(b58, s[i]) == NULL)
				return 0;
		return 1;
	}
	if (n >= 50 && n <= 128 && s[0] == 'b') {
		for (i = 1; i < n; i++)
			if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '2' && s[i] <= '7')))
				return 0;
		return 1;
	}
	return 0;
}

/* An Arweave transaction id: 1 to 128 base64url characters (43 in practice). */
static int
ar_id_like(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 128)
		return 0;
	for (i = 0; i < n; i++)
		if (!is_alnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
			return 0;
	return 1;
}

/* out = gateway (with one '/' at its end) + rest[0..len). */
static int
gateway_join(struct bp_buf *out, const char *gateway, const char *rest, size_t len)
{
	size_t g = strlen(gateway);

	if (bp_buf_add(out, gateway, g) == -1 ||
	    ((g == 0 || gateway[g - 1] != '/') && bp_buf_add(out, "/", 1) == -1) ||
	    bp_buf_add(out, rest, len) == -1 || out->len > BP_NFT_URI_MAX)
		return -1;
	return 0;
}

/*
 * The URL forms shared by tokenURIs and images: ipfs://, ar://, bare CIDs, http(s). 0 with the
 * URL in out, -1 otherwise.
 */
static int
map_url(const char *s, size_t len, const struct bp_nft_gateways *gw, struct bp_buf *out)
{
	const char *ipfs = gw && gw->ipfs ? gw->ipfs : BP_NFT_IPFS_GATEWAY;
	const char *ar = gw && gw->arweave ? gw->arweave : BP_NFT_AR_GATEWAY;
	size_t n;

	if (len > BP_NFT_URI_MAX || !all_url_bytes(s, len))
		return -1;
	if (has_prefix(s, len, "ipfs://")) {
		s += 7;
		len -= 7;
		/* ipfs://ipfs/CID is a common mistake for ipfs://CID; gateways read both alike. */
		if (has_prefix(s, len, "ipfs/")) {
			s += 5;
			len -= 5;
		}
		n = segment_len(s, len);
		return cid_like(s, n) ? gateway_join(out, ipfs, s, len) : -1;
	}
	if (has_prefix(s, len, "ar://")) {
		s += 5;
		len -= 5;
		n = segment_len(s, len);
		return ar_id_like(s, n) ? gateway_join(out, ar, s, len) : -1;
	}
	if (has_prefix(s, len, "http://") || has_prefix(s, len, "https://")) {
		n = has_prefix(s, len, "http://") ? 7 : 8;
		if (len == n || s[n] == '/')	/* no host */
			return -1;
		return bp_buf_add(out, s, len);
	}
	n = segment_len(s, len);
	if (bare_cid(s, n))
		return gateway_join(out, ipfs, s, len);
	return -1;
}

static int
b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

/*
 * Base64 (RFC 4648, standard or URL alphabet; padding optional but only at the end; ASCII
 * whitespace skipped, as encoders wrap lines). 0, or -1 on a bad byte or when out is full.
 */
static int
b64_decode(const char *s, size_t len, struct bp_buf *out)
{
	uint32_t acc = 0;
	int bits = 0, v, pad = 0;
	size_t i;
	char c;

	for (i = 0; i < len; i++) {
		if (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n')
			continue;
		if (s[i] == '=') {
			pad++;
			continue;
		}
		if (pad > 0 || (v = b64_value((unsigned char)s[i])) < 0)
			return -1;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			c = (char)((acc >> bits) & 0xff);
			if (bp_buf_add(out, &c, 1) == -1)
				return -1;
		}
	}
	/* Leftover bits must be a partial sextet (at most 4 bits: 2 or 3 characters of 4). */
	if (pad > 2 || bits >= 6)
		return -1;
	return 0;
}

/*
 * Percent-decoding of a data: URI's text (RFC 2397). A '%' not followed by two hex digits is
 * kept as it is: on-chain JSON is often written without escaping, and "100%" in a description
 * should not sink the document.
 */
static int
pct_decode(const char *s, size_t len, struct bp_buf *out)
{
	size_t i;
	char c;
	int h, l;

	for (i = 0; i < len; i++) {
		c = s[i];
		if (c == '%' && i + 2 < len && (h = bp_hex_digit((unsigned char)s[i + 1])) >= 0 &&
		    (l = bp_hex_digit((unsigned char)s[i + 2])) >= 0) {
			c = (char)(h << 4 | l);
			i += 2;
		}
		if (bp_buf_add(out, &c, 1) == -1)
			return -1;
	}
	return 0;
}

/*
 * data:application/json[;param]*[;base64],DATA. Parameters other than base64 (utf8,
 * charset=utf-8) are allowed and ignored. The decoded document may not hold a NUL.
 */
static int
data_json(const char *s, size_t len, struct bp_buf *out)
{
	const char *comma, *p, *end;
	size_t n;
	int base64 = 0;

	s += 5;		/* "data:" */
	len -= 5;
	if ((comma = memchr(s, ',', len)) == NULL)
		return -1;
	if (!has_prefix(s, (size_t)(comma - s), "application/json"))
		return -1;
	p = s + 16;
	if (p != comma && *p != ';')	/* application/jsonx */
		return -1;
	while (p < comma) {
		p++;	/* ';' */
		end = memchr(p, ';', (size_t)(comma - p));
		if (end == NULL)
			end = comma;
		n = (size_t)(end - p);
		if (n == 6 && strncasecmp(p, "base64", 6) == 0) {
			if (end != comma)	/* base64 is the last parameter */
				return -1;
			base64 = 1;
		}
		p = end;
	}
	n = len - (size_t)(comma + 1 - s);
	if ((base64 ? b64_decode(comma + 1, n, out) : pct_decode(comma + 1, n, out)) == -1)
		return -1;
	if (out->len == 0 || memchr(out->data, '\0', out->len) != NULL)
		return -1;
	return 0;
}

/* Drops leading and trailing ASCII whitespace. */
static void
trim(const char **s, size_t *len)
{
	while (*len > 0 && ((*s)[0] == ' ' || (*s)[0] == '\t' || (*s)[0] == '\r' ||
	    (*s)[0] == '\n')) {
		(*s)++;
		(*len)--;
	}
	while (*len > 0 && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t' ||
	    (*s)[*len - 1] == '\r' || (*s)[*len - 1] == '\n'))
		(*len)--;
}

enum bp_nft_uri_kind
bp_nft_uri_resolve(const char *uri, size_t len, const struct bp_nft_gateways *gw,
    struct bp_buf *out)
{
	bp_buf_reset(out);
	if (uri == NULL)
		return BP_NFT_URI_BAD;
	trim(&uri, &len);
	if (has_prefix(uri, len, "data:")) {
		if (data_json(uri, len, out) == 0)
			return BP_NFT_URI_DATA;
	} else if (map_url(uri, len, gw, out) == 0)
		return BP_NFT_URI_URL;
	bp_buf_reset(out);
	return BP_NFT_URI_BAD;
}

int
bp_nft_image_url(const char *uri, size_t len, const struct bp_nft_gateways *gw,
    struct bp_buf *out)
{
	bp_buf_reset(out);
	if (uri == NULL)
		return -1;
	trim(&uri, &len);
	if (map_url(uri, len, gw, out) == 0)
		return 0;
	bp_buf_reset(out);
	return -1;
}

int
bp_nft_uri_subst_id(const char *uri, size_t len, const struct bp_u256 *id, struct bp_buf *out)
{
	uint8_t be[32];
	char hex[65];
	size_t i;

	bp_buf_reset(out);
	bp_u256_to_be32(id, be);
	if (bp_hex_encode_digits(be, sizeof(be), hex, sizeof(hex)) == -1)
		return -1;
	for (i = 0; i < len; i++) {
		if (len - i >= 4 && memcmp(uri + i, "{id}", 4) == 0) {
			if (bp_buf_add(out, hex, 64) == -1)
				return -1;
			i += 3;
		} else if (bp_buf_add(out, uri + i, 1) == -1)
			return -1;
	}
	return 0;
}
