/*
 * Address parsing and formatting with the EIP-55 mixed-case checksum: hash the 40 lower-case
 * hex digits (as ASCII) with Keccak-256; letter i is upper case when nibble i of that hash
 * is 8 or more.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "address.h"
#include "core/hex.h"
#include "core/http.h"
#include "keccak.h"

/* Writes the checksummed digits (no prefix, no NUL) for lower-case digits lower[0..40). */
static void
apply_checksum(const char lower[40], char out[40])
{
	uint8_t h[32];
	int i;

	bp_keccak256(lower, 40, h);
	for (i = 0; i < 40; i++) {
		unsigned int nib = (i % 2 == 0) ? h[i / 2] >> 4 : h[i / 2] & 0x0f;
		char c = lower[i];

		if (c >= 'a' && c <= 'f' && nib >= 8)
			c = (char)(c - 'a' + 'A');
		out[i] = c;
	}
}

int
bp_addr_parse(const char *s, size_t len, int flags, uint8_t out[BP_ADDR_LEN])
{
	uint8_t tmp[BP_ADDR_LEN];
	int upper = 0, lower = 0, i;

	if (s == NULL || len != 42 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return -1;
	if (bp_hex_decode_fixed(s, len, tmp, sizeof(tmp)) != 0)
		return -1;
	for (i = 2; i < 42; i++) {
		if (s[i] >= 'a' && s[i] <= 'f')
			lower = 1;
		else if (s[i] >= 'A' && s[i] <= 'F')
			upper = 1;
	}
	if ((flags & BP_ADDR_CHECKSUM) && upper && lower) {
		char lc[40], want[40];

		for (i = 0; i < 40; i++) {
			char c = s[2 + i];

			lc[i] = (c >= 'A' && c <= 'F') ? (char)(c - 'A' + 'a') : c;
		}
		apply_checksum(lc, want);
		if (memcmp(want, s + 2, 40) != 0)
			return -1;
	}
	memcpy(out, tmp, sizeof(tmp));
	return 0;
}

int
bp_addr_format_lower(const uint8_t addr[BP_ADDR_LEN], char *out, size_t cap)
{
	if (cap < BP_ADDR_STR_MAX) {
		if (out != NULL && cap > 0)
			out[0] = '\0';
		return -1;
	}
	return bp_hex_encode(addr, BP_ADDR_LEN, out, cap);
}

int
bp_addr_format_checksum(const uint8_t addr[BP_ADDR_LEN], char *out, size_t cap)
{
	char cs[40];

	if (bp_addr_format_lower(addr, out, cap) != 0)
		return -1;
	apply_checksum(out + 2, cs);
	memcpy(out + 2, cs, sizeof(cs));
	return 0;
}

int
bp_addr_param(struct bp_req *r, const char *name, uint8_t out[BP_ADDR_LEN])
{
	const char *s = bp_req_param(r, name);

	if (s == NULL || bp_addr_parse(s, strlen(s), BP_ADDR_CHECKSUM, out) == -1)
		return bp_error(r, 400, "invalid_request", "%s must be a 0x address of 40 hex "
		    "digits (mixed case must be a valid EIP-55 checksum)", name);
	return 0;
}
