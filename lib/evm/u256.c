/*
 * 256-bit unsigned arithmetic on four little-endian uint64 limbs. Only what an API server
 * needs: exact parsing and printing, add/sub with carry, and multiply/divide by a uint64
 * (enough for decimal conversion and unit scaling). See u256.h and docs/evm.md.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/hex.h"
#include "u256.h"

/* unsigned __int128 is a GCC/Clang extension; __extension__ keeps -pedantic quiet. */
__extension__ typedef unsigned __int128 u128;

void
bp_u256_from_u64(struct bp_u256 *r, uint64_t v)
{
	r->w[0] = v;
	r->w[1] = r->w[2] = r->w[3] = 0;
}

int
bp_u256_to_u64(const struct bp_u256 *a, uint64_t *out)
{
	if (a->w[1] != 0 || a->w[2] != 0 || a->w[3] != 0)
		return -1;
	*out = a->w[0];
	return 0;
}

int
bp_u256_is_zero(const struct bp_u256 *a)
{
	return (a->w[0] | a->w[1] | a->w[2] | a->w[3]) == 0;
}

int
bp_u256_cmp(const struct bp_u256 *a, const struct bp_u256 *b)
{
	int i;

	for (i = 3; i >= 0; i--) {
		if (a->w[i] < b->w[i])
			return -1;
		if (a->w[i] > b->w[i])
			return 1;
	}
	return 0;
}

void
bp_u256_from_be32(struct bp_u256 *r, const uint8_t in[32])
{
	int i, j;

	for (i = 0; i < 4; i++) {
		uint64_t v = 0;

		/* Limb i is bytes 24 - 8i .. 31 - 8i of the big-endian word. */
		for (j = 0; j < 8; j++)
			v = v << 8 | in[(3 - i) * 8 + j];
		r->w[i] = v;
	}
}

void
bp_u256_to_be32(const struct bp_u256 *a, uint8_t out[32])
{
	int i, j;

	for (i = 0; i < 4; i++)
		for (j = 0; j < 8; j++)
			out[(3 - i) * 8 + j] = (uint8_t)(a->w[i] >> (56 - 8 * j));
}

int
bp_u256_from_be(struct bp_u256 *r, const uint8_t *in, size_t n)
{
	uint8_t buf[32];

	if (n > 32 || (n > 0 && in == NULL))
		return -1;
	memset(buf, 0, sizeof(buf));
	if (n > 0)
		memcpy(buf + 32 - n, in, n);
	bp_u256_from_be32(r, buf);
	return 0;
}

int
bp_u256_add(struct bp_u256 *r, const struct bp_u256 *a, const struct bp_u256 *b)
{
	uint64_t carry = 0;
	int i;

	for (i = 0; i < 4; i++) {
		uint64_t s = a->w[i] + b->w[i];
		uint64_t c = s < a->w[i];

		s += carry;
		c |= s < carry;
		r->w[i] = s;
		carry = c;
	}
	return (int)carry;
}

int
bp_u256_sub(struct bp_u256 *r, const struct bp_u256 *a, const struct bp_u256 *b)
{
	uint64_t borrow = 0;
	int i;

	for (i = 0; i < 4; i++) {
		uint64_t x = a->w[i], y = b->w[i];
		uint64_t d = x - y;
		uint64_t bo = x < y;

		bo |= d < borrow;
		d -= borrow;
		r->w[i] = d;
		borrow = bo;
	}
	return (int)borrow;
}

int
bp_u256_mul_u64(struct bp_u256 *r, const struct bp_u256 *a, uint64_t m)
{
	uint64_t carry = 0;
	int i;

	for (i = 0; i < 4; i++) {
		u128 p = (u128)a->w[i] * m + carry;

		r->w[i] = (uint64_t)p;
		carry = (uint64_t)(p >> 64);
	}
	return carry != 0;
}

