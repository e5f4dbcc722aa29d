/*
 * libFuzzer harness for the text parsers: hex DATA, QUANTITY (strict and lenient), u256
 * (decimal, hex, quantity, units) and addresses. Beyond memory safety it checks the rules that
 * tie them together, aborting on a violation: strict implies lenient with the same value, a
 * printed value parses back to itself, the uint64 and u256 quantity parsers agree.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Ilib lib/core/hex.c lib/evm/[a-z]*.c \
 *       tests/fuzz/fuzz_hex.c -lsecp256k1 -lcrypto
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/hex.h"
#include "evm/address.h"
#include "evm/u256.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_hex(const char *s, size_t len)
{
	uint8_t out[256], fixed[32];
	char back[2 * 256 + 3];
	size_t n;

	if (bp_hex_decode(s, len, out, sizeof(out), &n) == 0) {
		if (n != (len - 2) / 2 || bp_hex_encode(out, n, back, sizeof(back)) != 0 ||
		    strlen(back) != len || strncasecmp(back, s, len) != 0)
			abort();
	}
	if (bp_hex_decode_fixed(s, len, fixed, sizeof(fixed)) == 0 && len != 66)
		abort();
}

static void
check_quantity(const char *s, size_t len)
{
	uint64_t st, le;
	struct bp_u256 u;
	char back[BP_HEX_QUANTITY64_MAX];
	int strict = bp_hex_quantity_strict(s, len, &st) == 0;
	int lenient = bp_hex_quantity_lenient(s, len, &le) == 0;

	if (strict) {
		if (!lenient || st != le)
			abort();
		/* Strict input is canonical up to the case of its digits. */
		if (bp_hex_quantity_encode(st, back, sizeof(back)) != 0 ||
		    strlen(back) != len || strncasecmp(back, s, len) != 0)
			abort();
		/* The u256 strict parser takes it too, with the same value. */
		if (bp_u256_from_quantity(&u, s, len) != 0 || bp_u256_to_u64(&u, &st) != 0 ||
		    st != le)
			abort();
	}
	if (lenient) {
		if (bp_u256_from_hex(&u, s, len) != 0 || bp_u256_to_u64(&u, &st) != 0 || st != le)
			abort();
	}
}

static void
check_u256(const char *s, size_t len, unsigned int decimals)
{
	struct bp_u256 a, b;
	char buf[BP_U256_UNITS_MAX];

	if (bp_u256_from_dec(&a, s, len) == 0) {
		if (bp_u256_to_dec(&a, buf, sizeof(buf)) != 0 ||
		    bp_u256_from_dec(&b, buf, strlen(buf)) != 0 || bp_u256_cmp(&a, &b) != 0)
			abort();
	}
	if (bp_u256_from_hex(&a, s, len) == 0) {
		if (bp_u256_to_quantity(&a, buf, sizeof(buf)) != 0 ||
		    bp_u256_from_quantity(&b, buf, strlen(buf)) != 0 || bp_u256_cmp(&a, &b) != 0)
			abort();
	}
	if (bp_u256_from_quantity(&a, s, len) == 0 && bp_u256_from_hex(&b, s, len) != 0)
		abort();
	(void)bp_u256_parse(&a, s, len);
	if (bp_u256_parse_units(&a, s, len, decimals) == 0) {
		if (bp_u256_format_units(&a, decimals, buf, sizeof(buf)) != 0 ||
		    bp_u256_parse_units(&b, buf, strlen(buf), decimals) != 0 ||
		    bp_u256_cmp(&a, &b) != 0)
			abort();
	}
}

static void
check_address(const char *s, size_t len)
{
	uint8_t a[20], b[20];
	char buf[BP_ADDR_STR_MAX];

	if (bp_addr_parse(s, len, BP_ADDR_CHECKSUM, a) == 0 && bp_addr_parse(s, len, 0, b) != 0)
		abort();
	if (bp_addr_parse(s, len, 0, a) == 0) {
		if (bp_addr_format_checksum(a, buf, sizeof(buf)) != 0 ||
		    bp_addr_parse(buf, strlen(buf), BP_ADDR_CHECKSUM, b) != 0 ||
		    memcmp(a, b, 20) != 0)
			abort();
		if (bp_addr_format_lower(a, buf, sizeof(buf)) != 0 ||
		    strncasecmp(buf + 2, s + 2, 40) != 0)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int decimals;
	char *s;

	if (size == 0)
		return 0;
	/* The first byte picks the decimals; the rest is the string, not NUL-terminated. */
	decimals = data[0];
	size--;
	if ((s = malloc(size > 0 ? size : 1)) == NULL)
		return 0;
	if (size > 0)
		memcpy(s, data + 1, size);
	check_hex(s, size);
	check_quantity(s, size);
	check_u256(s, size, decimals);
	check_address(s, size);
	free(s);
	return 0;
}
