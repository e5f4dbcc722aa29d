/*
 * RLP encoder and canonical, bounded decoder (rlp.h, docs/evm.md).
 *
 * The encoder writes items into one buffer. A list's header depends on its payload length,
 * known only when it closes, so bp_rlp_list_begin remembers where the payload starts and
 * bp_rlp_list_end moves the payload up by the header size and writes the header before it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rlp.h"
#include "u256.h"

struct bp_rlp_enc {
	uint8_t	*p;
	size_t	 len;
	size_t	 alloc;
	size_t	 cap;
	int	 failed;
	int	 finished;
	size_t	 depth;
	size_t	 start[BP_RLP_MAX_DEPTH];	/* payload start of each open list */
};

/* Header longest form: 1 prefix byte + 8 length bytes. */
#define HDR_MAX	9

struct bp_rlp_enc *
bp_rlp_enc_new(size_t cap)
{
	struct bp_rlp_enc *e;

	if (cap == 0 || cap > SIZE_MAX / 2)
		return NULL;
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return NULL;
	e->cap = cap;
	return e;
}

void
bp_rlp_enc_free(struct bp_rlp_enc *e)
{
	if (e == NULL)
		return;
	free(e->p);
	free(e);
}

static int
fail(struct bp_rlp_enc *e)
{
	e->failed = 1;
	return -1;
}

static int
usable(const struct bp_rlp_enc *e)
{
	return e != NULL && !e->failed && !e->finished;
}

/* Makes room for n more bytes without passing the cap. */
static int
reserve(struct bp_rlp_enc *e, size_t n)
{
	size_t want, na;
	uint8_t *np;

	if (n > e->cap - e->len)
		return -1;
	want = e->len + n;
	if (want <= e->alloc)
		return 0;
	na = e->alloc < 64 ? 64 : e->alloc;
	while (na < want)
		na = na > e->cap / 2 ? e->cap : na * 2;
	if ((np = realloc(e->p, na)) == NULL)
		return -1;
	e->p = np;
	e->alloc = na;
	return 0;
}

/* Writes the header for a payload of n bytes with base 0x80 (string) or 0xc0 (list) to
 * hdr and returns its size (1..9). */
static size_t
header(uint8_t hdr[HDR_MAX], uint8_t base, size_t n)
{
	size_t ll = 0, i;
	uint64_t v = n;

	if (n < 56) {
		hdr[0] = (uint8_t)(base + n);
		return 1;
	}
	while (v != 0) {
		ll++;
		v >>= 8;
	}
	hdr[0] = (uint8_t)(base + 55 + ll);
	for (i = 0; i < ll; i++)
		hdr[1 + i] = (uint8_t)((uint64_t)n >> (8 * (ll - 1 - i)));
	return 1 + ll;
}

int
bp_rlp_put_bytes(struct bp_rlp_enc *e, const void *p, size_t n)
{
	const uint8_t *b = p;
	uint8_t hdr[HDR_MAX];
	size_t hl;

	if (!usable(e))
		return -1;
	if (n > 0 && p == NULL)
		return fail(e);
	if (n == 1 && b[0] < 0x80) {
		/* A single byte below 0x80 is its own encoding. */
		if (reserve(e, 1) != 0)
			return fail(e);
		e->p[e->len++] = b[0];
		return 0;
	}
	hl = header(hdr, 0x80, n);
	if (n > e->cap || reserve(e, hl + n) != 0)
		return fail(e);
	memcpy(e->p + e->len, hdr, hl);
	if (n > 0)
		memcpy(e->p + e->len + hl, b, n);
	e->len += hl + n;
	return 0;
}

int
bp_rlp_put_u64(struct bp_rlp_enc *e, uint64_t v)
{
	uint8_t be[8];
	size_t i, skip = 0;

	for (i = 0; i < 8; i++)
		be[i] = (uint8_t)(v >> (56 - 8 * i));
	while (skip < 8 && be[skip] == 0)
		skip++;
	return bp_rlp_put_bytes(e, be + skip, 8 - skip);
}

int
bp_rlp_put_u256(struct bp_rlp_enc *e, const struct bp_u256 *v)
{
	uint8_t be[32];
	size_t skip = 0;

	bp_u256_to_be32(v, be);
	while (skip < 32 && be[skip] == 0)
		skip++;
	return bp_rlp_put_bytes(e, be + skip, 32 - skip);
}