int
bp_u256_div_u64(struct bp_u256 *q, const struct bp_u256 *a, uint64_t d, uint64_t *rem)
{
	uint64_t r = 0;
	int i;

	if (d == 0)
		return -1;
	for (i = 3; i >= 0; i--) {
		/* r < d, so (r:limb) / d < 2^64. */
		u128 cur = (u128)r << 64 | a->w[i];

		q->w[i] = (uint64_t)(cur / d);
		r = (uint64_t)(cur % d);
	}
	if (rem != NULL)
		*rem = r;
	return 0;
}

int
bp_u256_mod_u64(const struct bp_u256 *a, uint64_t d, uint64_t *rem)
{
	struct bp_u256 q;

	return bp_u256_div_u64(&q, a, d, rem);
}

/* *r = *r * mul + add, failing on overflow past 2^256 - 1. */
static int
muladd(struct bp_u256 *r, uint64_t mul, uint64_t add)
{
	struct bp_u256 t, a;

	if (bp_u256_mul_u64(&t, r, mul) != 0)
		return -1;
	bp_u256_from_u64(&a, add);
	if (bp_u256_add(&t, &t, &a) != 0)
		return -1;
	*r = t;
	return 0;
}

int
bp_u256_from_dec(struct bp_u256 *r, const char *s, size_t len)
{
	struct bp_u256 v = { { 0, 0, 0, 0 } };
	size_t i;

	if (s == NULL || len == 0)
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		if (muladd(&v, 10, (uint64_t)(s[i] - '0')) != 0)
			return -1;
	}
	*r = v;
	return 0;
}

/* A quantity through the one hex parser (lib/core/hex.c); *r is untouched on failure. */
static int
from_quantity(struct bp_u256 *r, const char *s, size_t len, int strict)
{
	uint8_t be[32];

	if (bp_hex_quantity_be(s, len, strict, be, sizeof(be)) == -1)
		return -1;
	bp_u256_from_be32(r, be);
	return 0;
}

int
bp_u256_from_hex(struct bp_u256 *r, const char *s, size_t len)
{
	return from_quantity(r, s, len, 0);
}

int
bp_u256_from_quantity(struct bp_u256 *r, const char *s, size_t len)
{
	return from_quantity(r, s, len, 1);
}

