/*
 * lib/core/util.c: the bounded integer parser (with hostile rows), timestamps, hex, SHA-256, the
 * constant-time compare, bp_strlcpy and the random source.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/hex.h"
#include "core/util.h"
#include "unit.h"

struct irow {
	const char	*s;
	int64_t		 min, max;
	int		 ok;
	int64_t		 v;
};

static const struct irow irows[] = {
	{ "0", INT64_MIN, INT64_MAX, 1, 0 },
	{ "1", INT64_MIN, INT64_MAX, 1, 1 },
	{ "-1", INT64_MIN, INT64_MAX, 1, -1 },
	{ "10", INT64_MIN, INT64_MAX, 1, 10 },
	{ "9223372036854775807", INT64_MIN, INT64_MAX, 1, INT64_MAX },
	{ "-9223372036854775808", INT64_MIN, INT64_MAX, 1, INT64_MIN },
	/* One past either end, and far past. */
	{ "9223372036854775808", INT64_MIN, INT64_MAX, 0, 0 },
	{ "-9223372036854775809", INT64_MIN, INT64_MAX, 0, 0 },
	{ "9223372036854775817", INT64_MIN, INT64_MAX, 0, 0 },
	{ "18446744073709551615", INT64_MIN, INT64_MAX, 0, 0 },
	{ "18446744073709551616", INT64_MIN, INT64_MAX, 0, 0 },
	{ "99999999999999999999999999999999999999", INT64_MIN, INT64_MAX, 0, 0 },
	/* Shapes the parser refuses: signs, zeros, spaces, other bases. */
	{ "-0", INT64_MIN, INT64_MAX, 0, 0 },
	{ "+1", INT64_MIN, INT64_MAX, 0, 0 },
	{ "+0", INT64_MIN, INT64_MAX, 0, 0 },
	{ "007", INT64_MIN, INT64_MAX, 0, 0 },
	{ "00", INT64_MIN, INT64_MAX, 0, 0 },
	{ "-07", INT64_MIN, INT64_MAX, 0, 0 },
	{ " 1", INT64_MIN, INT64_MAX, 0, 0 },
	{ "1 ", INT64_MIN, INT64_MAX, 0, 0 },
	{ "\t1", INT64_MIN, INT64_MAX, 0, 0 },
	{ "1\n", INT64_MIN, INT64_MAX, 0, 0 },
	{ "", INT64_MIN, INT64_MAX, 0, 0 },
	{ "-", INT64_MIN, INT64_MAX, 0, 0 },
	{ "--1", INT64_MIN, INT64_MAX, 0, 0 },
	{ "1-", INT64_MIN, INT64_MAX, 0, 0 },
	{ "0x10", INT64_MIN, INT64_MAX, 0, 0 },
	{ "1e3", INT64_MIN, INT64_MAX, 0, 0 },
	{ "1.0", INT64_MIN, INT64_MAX, 0, 0 },
	{ "1,000", INT64_MIN, INT64_MAX, 0, 0 },
	{ "abc", INT64_MIN, INT64_MAX, 0, 0 },
	{ "\xff", INT64_MIN, INT64_MAX, 0, 0 },
	{ "1\xff", INT64_MIN, INT64_MAX, 0, 0 },
	{ "\xd9\xa1", INT64_MIN, INT64_MAX, 0, 0 },		/* ARABIC-INDIC DIGIT ONE */
	{ "\xef\xbc\x91", INT64_MIN, INT64_MAX, 0, 0 },		/* FULLWIDTH DIGIT ONE */
	{ "\xe2\x88\x92" "1", INT64_MIN, INT64_MAX, 0, 0 },	/* MINUS SIGN */
	/* The bounds are inclusive. */
	{ "5", 0, 5, 1, 5 },
	{ "6", 0, 5, 0, 0 },
	{ "0", 0, 5, 1, 0 },
	{ "-1", 0, 5, 0, 0 },
	{ "1", 1, 1, 1, 1 },
	{ "-5", -5, -1, 1, -5 },
	{ "0", -5, -1, 0, 0 },
	{ "9223372036854775807", 0, INT64_MAX - 1, 0, 0 },
	{ "-9223372036854775808", INT64_MIN + 1, 0, 0, 0 },
};

static void
test_parse_int64(void)
{
	size_t i;

	for (i = 0; i < BP_NITEMS(irows); i++) {
		const struct irow *r = &irows[i];
		int64_t v = 12345;
		int rc = bp_parse_int64(r->s, r->min, r->max, &v);

		CU_ASSERT_EQUAL(rc, r->ok ? 0 : -1);
		if (r->ok) {
			CU_ASSERT_EQUAL(v, r->v);
		} else {
			CU_ASSERT_EQUAL(v, 12345);	/* untouched on failure */
		}
		if (rc != (r->ok ? 0 : -1))
			fprintf(stderr, "bp_parse_int64 row %zu (\"%s\") gave %d\n", i, r->s, rc);
	}
}

static void
test_parse_int64_edges(void)
{
	char buf[64];
	int64_t v = 7;

	CU_ASSERT_EQUAL(bp_parse_int64(NULL, 0, 10, &v), -1);
	CU_ASSERT_EQUAL(v, 7);
	/* The string ends at its NUL: what follows is not seen. */
	memcpy(buf, "12\0" "34", 6);
	CU_ASSERT_EQUAL(bp_parse_int64(buf, 0, 100, &v), 0);
	CU_ASSERT_EQUAL(v, 12);
	/* A long run of digits that is still in range cannot be: 20 digits always overflow. */
	memset(buf, '1', 20);
	buf[20] = '\0';
	CU_ASSERT_EQUAL(bp_parse_int64(buf, INT64_MIN, INT64_MAX, &v), -1);
	memset(buf, '0', 40);
	buf[40] = '\0';
	CU_ASSERT_EQUAL(bp_parse_int64(buf, INT64_MIN, INT64_MAX, &v), -1);
}

