/*
 * lib/evm/u256.c: parsing, printing, arithmetic and exact unit formatting of 256-bit values.
 */
#include <stdint.h>
#include <string.h>

#include "evm/u256.h"
#include "unit.h"

#define S(x)	x, sizeof(x) - 1

#define MAX_DEC	"115792089237316195423570985008687907853269984665640564039457584007913129639935"
#define TWO256	"115792089237316195423570985008687907853269984665640564039457584007913129639936"
#define MAX_HEX	"0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"

static const struct bp_u256 u_max = { { UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX } };

static struct bp_u256
u(uint64_t v)
{
	struct bp_u256 r;

	bp_u256_from_u64(&r, v);
	return r;
}

/* Parses a literal that the test knows is valid (decimal or 0x hex). */
static struct bp_u256
p(const char *s)
{
	struct bp_u256 r = { { 0, 0, 0, 0 } };

	CU_ASSERT_FATAL(bp_u256_parse(&r, s, strlen(s)) == 0);
	return r;
}

struct prow {
	const char	*s;
	size_t		 len;
	int		 dec_ok;	/* bp_u256_from_dec */
	int		 hex_ok;	/* bp_u256_from_hex (lenient) */
	int		 qty_ok;	/* bp_u256_from_quantity (strict) */
	const char	*dec;		/* the value in decimal when a parse succeeds */
};

static const struct prow prows[] = {
	{ S("0"), 1, 0, 0, "0" },
	{ S("000"), 1, 0, 0, "0" },
	{ S("1"), 1, 0, 0, "1" },
	{ S("18446744073709551616"), 1, 0, 0, "18446744073709551616" },
	{ S(MAX_DEC), 1, 0, 0, MAX_DEC },
	{ S("0000" MAX_DEC), 1, 0, 0, MAX_DEC },
	{ S(TWO256), 0, 0, 0, NULL },			/* 2^256 exactly */
	{ S("115792089237316195423570985008687907853269984665640564039457584007913129639945"),
	    0, 0, 0, NULL },				/* overflow caught in the add */
	{ S("999999999999999999999999999999999999999999999999999999999999999999999999999999"),
	    0, 0, 0, NULL },
	{ S(""), 0, 0, 0, NULL },
	{ S("-1"), 0, 0, 0, NULL },
	{ S("+1"), 0, 0, 0, NULL },
	{ S("1.0"), 0, 0, 0, NULL },
	{ S("1e3"), 0, 0, 0, NULL },
	{ S(" 1"), 0, 0, 0, NULL },
	{ S("1\0"), 0, 0, 0, NULL },
	{ S("1\xff"), 0, 0, 0, NULL },
	{ S("0x0"), 0, 1, 1, "0" },
	{ S("0x00"), 0, 1, 0, "0" },
	{ S("0x01"), 0, 1, 0, "1" },
	{ S("0X1"), 0, 1, 0, "1" },
	{ S("0xDE0B6B3A7640000"), 0, 1, 1, "1000000000000000000" },
	{ S(MAX_HEX), 0, 1, 1, MAX_DEC },
	{ S("0x000" "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"),
	    0, 1, 0, MAX_DEC },
	{ S("0x1" "0000000000000000000000000000000000000000000000000000000000000000"),
	    0, 0, 0, NULL },				/* 2^256 exactly */
	{ S("0x"), 0, 0, 0, NULL },
	{ S("0x1g"), 0, 0, 0, NULL },
	{ S("0x1\0"), 0, 0, 0, NULL },
	{ S("0x-1"), 0, 0, 0, NULL },
};

