/*
 * lib/core/hex.c: DATA decode/encode, plain hex digits, and the one QUANTITY parser (strict and
 * lenient, at any width) and encoder.
 */
#include <stdint.h>
#include <string.h>

#include "core/hex.h"
#include "unit.h"

/* A literal and its length, so rows may hold NUL bytes. */
#define S(x)	x, sizeof(x) - 1

struct qrow {
	const char	*s;
	size_t		 len;
	int		 strict_ok;	/* expected result of the strict parse: 1 ok, 0 error */
	int		 lenient_ok;
	uint64_t	 v;		/* the value when a parse succeeds */
};

static const struct qrow qrows[] = {
	{ S("0x0"), 1, 1, 0 },
	{ S("0x1"), 1, 1, 1 },
	{ S("0xa"), 1, 1, 10 },
	{ S("0xA"), 1, 1, 10 },
	{ S("0x1a2B"), 1, 1, 0x1a2b },
	{ S("0x400"), 1, 1, 1024 },
	{ S("0xffffffffffffffff"), 1, 1, UINT64_MAX },
	{ S("0xFFFFFFFFFFFFFFFF"), 1, 1, UINT64_MAX },
	{ S("0x7fffffffffffffff"), 1, 1, INT64_MAX },
	{ S("0x8000000000000000"), 1, 1, (uint64_t)INT64_MAX + 1 },
	/* Leading zeros: only the lenient parse takes them. */
	{ S("0x00"), 0, 1, 0 },
	{ S("0x01"), 0, 1, 1 },
	{ S("0x0000000000000000000000000000000001"), 0, 1, 1 },
	{ S("0x0ffffffffffffffff"), 0, 1, UINT64_MAX },
	/* Upper-case prefix: lenient only. */
	{ S("0X1"), 0, 1, 1 },
	/* 2^64 and beyond: overflow for both. */
	{ S("0x10000000000000000"), 0, 0, 0 },
	{ S("0x1ffffffffffffffff"), 0, 0, 0 },
	{ S("0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"), 0, 0, 0 },
	/* Not quantities at all. */
	{ S(""), 0, 0, 0 },
	{ S("0"), 0, 0, 0 },
	{ S("0x"), 0, 0, 0 },
	{ S("0X"), 0, 0, 0 },
	{ S("x1"), 0, 0, 0 },
	{ S("1"), 0, 0, 0 },
	{ S("10"), 0, 0, 0 },
	{ S("0x-1"), 0, 0, 0 },
	{ S("0x+1"), 0, 0, 0 },
	{ S(" 0x1"), 0, 0, 0 },
	{ S("0x1 "), 0, 0, 0 },
	{ S("0x1g"), 0, 0, 0 },
	{ S("0xg"), 0, 0, 0 },
	{ S("0x1\0"), 0, 0, 0 },
	{ S("0x\0" "1"), 0, 0, 0 },
	{ S("0x1\xff"), 0, 0, 0 },
	{ S("0x\xff"), 0, 0, 0 },
	{ S("00x1"), 0, 0, 0 },
	{ S("0x0x1"), 0, 0, 0 },
};

static void
test_quantity_table(void)
{
	size_t i;

	for (i = 0; i < sizeof(qrows) / sizeof(qrows[0]); i++) {
		const struct qrow *r = &qrows[i];
		uint64_t v = 0xdeadbeef;
		int rc;

		rc = bp_hex_quantity_strict(r->s, r->len, &v);
		CU_ASSERT_EQUAL(rc, r->strict_ok ? 0 : -1);
		if (r->strict_ok) {
			CU_ASSERT_EQUAL(v, r->v);
		} else {
			CU_ASSERT_EQUAL(v, 0xdeadbeef);	/* untouched on error */
		}
		v = 0xdeadbeef;
		rc = bp_hex_quantity_lenient(r->s, r->len, &v);
		CU_ASSERT_EQUAL(rc, r->lenient_ok ? 0 : -1);
		if (r->lenient_ok) {
			CU_ASSERT_EQUAL(v, r->v);
		} else {
			CU_ASSERT_EQUAL(v, 0xdeadbeef);
		}
	}
	CU_ASSERT_EQUAL(bp_hex_quantity_strict(NULL, 3, &(uint64_t){ 0 }), -1);
	CU_ASSERT_EQUAL(bp_hex_quantity_lenient(NULL, 3, &(uint64_t){ 0 }), -1);
}