int
bp_rlp_list_begin(struct bp_rlp_enc *e)
{
	if (!usable(e))
		return -1;
	if (e->depth == BP_RLP_MAX_DEPTH)
		return fail(e);
	e->start[e->depth++] = e->len;
	return 0;
}

int
bp_rlp_list_end(struct bp_rlp_enc *e)
{
	uint8_t hdr[HDR_MAX];
	size_t start, n, hl;

	if (!usable(e))
		return -1;
	if (e->depth == 0)
		return fail(e);
	start = e->start[--e->depth];
	n = e->len - start;
	hl = header(hdr, 0xc0, n);
	if (reserve(e, hl) != 0)
		return fail(e);
	memmove(e->p + start + hl, e->p + start, n);
	memcpy(e->p + start, hdr, hl);
	e->len += hl;
	return 0;
}

int
bp_rlp_enc_finish(struct bp_rlp_enc *e, uint8_t **out, size_t *outlen)
{
	if (out == NULL || outlen == NULL || !usable(e))
		return -1;
	if (e->depth != 0)
		return fail(e);
	if (e->p == NULL && (e->p = malloc(1)) == NULL)
		return fail(e);
	/* Hand the buffer over; the encoder no longer owns it. */
	*out = e->p;
	*outlen = e->len;
	e->p = NULL;
	e->len = e->alloc = 0;
	e->finished = 1;
	return 0;
}

/* Reads an ll-byte big-endian length at p (1 <= ll <= 8) that must be canonical and >= 56. */
static int
long_len(const uint8_t *p, size_t ll, size_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (ll == 0 || ll > 8 || p[0] == 0)
		return -1;
	for (i = 0; i < ll; i++)
		v = v << 8 | p[i];
	if (v < 56 || v > SIZE_MAX)
		return -1;
	*out = (size_t)v;
	return 0;
}

int
bp_rlp_decode_item(const uint8_t *data, size_t len, struct bp_rlp_item *item, size_t *used)
{
	size_t hl, n;
	uint8_t b;

	if (data == NULL || len == 0 || item == NULL || used == NULL)
		return -1;
	b = data[0];
	if (b < 0x80) {
		item->list = 0;
		item->p = data;
		item->len = 1;
		*used = 1;
		return 0;
	}
	if (b <= 0xb7 || (b >= 0xc0 && b <= 0xf7)) {
		hl = 1;
		n = (size_t)(b - (b <= 0xb7 ? 0x80 : 0xc0));
	} else {
		size_t ll = (size_t)(b - (b <= 0xbf ? 0xb7 : 0xf7));

		if (len - 1 < ll || long_len(data + 1, ll, &n) != 0)
			return -1;
		hl = 1 + ll;
	}
	/* hl <= len holds here; compare n with what is left, no sum. */
	if (n > len - hl)
		return -1;
	if (b == 0x81 && data[1] < 0x80)
		return -1;	/* must have been the byte alone */
	item->list = b >= 0xc0;
	item->p = data + hl;
	item->len = n;
	*used = hl + n;
	return 0;
}

int
bp_rlp_decode(const uint8_t *data, size_t len, struct bp_rlp_item *item)
{
	struct bp_rlp_item it;
	size_t used;

	if (bp_rlp_decode_item(data, len, &it, &used) != 0 || used != len)
		return -1;
	*item = it;
	return 0;
}

int
bp_rlp_iter_init(struct bp_rlp_iter *it, const struct bp_rlp_item *list)
{
	if (it == NULL || list == NULL || !list->list)
		return -1;
	it->p = list->p;
	it->left = list->len;
	return 0;
}

int
bp_rlp_iter_next(struct bp_rlp_iter *it, struct bp_rlp_item *item)
{
	size_t used;

	if (it->left == 0)
		return 0;
	if (bp_rlp_decode_item(it->p, it->left, item, &used) != 0)
		return -1;
	it->p += used;
	it->left -= used;
	return 1;
}

int
bp_rlp_item_u64(const struct bp_rlp_item *item, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (item->list || item->len > 8 || (item->len > 0 && item->p[0] == 0))
		return -1;
	for (i = 0; i < item->len; i++)
		v = v << 8 | item->p[i];
	*out = v;
	return 0;
}

int
bp_rlp_item_u256(const struct bp_rlp_item *item, struct bp_u256 *out)
{
	if (item->list || item->len > 32 || (item->len > 0 && item->p[0] == 0))
		return -1;
	return bp_u256_from_be(out, item->p, item->len);
}
