/*
 * Hex DATA and QUANTITY strings (Ethereum JSON-RPC "hex value encoding"). The rules are in
 * hex.h and docs/evm.md.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "evm/hex.h"

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

int
bp_hex_encode(const void *in, size_t n, char *out, size_t cap)
{
	const uint8_t *p = in;
	size_t i;

	if (out == NULL || cap == 0)
		return -1;
	out[0] = '\0';
	/* Need 2n + 3 bytes; compare without computing 2n + 3, which could wrap. */
	if (cap < 3 || (cap - 3) / 2 < n || (n > 0 && in == NULL))
		return -1;
	out[0] = '0';
	out[1] = 'x';
	for (i = 0; i < n; i++) {
		out[2 + 2 * i] = hexdig[p[i] >> 4];
		out[3 + 2 * i] = hexdig[p[i] & 0x0f];
	}
	out[2 + 2 * n] = '\0';
	return 0;
}

/*
 * Accumulates the digits s[0..len) into a uint64 with an overflow check; leading zeros are
 * harmless here because the check is on the value. len must be at least 1.
 */
static int
parse_digits64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (len == 0)
		return -1;
	for (i = 0; i < len; i++) {
		int d = bp_hex_digit((unsigned char)s[i]);

		if (d < 0)
			return -1;
		if (v > (UINT64_MAX >> 4))
			return -1;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return 0;
}

int
bp_hex_quantity_strict(const char *s, size_t len, uint64_t *out)
{
	if (!has_prefix(s, len, 0) || out == NULL)
		return -1;
	s += 2;
	len -= 2;
	if (len == 0 || len > 16)
		return -1;
	if (s[0] == '0' && len > 1)
		return -1;
	return parse_digits64(s, len, out);
}

int
bp_hex_quantity_lenient(const char *s, size_t len, uint64_t *out)
{
	if (!has_prefix(s, len, 1) || out == NULL)
		return -1;
	return parse_digits64(s + 2, len - 2, out);
}

int
bp_hex_quantity_encode(uint64_t v, char *out, size_t cap)
{
	char tmp[16];
	size_t n = 0;

	if (out == NULL || cap == 0)
		return -1;
	out[0] = '\0';
	do {
		tmp[n++] = hexdig[v & 0x0f];
		v >>= 4;
	} while (v != 0);
	if (cap < n + 3)
		return -1;
	out[0] = '0';
	out[1] = 'x';
	for (size_t i = 0; i < n; i++)
		out[2 + i] = tmp[n - 1 - i];
	out[2 + n] = '\0';
	return 0;
}