static void
test_time_iso(void)
{
	char buf[32];

	bp_time_iso(0, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "1970-01-01T00:00:00Z");
	bp_time_iso(1795295664, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "2026-11-21T21:14:24Z");
	bp_time_iso(951782400, buf, sizeof(buf));		/* a leap day */
	CU_ASSERT_STRING_EQUAL(buf, "2000-02-29T00:00:00Z");
	bp_time_iso(0, buf, 21);				/* exactly enough */
	CU_ASSERT_STRING_EQUAL(buf, "1970-01-01T00:00:00Z");
	bp_time_iso(0, buf, 20);				/* one short: empty */
	CU_ASSERT_STRING_EQUAL(buf, "");
}

static void
test_hex_sha(void)
{
	unsigned char h[32];
	char hex[65];

	bp_hex_encode_digits("\x00\x01\xab\xff", 4, hex, sizeof(hex));
	CU_ASSERT_STRING_EQUAL(hex, "0001abff");
	bp_hex_encode_digits("", 0, hex, sizeof(hex));
	CU_ASSERT_STRING_EQUAL(hex, "");
	/* FIPS 180-2 vectors. */
	bp_sha256("abc", 3, h);
	bp_hex_encode_digits(h, 32, hex, sizeof(hex));
	CU_ASSERT_STRING_EQUAL(hex,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	bp_sha256("", 0, h);
	bp_hex_encode_digits(h, 32, hex, sizeof(hex));
	CU_ASSERT_STRING_EQUAL(hex,
	    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	/* NUL bytes are data. */
	bp_sha256("a\0b", 3, h);
	bp_hex_encode_digits(h, 32, hex, sizeof(hex));
	CU_ASSERT_STRING_NOT_EQUAL(hex,
	    "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb");	/* "a" */
}

/* Threads hashing at once, each on its own context: every digest is the vector's. */
static void *
sha256_worker(void *arg)
{
	unsigned char h[32], want[32];
	char msg[64];
	int i, bad = 0;

	(void)arg;
	bp_sha256("abc", 3, want);
	for (i = 0; i < 2000; i++) {
		snprintf(msg, sizeof(msg), "%d", i);
		bp_sha256(msg, strlen(msg), h);	/* another message between two of "abc" */
		bp_sha256("abc", 3, h);
		bad |= memcmp(h, want, 32) != 0;
	}
	bad |= want[0] != 0xba || want[31] != 0xad;
	return bad ? (void *)1 : NULL;
}

static void
test_sha256_threads(void)
{
	CU_ASSERT_EQUAL(bp_unit_threads(4, sha256_worker), 0);
}

static void
test_ct_equal(void)
{
	CU_ASSERT_EQUAL(bp_ct_equal("abc", "abc", 3), 1);
	CU_ASSERT_EQUAL(bp_ct_equal("abc", "abd", 3), 0);
	CU_ASSERT_EQUAL(bp_ct_equal("a\0c", "a\0c", 3), 1);
	CU_ASSERT_EQUAL(bp_ct_equal("a\0c", "a\0d", 3), 0);
	CU_ASSERT_EQUAL(bp_ct_equal("x", "y", 0), 1);
	CU_ASSERT_EQUAL(bp_ct_equal("\xff\x00", "\x7f\x00", 2), 0);
}

static void
test_strlcpy(void)
{
	char buf[8];

	memset(buf, 'x', sizeof(buf));
	CU_ASSERT_EQUAL(bp_strlcpy(buf, "abc", sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "abc");
	CU_ASSERT_EQUAL(bp_strlcpy(buf, "1234567", sizeof(buf)), 0);	/* exact fit */
	CU_ASSERT_STRING_EQUAL(buf, "1234567");
	CU_ASSERT_EQUAL(bp_strlcpy(buf, "12345678", sizeof(buf)), -1);	/* one too many */
	CU_ASSERT_STRING_EQUAL(buf, "1234567");
	CU_ASSERT_EQUAL(bp_strlcpy(buf, "", sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "");
	memset(buf, 'x', sizeof(buf));
	CU_ASSERT_EQUAL(bp_strlcpy(buf, "abc", 0), -1);
	CU_ASSERT_EQUAL(buf[0], 'x');				/* nothing written */
	CU_ASSERT_EQUAL(bp_strlcpy(buf, "abc", 1), -1);
	CU_ASSERT_STRING_EQUAL(buf, "");
}

static void
test_random_clock(void)
{
	unsigned char a[32], b[32];
	int64_t m1, m2;

	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	CU_ASSERT_EQUAL(bp_random(a, sizeof(a)), 0);
	CU_ASSERT_EQUAL(bp_random(b, sizeof(b)), 0);
	CU_ASSERT(memcmp(a, b, sizeof(a)) != 0);
	CU_ASSERT_EQUAL(bp_random(a, 0), 0);
	m1 = bp_mono_us();
	m2 = bp_mono_us();
	CU_ASSERT(m2 >= m1);
	CU_ASSERT(bp_now_us() > INT64_C(1700000000) * 1000000);
}

BP_UNIT_SUITE(util, NULL, NULL,
	{ "bp_parse_int64 table", test_parse_int64 },
	{ "bp_parse_int64 NULL, embedded NUL, long runs", test_parse_int64_edges },
	{ "bp_time_iso", test_time_iso },
	{ "hex and SHA-256", test_hex_sha },
	{ "sha256 from threads at once", test_sha256_threads },
	{ "constant-time compare", test_ct_equal },
	{ "bp_strlcpy", test_strlcpy },
	{ "random bytes and clocks", test_random_clock })