static void
test_parse_table(void)
{
	static const struct bp_u256 canary = { { 7, 7, 7, 7 } };
	size_t i;

	for (i = 0; i < sizeof(prows) / sizeof(prows[0]); i++) {
		const struct prow *r = &prows[i];
		struct bp_u256 v;
		char buf[BP_U256_DEC_MAX];
		int (*fn[3])(struct bp_u256 *, const char *, size_t) = {
			bp_u256_from_dec, bp_u256_from_hex, bp_u256_from_quantity };
		int ok[3] = { r->dec_ok, r->hex_ok, r->qty_ok };
		int k;

		for (k = 0; k < 3; k++) {
			v = canary;
			CU_ASSERT_EQUAL(fn[k](&v, r->s, r->len), ok[k] ? 0 : -1);
			if (ok[k]) {
				CU_ASSERT_EQUAL(bp_u256_to_dec(&v, buf, sizeof(buf)), 0);
				CU_ASSERT_STRING_EQUAL(buf, r->dec);
			} else {
				CU_ASSERT_EQUAL(bp_u256_cmp(&v, &canary), 0);
			}
		}
		v = canary;
		CU_ASSERT_EQUAL(bp_u256_parse(&v, r->s, r->len),
		    (r->dec_ok || r->hex_ok) ? 0 : -1);
	}
	CU_ASSERT_EQUAL(bp_u256_from_dec(&(struct bp_u256){ { 0 } }, NULL, 1), -1);
	CU_ASSERT_EQUAL(bp_u256_from_hex(&(struct bp_u256){ { 0 } }, NULL, 3), -1);
	/* A quantity longer than 64 digits is rejected even when it would be in range. */
	CU_ASSERT_EQUAL(bp_u256_from_quantity(&(struct bp_u256){ { 0 } },
	    S("0x1" "0000000000000000000000000000000000000000000000000000000000000000")), -1);
}

static void
test_print(void)
{
	static const struct {
		const char	*in;
		const char	*dec;
		const char	*hex;
	} rows[] = {
		{ "0", "0", "0x0" },
		{ "1", "1", "0x1" },
		{ "255", "255", "0xff" },
		{ "18446744073709551615", "18446744073709551615", "0xffffffffffffffff" },
		{ "18446744073709551616", "18446744073709551616", "0x10000000000000000" },
		{ MAX_DEC, MAX_DEC, MAX_HEX },
		{ "0x0001", "1", "0x1" },
	};
	char buf[BP_U256_HEX_MAX + 20];
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct bp_u256 v = p(rows[i].in);

		CU_ASSERT_EQUAL(bp_u256_to_dec(&v, buf, sizeof(buf)), 0);
		CU_ASSERT_STRING_EQUAL(buf, rows[i].dec);
		CU_ASSERT_EQUAL(bp_u256_to_quantity(&v, buf, sizeof(buf)), 0);
		CU_ASSERT_STRING_EQUAL(buf, rows[i].hex);
	}
	/* Caps: exact fit, one short. */
	CU_ASSERT_EQUAL(bp_u256_to_dec(&u_max, buf, BP_U256_DEC_MAX), 0);
	CU_ASSERT_EQUAL(bp_u256_to_dec(&u_max, buf, BP_U256_DEC_MAX - 1), -1);
	CU_ASSERT_STRING_EQUAL(buf, "");
	CU_ASSERT_EQUAL(bp_u256_to_quantity(&u_max, buf, BP_U256_HEX_MAX), 0);
	CU_ASSERT_EQUAL(bp_u256_to_quantity(&u_max, buf, BP_U256_HEX_MAX - 1), -1);
	CU_ASSERT_EQUAL(bp_u256_to_dec(&u_max, buf, 0), -1);
	CU_ASSERT_EQUAL(bp_u256_to_quantity(&u_max, NULL, 100), -1);
}