int
bp_u256_parse(struct bp_u256 *r, const char *s, size_t len)
{
	if (s != NULL && len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return bp_u256_from_hex(r, s, len);
	return bp_u256_from_dec(r, s, len);
}

/*
 * Writes the decimal digits of a to buf (room for 78), most significant first, and returns
 * their count (at least 1: zero is "0"). Not NUL-terminated.
 */
static size_t
dec_digits(const struct bp_u256 *a, char buf[78])
{
	/* 19 digits per division by 10^19 (the largest power of ten in 64 bits), not one. */
	static const uint64_t e19 = UINT64_C(10000000000000000000);
	char rev[80];
	struct bp_u256 v = *a;
	size_t n = 0, i;
	uint64_t d;

	do {
		(void)bp_u256_div_u64(&v, &v, e19, &d);
		for (i = 0; i < 19 && (d != 0 || !bp_u256_is_zero(&v) || i == 0); i++) {
			rev[n++] = (char)('0' + d % 10);
			d /= 10;
		}
	} while (!bp_u256_is_zero(&v));
	for (i = 0; i < n; i++)
		buf[i] = rev[n - 1 - i];
	return n;
}

int
bp_u256_to_dec(const struct bp_u256 *a, char *out, size_t cap)
{
	char digits[78];
	size_t n;

	if (out == NULL || cap == 0)
		return -1;
	out[0] = '\0';
	n = dec_digits(a, digits);
	if (cap < n + 1)
		return -1;
	memcpy(out, digits, n);
	out[n] = '\0';
	return 0;
}

int
bp_u256_to_quantity(const struct bp_u256 *a, char *out, size_t cap)
{
	uint8_t be[32];

	bp_u256_to_be32(a, be);
	return bp_hex_quantity_encode_be(be, sizeof(be), out, cap);
}

int
bp_u256_format_units(const struct bp_u256 *value, unsigned int decimals, char *out, size_t cap)
{
	char digits[78];
	size_t nd, ilen, fstart, fend, zeros, need, pos = 0;

	if (out == NULL || cap == 0)
		return -1;
	out[0] = '\0';
	if (decimals > BP_U256_MAX_DECIMALS)
		return -1;
	nd = dec_digits(value, digits);
	/*
	 * The value is digits[0..nd). The last `decimals` digits are the fraction; when there are
	 * fewer digits than that, the integer part is "0" and the fraction starts with
	 * decimals - nd zeros.
	 */
	if (nd > decimals) {
		ilen = nd - decimals;
		zeros = 0;
	} else {
		ilen = 0;
		zeros = decimals - nd;
	}
	fstart = ilen;
	fend = nd;
	/* Trim trailing fractional zeros; with no digit left the point goes too. */
	while (fend > fstart && digits[fend - 1] == '0')
		fend--;
	if (fend == fstart)
		zeros = 0;
	need = (ilen > 0 ? ilen : 1) + (fend > fstart ? 1 + zeros + (fend - fstart) : 0) + 1;
	if (cap < need)
		return -1;
	if (ilen > 0) {
		memcpy(out, digits, ilen);
		pos = ilen;
	} else
		out[pos++] = '0';
	if (fend > fstart) {
		out[pos++] = '.';
		memset(out + pos, '0', zeros);
		pos += zeros;
		memcpy(out + pos, digits + fstart, fend - fstart);
		pos += fend - fstart;
	}
	out[pos] = '\0';
	return 0;
}

/*
 * Decimal digits taken 19 at a time into a uint64_t, then one multiply-add into the 256-bit
 * value: a USD amount in 10^-36 units has 37 or more digits, and the sponsor path parses
 * several a sponsorship. Overflow is still caught: each flush's value is a prefix of the end.
 */
struct digits {
	struct bp_u256	v;
	uint64_t	chunk, scale;	/* scale: 10^(digits in chunk) */
};

static int
digits_flush(struct digits *d)
{
	int rc = d->scale > 1 ? muladd(&d->v, d->scale, d->chunk) : 0;

	d->chunk = 0;
	d->scale = 1;
	return rc;
}

static int
digits_add(struct digits *d, unsigned int digit)
{
	d->chunk = d->chunk * 10 + digit;
	d->scale *= 10;
	return d->scale == 10000000000000000000ULL ? digits_flush(d) : 0;
}

int
bp_u256_parse_units(struct bp_u256 *r, const char *s, size_t len, unsigned int decimals)
{
	struct digits d = { { { 0, 0, 0, 0 } }, 0, 1 };
	size_t i, ilen, fused = 0;
	const char *dot;

	if (s == NULL || len == 0 || decimals > BP_U256_MAX_DECIMALS)
		return -1;
	dot = memchr(s, '.', len);
	ilen = dot != NULL ? (size_t)(dot - s) : len;
	if (ilen == 0 || (dot != NULL && ilen + 1 == len))
		return -1;
	for (i = 0; i < ilen; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		if (digits_add(&d, (unsigned int)(s[i] - '0')) != 0)
			return -1;
	}
	if (dot != NULL) {
		for (i = ilen + 1; i < len; i++) {
			if (s[i] < '0' || s[i] > '9')
				return -1;
			if (fused == decimals) {
				/* Digits past the unit must be zeros: the value stays exact. */
				if (s[i] != '0')
					return -1;
				continue;
			}
			if (digits_add(&d, (unsigned int)(s[i] - '0')) != 0)
				return -1;
			fused++;
		}
	}
	for (; fused < decimals; fused++)
		if (digits_add(&d, 0) != 0)
			return -1;
	if (digits_flush(&d) != 0)
		return -1;
	*r = d.v;
	return 0;
}