static void
test_quantity_encode(void)
{
	static const struct {
		uint64_t	 v;
		const char	*s;
	} rows[] = {
		{ 0, "0x0" },
		{ 1, "0x1" },
		{ 15, "0xf" },
		{ 16, "0x10" },
		{ 1024, "0x400" },
		{ 0xdeadbeef, "0xdeadbeef" },
		{ UINT64_MAX, "0xffffffffffffffff" },
	};
	char buf[BP_HEX_QUANTITY64_MAX];
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t back;

		CU_ASSERT_EQUAL(bp_hex_quantity_encode(rows[i].v, buf, sizeof(buf)), 0);
		CU_ASSERT_STRING_EQUAL(buf, rows[i].s);
		/* Output always passes the strict parse. */
		CU_ASSERT_EQUAL(bp_hex_quantity_strict(buf, strlen(buf), &back), 0);
		CU_ASSERT_EQUAL(back, rows[i].v);
	}
	/* Exact fit and one byte short. */
	CU_ASSERT_EQUAL(bp_hex_quantity_encode(0x400, buf, 6), 0);
	CU_ASSERT_STRING_EQUAL(buf, "0x400");
	CU_ASSERT_EQUAL(bp_hex_quantity_encode(0x400, buf, 5), -1);
	CU_ASSERT_STRING_EQUAL(buf, "");
	CU_ASSERT_EQUAL(bp_hex_quantity_encode(UINT64_MAX, buf, 18), -1);
	CU_ASSERT_EQUAL(bp_hex_quantity_encode(0, buf, 0), -1);
	CU_ASSERT_EQUAL(bp_hex_quantity_encode(0, NULL, 10), -1);
}

struct drow {
	const char	*s;
	size_t		 len;
	int		 ok;
	const char	*bytes;		/* expected bytes */
	size_t		 n;
};

static const struct drow drows[] = {
	{ S("0x"), 1, S("") },
	{ S("0X"), 1, S("") },
	{ S("0x00"), 1, S("\0") },
	{ S("0x0102"), 1, S("\x01\x02") },
	{ S("0xdeadBEEF"), 1, S("\xde\xad\xbe\xef") },
	{ S("0xFF"), 1, S("\xff") },
	{ S("0x0"), 0, S("") },		/* odd: DATA is whole bytes */
	{ S("0x123"), 0, S("") },
	{ S(""), 0, S("") },
	{ S("0"), 0, S("") },
	{ S("00"), 0, S("") },		/* no prefix */
	{ S("0102"), 0, S("") },
	{ S("0x0g"), 0, S("") },
	{ S("0xg0"), 0, S("") },
	{ S("0x 1"), 0, S("") },
	{ S("0x\0\0"), 0, S("") },
	{ S("0x00\0"), 0, S("") },
	{ S("0x0\xff"), 0, S("") },
	{ S("0x-1"), 0, S("") },
};

static void
test_decode_table(void)
{
	uint8_t out[16];
	size_t i, n;

	for (i = 0; i < sizeof(drows) / sizeof(drows[0]); i++) {
		const struct drow *r = &drows[i];
		int rc;

		n = 999;
		rc = bp_hex_decode(r->s, r->len, out, sizeof(out), &n);
		CU_ASSERT_EQUAL(rc, r->ok ? 0 : -1);
		if (r->ok) {
			CU_ASSERT_EQUAL(n, r->n);
			CU_ASSERT(memcmp(out, r->bytes, r->n) == 0);
		} else {
			CU_ASSERT_EQUAL(n, 999);
		}
	}
}