static void
test_add_sub(void)
{
	struct bp_u256 r, one = u(1), zero = u(0), a, b;
	char buf[BP_U256_DEC_MAX];

	/* Carry across every limb. */
	CU_ASSERT_EQUAL(bp_u256_add(&r, &u_max, &one), 1);
	CU_ASSERT(bp_u256_is_zero(&r));
	a = p("18446744073709551615");
	CU_ASSERT_EQUAL(bp_u256_add(&r, &a, &one), 0);
	CU_ASSERT_EQUAL(bp_u256_to_dec(&r, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "18446744073709551616");
	CU_ASSERT_EQUAL(bp_u256_add(&r, &u_max, &zero), 0);
	CU_ASSERT_EQUAL(bp_u256_cmp(&r, &u_max), 0);
	CU_ASSERT_EQUAL(bp_u256_add(&r, &u_max, &u_max), 1);	/* 2^257 - 2 wraps to 2^256 - 2 */
	CU_ASSERT_EQUAL(bp_u256_to_dec(&r, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf,
	    "115792089237316195423570985008687907853269984665640564039457584007913129639934");
	/* Aliasing: r = r + r. */
	a = p("0x8000000000000000000000000000000000000000000000000000000000000000");
	CU_ASSERT_EQUAL(bp_u256_add(&a, &a, &a), 1);
	CU_ASSERT(bp_u256_is_zero(&a));

	/* Borrow. */
	CU_ASSERT_EQUAL(bp_u256_sub(&r, &zero, &one), 1);
	CU_ASSERT_EQUAL(bp_u256_cmp(&r, &u_max), 0);
	a = p("18446744073709551616");
	CU_ASSERT_EQUAL(bp_u256_sub(&r, &a, &one), 0);
	CU_ASSERT_EQUAL(bp_u256_to_dec(&r, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "18446744073709551615");
	a = p("1000");
	b = p("1001");
	CU_ASSERT_EQUAL(bp_u256_sub(&r, &a, &b), 1);
	CU_ASSERT_EQUAL(bp_u256_cmp(&r, &u_max), 0);
	CU_ASSERT_EQUAL(bp_u256_sub(&r, &b, &a), 0);
	CU_ASSERT_EQUAL(bp_u256_cmp(&r, &one), 0);
	CU_ASSERT_EQUAL(bp_u256_sub(&r, &u_max, &u_max), 0);
	CU_ASSERT(bp_u256_is_zero(&r));
	/* The borrow from the lowest limb must travel through a limb that is zero. */
	a = p("0x100000000000000000000000000000000");
	CU_ASSERT_EQUAL(bp_u256_sub(&r, &a, &one), 0);
	CU_ASSERT_EQUAL(bp_u256_to_quantity(&r, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "0xffffffffffffffffffffffffffffffff");
}

static void
test_mul_div(void)
{
	struct bp_u256 r, a;
	char buf[BP_U256_DEC_MAX];
	uint64_t rem;

	a = p("1000000000000000000");
	CU_ASSERT_EQUAL(bp_u256_mul_u64(&r, &a, 1000000000000000000ULL), 0);
	CU_ASSERT_EQUAL(bp_u256_to_dec(&r, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "1000000000000000000000000000000000000");
	CU_ASSERT_EQUAL(bp_u256_mul_u64(&r, &u_max, 2), 1);
	CU_ASSERT_EQUAL(bp_u256_mul_u64(&r, &u_max, 1), 0);
	CU_ASSERT_EQUAL(bp_u256_mul_u64(&r, &u_max, 0), 0);
	CU_ASSERT(bp_u256_is_zero(&r));
	/* (2^256 - 1) / 3 is exact; * 3 is back without overflow, * 4 overflows. */
	CU_ASSERT_EQUAL(bp_u256_div_u64(&r, &u_max, 3, &rem), 0);
	CU_ASSERT_EQUAL(rem, 0);
	CU_ASSERT_EQUAL(bp_u256_mul_u64(&a, &r, 3), 0);
	CU_ASSERT_EQUAL(bp_u256_cmp(&a, &u_max), 0);
	CU_ASSERT_EQUAL(bp_u256_mul_u64(&a, &r, 4), 1);

	CU_ASSERT_EQUAL(bp_u256_div_u64(&r, &u_max, 10, &rem), 0);
	CU_ASSERT_EQUAL(rem, 5);
	CU_ASSERT_EQUAL(bp_u256_to_dec(&r, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf,
	    "11579208923731619542357098500868790785326998466564056403945758400791312963993");
	CU_ASSERT_EQUAL(bp_u256_div_u64(&r, &u_max, UINT64_MAX, &rem), 0);
	CU_ASSERT_EQUAL(rem, 0);
	CU_ASSERT_EQUAL(bp_u256_to_quantity(&r, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf,
	    "0x1000000000000000100000000000000010000000000000001");
	CU_ASSERT_EQUAL(bp_u256_div_u64(&r, &u_max, 0, &rem), -1);
	CU_ASSERT_EQUAL(bp_u256_div_u64(&r, &u_max, 1, NULL), 0);
	CU_ASSERT_EQUAL(bp_u256_cmp(&r, &u_max), 0);
	CU_ASSERT_EQUAL(bp_u256_mod_u64(&u_max, 1000, &rem), 0);
	CU_ASSERT_EQUAL(rem, 935);
	CU_ASSERT_EQUAL(bp_u256_mod_u64(&u_max, 0, &rem), -1);
}

static void
test_cmp_conv(void)
{
	struct bp_u256 a = u(5), b = u(7);
	uint8_t be[32], want[32];
	uint64_t v;

	CU_ASSERT_EQUAL(bp_u256_cmp(&a, &b), -1);
	CU_ASSERT_EQUAL(bp_u256_cmp(&b, &a), 1);
	CU_ASSERT_EQUAL(bp_u256_cmp(&a, &a), 0);
	/* A high limb decides over all the low limbs. */
	a = p("0x1000000000000000000000000000000000000000000000000");
	b = p("0xffffffffffffffffffffffffffffffffffffffffffffffff");
	CU_ASSERT_EQUAL(bp_u256_cmp(&a, &b), 1);

	CU_ASSERT_EQUAL(bp_u256_to_u64(&b, &v), -1);
	a = u(42);
	CU_ASSERT_EQUAL(bp_u256_to_u64(&a, &v), 0);
	CU_ASSERT_EQUAL(v, 42);
	a = p("18446744073709551616");
	CU_ASSERT_EQUAL(bp_u256_to_u64(&a, &v), -1);

	a = p("0x0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20");
	bp_u256_to_be32(&a, be);
	for (int i = 0; i < 32; i++)
		want[i] = (uint8_t)(i + 1);
	CU_ASSERT(memcmp(be, want, 32) == 0);
	bp_u256_from_be32(&b, want);
	CU_ASSERT_EQUAL(bp_u256_cmp(&a, &b), 0);
	CU_ASSERT_EQUAL(bp_u256_from_be(&b, (const uint8_t *)"\x04\x00", 2), 0);
	CU_ASSERT_EQUAL(bp_u256_to_u64(&b, &v), 0);
	CU_ASSERT_EQUAL(v, 1024);
	CU_ASSERT_EQUAL(bp_u256_from_be(&b, NULL, 0), 0);
	CU_ASSERT(bp_u256_is_zero(&b));
	CU_ASSERT_EQUAL(bp_u256_from_be(&b, want, 32), 0);
	CU_ASSERT_EQUAL(bp_u256_cmp(&a, &b), 0);
	CU_ASSERT_EQUAL(bp_u256_from_be(&b, want, 33), -1);
}

static void
test_format_units(void)
{
	static const struct {
		const char	*v;
		unsigned int	 dec;
		const char	*out;
	} rows[] = {
		{ "0", 0, "0" },
		{ "0", 18, "0" },
		{ "1", 0, "1" },
		{ "1234", 0, "1234" },
		{ "1234567800", 6, "1234.5678" },
		{ "12345678", 4, "1234.5678" },
		{ "1000000", 6, "1" },
		{ "1000000000000000000", 18, "1" },
		{ "1500000000000000000", 18, "1.5" },
		{ "1", 18, "0.000000000000000001" },
		{ "1", 1, "0.1" },
		{ "10", 1, "1" },
		{ "100", 1, "10" },
		{ "123", 3, "0.123" },
		{ "1230", 3, "1.23" },
		{ "120", 3, "0.12" },
		{ MAX_DEC, 0, MAX_DEC },
		{ MAX_DEC, 18,
		    "115792089237316195423570985008687907853269984665640564039457.584007913129639935" },
		{ MAX_DEC, 78,
		    "0.115792089237316195423570985008687907853269984665640564039457584007913129639935" },
		{ MAX_DEC, 77,
		    "1.15792089237316195423570985008687907853269984665640564039457584007913129639935" },
	};
	char buf[BP_U256_UNITS_MAX];
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct bp_u256 v = p(rows[i].v), back;

		memset(buf, 'z', sizeof(buf));
		CU_ASSERT_EQUAL(bp_u256_format_units(&v, rows[i].dec, buf, sizeof(buf)), 0);
		CU_ASSERT_STRING_EQUAL(buf, rows[i].out);
		/* And back again, exactly. */
		CU_ASSERT_EQUAL(bp_u256_parse_units(&back, buf, strlen(buf), rows[i].dec), 0);
		CU_ASSERT_EQUAL(bp_u256_cmp(&back, &v), 0);
	}
	{
		struct bp_u256 v = p("1"), back;
		char want[BP_U256_UNITS_MAX];

		/* The longest output: "0." + 254 zeros + "1" fills BP_U256_UNITS_MAX exactly. */
		want[0] = '0';
		want[1] = '.';
		memset(want + 2, '0', 254);
		want[256] = '1';
		want[257] = '\0';
		CU_ASSERT_EQUAL(bp_u256_format_units(&v, 255, buf, sizeof(buf)), 0);
		CU_ASSERT_STRING_EQUAL(buf, want);
		CU_ASSERT_EQUAL(bp_u256_parse_units(&back, buf, strlen(buf), 255), 0);
		CU_ASSERT_EQUAL(bp_u256_cmp(&back, &v), 0);
		v = p("1000");
		want[253] = '1';
		want[254] = '\0';
		CU_ASSERT_EQUAL(bp_u256_format_units(&v, 255, buf, sizeof(buf)), 0);
		CU_ASSERT_STRING_EQUAL(buf, want);
		v = p("1");
		CU_ASSERT_EQUAL(bp_u256_format_units(&v, 256, buf, sizeof(buf)), -1);
		CU_ASSERT_EQUAL(bp_u256_format_units(&v, 255, buf, sizeof(buf) - 1), -1);
		CU_ASSERT_STRING_EQUAL(buf, "");
		v = p("1234567800");
		CU_ASSERT_EQUAL(bp_u256_format_units(&v, 6, buf, 10), 0);	/* exact */
		CU_ASSERT_STRING_EQUAL(buf, "1234.5678");
		CU_ASSERT_EQUAL(bp_u256_format_units(&v, 6, buf, 9), -1);
		CU_ASSERT_EQUAL(bp_u256_format_units(&v, 6, buf, 0), -1);
		CU_ASSERT_EQUAL(bp_u256_format_units(&u_max, 0, buf, BP_U256_DEC_MAX), 0);
		CU_ASSERT_EQUAL(bp_u256_format_units(&u_max, 0, buf, BP_U256_DEC_MAX - 1), -1);
	}
}

static void
test_parse_units(void)
{
	static const struct {
		const char	*s;
		size_t		 len;
		unsigned int	 dec;
		const char	*want;		/* decimal, NULL for an error */
	} rows[] = {
		{ S("1"), 18, "1000000000000000000" },
		{ S("1.5"), 18, "1500000000000000000" },
		{ S("0.000000000000000001"), 18, "1" },
		{ S("1.50"), 1, "15" },			/* excess zeros are exact */
		{ S("1.55"), 1, NULL },			/* excess non-zero digit */
		{ S("0001.5"), 6, "1500000" },
		{ S("0"), 0, "0" },
		{ S("0.0"), 0, "0" },
		/* Around the 19 digits the parser takes at a time, and a USD amount (36 decimals). */
		{ S("9999999999999999999"), 0, "9999999999999999999" },
		{ S("1000000000000000000.0"), 1, "10000000000000000000" },
		{ S("2.000000000000000000000000000000000001"), 36,
		    "2000000000000000000000000000000000001" },
		{ S(MAX_DEC), 0, MAX_DEC },
		{ S(MAX_DEC), 1, NULL },		/* * 10 overflows */
		{ S("115792089237316195423570985008687907853269984665640564039457.584007913129639935"),
		    18, MAX_DEC },
		{ S("115792089237316195423570985008687907853269984665640564039457.584007913129639936"),
		    18, NULL },				/* 2^256 exactly */
		{ S(""), 6, NULL },
		{ S("."), 6, NULL },
		{ S(".5"), 6, NULL },
		{ S("5."), 6, NULL },
		{ S("1..5"), 6, NULL },
		{ S("1.5.1"), 6, NULL },
		{ S("-1"), 6, NULL },
		{ S("1e6"), 6, NULL },
		{ S("1,5"), 6, NULL },
		{ S(" 1"), 6, NULL },
		{ S("1.5\0"), 6, NULL },
		{ S("1\0.5"), 6, NULL },
		{ S("\xff"), 6, NULL },
		{ S("1"), 256, NULL },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct bp_u256 v = u(777);
		char buf[BP_U256_DEC_MAX];
		int rc = bp_u256_parse_units(&v, rows[i].s, rows[i].len, rows[i].dec);

		CU_ASSERT_EQUAL(rc, rows[i].want != NULL ? 0 : -1);
		if (rows[i].want != NULL) {
			CU_ASSERT_EQUAL(bp_u256_to_dec(&v, buf, sizeof(buf)), 0);
			CU_ASSERT_STRING_EQUAL(buf, rows[i].want);
		} else {
			struct bp_u256 w = u(777);

			CU_ASSERT_EQUAL(bp_u256_cmp(&v, &w), 0);
		}
	}
}

BP_UNIT_SUITE(evm_u256, NULL, NULL,
	{ "parse table (dec, hex, quantity)", test_parse_table },
	{ "to decimal and quantity", test_print },
	{ "add and sub with carry and borrow", test_add_sub },
	{ "mul, div and mod by uint64", test_mul_div },
	{ "compare and byte conversions", test_cmp_conv },
	{ "format units", test_format_units },
	{ "parse units", test_parse_units })
