/*
 * Hex DATA and QUANTITY strings (Ethereum JSON-RPC "hex value encoding"), used by the HTTP layer,
 * the JSON-RPC proxy and the EVM modules alike. One parser of quantities
 * (bp_hex_quantity_be, with strict and lenient rules, which bp_hex_quantity_strict/lenient and
 * u256's parsers wrap) and one encoder of bytes (put_digits, behind every bp_hex_*encode*). The
 * rules are in hex.h and docs/evm.md.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hex.h"

static const char hexdig[] = "0123456789abcdef";

int
bp_hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* True when s[0..len) starts with "0x", or also "0X" when upper is set. */
static int
has_prefix(const char *s, size_t len, int upper)
{
	if (s == NULL || len < 2 || s[0] != '0')
		return 0;
	return s[1] == 'x' || (upper && s[1] == 'X');
}

int
bp_hex_decode(const char *s, size_t len, uint8_t *out, size_t cap, size_t *outlen)
{
	size_t i, n;

	if (!has_prefix(s, len, 1) || outlen == NULL)
		return -1;
	s += 2;
	len -= 2;
	if (len % 2 != 0)
		return -1;
	n = len / 2;
	if (n > cap || (n > 0 && out == NULL))
		return -1;
	for (i = 0; i < n; i++) {
		int hi = bp_hex_digit((unsigned char)s[2 * i]);
		int lo = bp_hex_digit((unsigned char)s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	*outlen = n;
	return 0;
}

int
bp_hex_decode_fixed(const char *s, size_t len, uint8_t *out, size_t n)
{
	size_t got;

	/* The length test first, so a wrong-sized string does not write out at all. */
	if (s == NULL || len < 2 || (len - 2) / 2 != n || (len - 2) % 2 != 0)
		return -1;
	if (bp_hex_decode(s, len, out, n, &got) != 0 || got != n)
		return -1;
	return 0;
}

/* The encoder: 2n lower-case digits of in[0..n) to out, which has room for them. */
static void
put_digits(const uint8_t *p, size_t n, char *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = hexdig[p[i] >> 4];
		out[2 * i + 1] = hexdig[p[i] & 0x0f];
	}
}

/* The room 2n + extra needs, compared without computing 2n, which could wrap. */
static int
fits(size_t n, size_t extra, size_t cap)
{
	return cap >= extra && (cap - extra) / 2 >= n;
}

int
bp_hex_encode_digits(const void *in, size_t n, char *out, size_t cap)
{
	if (out == NULL || cap == 0)
		return -1;
	out[0] = '\0';
	if (!fits(n, 1, cap) || (n > 0 && in == NULL))
		return -1;
	put_digits(in, n, out);
	out[2 * n] = '\0';
	return 0;
}

int
bp_hex_encode(const void *in, size_t n, char *out, size_t cap)
{
	if (out == NULL || cap < 3) {
		if (out != NULL && cap > 0)
			out[0] = '\0';
		return -1;
	}
	if (bp_hex_encode_digits(in, n, out + 2, cap - 2) == -1) {
		out[0] = '\0';
		return -1;
	}
	out[0] = '0';
	out[1] = 'x';
	return 0;
}

int
bp_hex_quantity_be(const char *s, size_t len, int strict, uint8_t *be, size_t n)
{
	size_t m, i;

	if (!has_prefix(s, len, !strict) || be == NULL)
		return -1;
	s += 2;
	m = len - 2;
	if (m == 0 || (strict && s[0] == '0' && m > 1))
		return -1;
	/* Leading zeros (lenient only, by now) do not count against the width. */
	while (m > 1 && s[0] == '0') {
		s++;
		m--;
	}
	if (m > 2 * n)
		return -1;
	memset(be, 0, n);
	/* The last digit is the low nibble of the last byte. */
	for (i = 0; i < m; i++) {
		int d = bp_hex_digit((unsigned char)s[m - 1 - i]);

		if (d < 0)
			return -1;
		be[n - 1 - i / 2] |= (uint8_t)(i % 2 ? d << 4 : d);
	}
	return 0;
}

/* A quantity as a uint64, through the one parser; *out is untouched on failure. */
static int
quantity64(const char *s, size_t len, int strict, uint64_t *out)
{
	uint8_t be[8];
	uint64_t v = 0;
	size_t i;

	if (out == NULL || bp_hex_quantity_be(s, len, strict, be, sizeof(be)) == -1)
		return -1;
	for (i = 0; i < sizeof(be); i++)
		v = v << 8 | be[i];
	*out = v;
	return 0;
}

int
bp_hex_quantity_strict(const char *s, size_t len, uint64_t *out)
{
	return quantity64(s, len, 1, out);
}

int
bp_hex_quantity_lenient(const char *s, size_t len, uint64_t *out)
{
	return quantity64(s, len, 0, out);
}

int
bp_hex_quantity_encode_be(const uint8_t *be, size_t n, char *out, size_t cap)
{
	size_t skip = 0, m;

	if (out == NULL || cap == 0)
		return -1;
	out[0] = '\0';
	if (n > 0 && be == NULL)
		return -1;
	while (skip < n && be[skip] == 0)
		skip++;
	if (skip == n) {
		if (cap < 4)
			return -1;
		memcpy(out, "0x0", 4);
		return 0;
	}
	/* The digits from the first non-zero byte on, less its high digit when that is zero. */
	be += skip;
	m = n - skip;
	if (be[0] < 0x10) {
		if (!fits(m - 1, 4, cap))
			return -1;
		out[2] = hexdig[be[0]];
		put_digits(be + 1, m - 1, out + 3);
		out[3 + 2 * (m - 1)] = '\0';
	} else {
		if (!fits(m, 3, cap))
			return -1;
		put_digits(be, m, out + 2);
		out[2 + 2 * m] = '\0';
	}
	out[0] = '0';
	out[1] = 'x';
	return 0;
}

int
bp_hex_quantity_encode(uint64_t v, char *out, size_t cap)
{
	uint8_t be[8];
	size_t i;

	for (i = 0; i < sizeof(be); i++)
		be[i] = (uint8_t)(v >> (56 - 8 * i));
	return bp_hex_quantity_encode_be(be, sizeof(be), out, cap);
}