static void
test_decode_cap(void)
{
	uint8_t out[4], fixed[4];
	size_t n;

	CU_ASSERT_EQUAL(bp_hex_decode(S("0x01020304"), out, 4, &n), 0);
	CU_ASSERT_EQUAL(n, 4);
	CU_ASSERT_EQUAL(bp_hex_decode(S("0x0102030405"), out, 4, &n), -1);
	CU_ASSERT_EQUAL(bp_hex_decode(S("0x01"), out, 0, &n), -1);
	CU_ASSERT_EQUAL(bp_hex_decode(S("0x"), NULL, 0, &n), 0);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_EQUAL(bp_hex_decode(NULL, 4, out, 4, &n), -1);
	CU_ASSERT_EQUAL(bp_hex_decode(S("0x01"), out, 4, NULL), -1);

	memset(fixed, 0xaa, sizeof(fixed));
	CU_ASSERT_EQUAL(bp_hex_decode_fixed(S("0xA1b2C3d4"), fixed, 4), 0);
	CU_ASSERT(memcmp(fixed, "\xa1\xb2\xc3\xd4", 4) == 0);
	memset(fixed, 0xaa, sizeof(fixed));
	CU_ASSERT_EQUAL(bp_hex_decode_fixed(S("0xa1b2c3"), fixed, 4), -1);
	CU_ASSERT_EQUAL(bp_hex_decode_fixed(S("0xa1b2c3d4e5"), fixed, 4), -1);
	CU_ASSERT_EQUAL(bp_hex_decode_fixed(S("0xa1b2c3d"), fixed, 4), -1);
	CU_ASSERT_EQUAL(bp_hex_decode_fixed(S("0x"), fixed, 4), -1);
	CU_ASSERT_EQUAL(bp_hex_decode_fixed(S("0"), fixed, 4), -1);
	CU_ASSERT_EQUAL(fixed[0], 0xaa);	/* wrong sizes write nothing */
	CU_ASSERT_EQUAL(bp_hex_decode_fixed(S("0x"), fixed, 0), 0);
}

static void
test_encode(void)
{
	char buf[16];
	uint8_t back[8];
	size_t n;

	CU_ASSERT_EQUAL(bp_hex_encode("\x00\xab\xff", 3, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "0x00abff");
	CU_ASSERT_EQUAL(bp_hex_decode(buf, strlen(buf), back, sizeof(back), &n), 0);
	CU_ASSERT_EQUAL(n, 3);
	CU_ASSERT(memcmp(back, "\x00\xab\xff", 3) == 0);
	CU_ASSERT_EQUAL(bp_hex_encode(NULL, 0, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "0x");
	/* 3 bytes need 9: exact fit and one short. */
	CU_ASSERT_EQUAL(bp_hex_encode("\x01\x02\x03", 3, buf, 9), 0);
	CU_ASSERT_STRING_EQUAL(buf, "0x010203");
	CU_ASSERT_EQUAL(bp_hex_encode("\x01\x02\x03", 3, buf, 8), -1);
	CU_ASSERT_STRING_EQUAL(buf, "");
	CU_ASSERT_EQUAL(bp_hex_encode("", 0, buf, 2), -1);
	CU_ASSERT_EQUAL(bp_hex_encode("", 0, buf, 0), -1);
	/* A length whose 2n + 3 would wrap must fail, not overflow. */
	CU_ASSERT_EQUAL(bp_hex_encode("x", SIZE_MAX / 2 + 1, buf, sizeof(buf)), -1);
	CU_ASSERT_EQUAL(bp_hex_encode("x", SIZE_MAX, buf, sizeof(buf)), -1);
}

static void
test_digit(void)
{
	int c, n = 0;

	for (c = -1; c < 256; c++)
		if (bp_hex_digit(c) >= 0)
			n++;
	CU_ASSERT_EQUAL(n, 22);
	CU_ASSERT_EQUAL(bp_hex_digit('0'), 0);
	CU_ASSERT_EQUAL(bp_hex_digit('9'), 9);
	CU_ASSERT_EQUAL(bp_hex_digit('a'), 10);
	CU_ASSERT_EQUAL(bp_hex_digit('F'), 15);
	CU_ASSERT_EQUAL(bp_hex_digit('g'), -1);
	CU_ASSERT_EQUAL(bp_hex_digit('\0'), -1);
	CU_ASSERT_EQUAL(bp_hex_digit(0xff), -1);
}

/* The one parser at other widths: u256 (32 bytes) and one byte; the encoder back. */
static void
test_quantity_widths(void)
{
	static const char max256[] = "0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff";
	uint8_t be[32], one;
	char out[80];

	CU_ASSERT_EQUAL(bp_hex_quantity_be(S(max256), 1, be, 32), 0);
	CU_ASSERT_EQUAL(be[0], 0xff);
	CU_ASSERT_EQUAL(be[31], 0xff);
	CU_ASSERT_EQUAL(bp_hex_quantity_encode_be(be, 32, out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, max256);
	/* 2^256: one digit too many, strict or lenient. */
	CU_ASSERT_EQUAL(bp_hex_quantity_be(S("0x10000000000000000000000000000000000000000000000000000000000000000"),
	    0, be, 32), -1);
	/* Leading zeros count against the width only when strict (which refuses them anyway). */
	CU_ASSERT_EQUAL(bp_hex_quantity_be(S("0x000000ff"), 0, &one, 1), 0);
	CU_ASSERT_EQUAL(one, 0xff);
	CU_ASSERT_EQUAL(bp_hex_quantity_be(S("0x000000ff"), 1, &one, 1), -1);
	CU_ASSERT_EQUAL(bp_hex_quantity_be(S("0x100"), 0, &one, 1), -1);
	CU_ASSERT_EQUAL(bp_hex_quantity_be(S("0X1"), 1, &one, 1), -1);
	CU_ASSERT_EQUAL(bp_hex_quantity_be(S("0X1"), 0, &one, 1), 0);
	CU_ASSERT_EQUAL(bp_hex_quantity_be(S("0x1\0"), 0, &one, 1), -1);
	CU_ASSERT_EQUAL(bp_hex_quantity_be(S("0x"), 0, &one, 1), -1);
	CU_ASSERT_EQUAL(bp_hex_quantity_be(S("0x1"), 0, NULL, 1), -1);
	/* The encoder: zero, one odd digit, caps exact to the byte. */
	memset(be, 0, sizeof(be));
	CU_ASSERT_EQUAL(bp_hex_quantity_encode_be(be, 32, out, 4), 0);
	CU_ASSERT_STRING_EQUAL(out, "0x0");
	CU_ASSERT_EQUAL(bp_hex_quantity_encode_be(be, 32, out, 3), -1);
	CU_ASSERT_STRING_EQUAL(out, "");
	be[30] = 0x01;
	be[31] = 0x0a;
	CU_ASSERT_EQUAL(bp_hex_quantity_encode_be(be, 32, out, 6), 0);
	CU_ASSERT_STRING_EQUAL(out, "0x10a");
	CU_ASSERT_EQUAL(bp_hex_quantity_encode_be(be, 32, out, 5), -1);
	CU_ASSERT_EQUAL(bp_hex_quantity_encode_be(be, 0, out, 5), 0);
	CU_ASSERT_STRING_EQUAL(out, "0x0");
	CU_ASSERT_EQUAL(bp_hex_quantity_encode_be(NULL, 1, out, 5), -1);
}

/* Digits without the prefix: the same encoder as bp_hex_encode. */
static void
test_encode_digits(void)
{
	char buf[16];

	CU_ASSERT_EQUAL(bp_hex_encode_digits("\x00\x01\xab\xff", 4, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "0001abff");
	CU_ASSERT_EQUAL(bp_hex_encode_digits("", 0, buf, 1), 0);
	CU_ASSERT_STRING_EQUAL(buf, "");
	CU_ASSERT_EQUAL(bp_hex_encode_digits("\x01\x02", 2, buf, 5), 0);
	CU_ASSERT_STRING_EQUAL(buf, "0102");
	CU_ASSERT_EQUAL(bp_hex_encode_digits("\x01\x02", 2, buf, 4), -1);
	CU_ASSERT_STRING_EQUAL(buf, "");
	CU_ASSERT_EQUAL(bp_hex_encode_digits("x", SIZE_MAX / 2 + 1, buf, sizeof(buf)), -1);
	CU_ASSERT_EQUAL(bp_hex_encode_digits(NULL, 1, buf, sizeof(buf)), -1);
	CU_ASSERT_EQUAL(bp_hex_encode_digits("x", 1, NULL, 10), -1);
}

BP_UNIT_SUITE(hex, NULL, NULL,
	{ "quantity strict and lenient table", test_quantity_table },
	{ "quantity encode", test_quantity_encode },
	{ "data decode table", test_decode_table },
	{ "data decode caps and fixed size", test_decode_cap },
	{ "data encode", test_encode },
	{ "hex digit", test_digit },
	{ "quantity at other widths", test_quantity_widths },
	{ "encode digits", test_encode_digits })
