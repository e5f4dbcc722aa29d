/*
 * lib/evm/rlp.c: the examples of the Ethereum RLP spec (ethereum.org "Recursive-length
 * prefix"), round trips, the encoder's limits and a canonical, bounded decoder fed hostile
 * prefixes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/hex.h"
#include "evm/rlp.h"
#include "evm/u256.h"
#include "unit.h"

#define S(x)	x, sizeof(x) - 1

#define LOREM	"Lorem ipsum dolor sit amet, consectetur adipisicing elit"

/* Finishes e, compares with the hex literal want and frees e. */
static void
check(struct bp_rlp_enc *e, const char *want)
{
	uint8_t *got = NULL, w[256];
	size_t gn = 0, wn;

	CU_ASSERT_FATAL(bp_hex_decode(want, strlen(want), w, sizeof(w), &wn) == 0);
	CU_ASSERT_EQUAL_FATAL(bp_rlp_enc_finish(e, &got, &gn), 0);
	CU_ASSERT_EQUAL(gn, wn);
	CU_ASSERT(gn == wn && memcmp(got, w, wn) == 0);
	free(got);
	bp_rlp_enc_free(e);
}

static struct bp_rlp_enc *
enc(void)
{
	struct bp_rlp_enc *e = bp_rlp_enc_new(4096);

	CU_ASSERT_FATAL(e != NULL);
	return e;
}

static void
test_spec_vectors(void)
{
	struct bp_rlp_enc *e;

	e = enc();
	bp_rlp_put_bytes(e, "dog", 3);
	check(e, "0x83646f67");

	e = enc();
	bp_rlp_list_begin(e);
	bp_rlp_put_bytes(e, "cat", 3);
	bp_rlp_put_bytes(e, "dog", 3);
	bp_rlp_list_end(e);
	check(e, "0xc88363617483646f67");

	e = enc();
	bp_rlp_put_bytes(e, NULL, 0);
	check(e, "0x80");

	e = enc();
	bp_rlp_list_begin(e);
	bp_rlp_list_end(e);
	check(e, "0xc0");

	e = enc();
	bp_rlp_put_u64(e, 0);
	check(e, "0x80");

	e = enc();
	bp_rlp_put_bytes(e, "\x00", 1);		/* the byte 0x00 */
	check(e, "0x00");

	e = enc();
	bp_rlp_put_bytes(e, "\x0f", 1);		/* the byte 0x0f */
	check(e, "0x0f");

	e = enc();
	bp_rlp_put_u64(e, 15);
	check(e, "0x0f");

	e = enc();
	bp_rlp_put_bytes(e, "\x04\x00", 2);	/* the bytes 0x04 0x00 */
	check(e, "0x820400");

	e = enc();
	bp_rlp_put_u64(e, 1024);
	check(e, "0x820400");

	/* The set-theoretic representation of three: [ [], [[]], [ [], [[]] ] ]. */
	e = enc();
	bp_rlp_list_begin(e);
	bp_rlp_list_begin(e);
	bp_rlp_list_end(e);
	bp_rlp_list_begin(e);
	bp_rlp_list_begin(e);
	bp_rlp_list_end(e);
	bp_rlp_list_end(e);
	bp_rlp_list_begin(e);
	bp_rlp_list_begin(e);
	bp_rlp_list_end(e);
	bp_rlp_list_begin(e);
	bp_rlp_list_begin(e);
	bp_rlp_list_end(e);
	bp_rlp_list_end(e);
	bp_rlp_list_end(e);
	bp_rlp_list_end(e);
	check(e, "0xc7c0c1c0c3c0c1c0");

	/* A 56-byte string: the first long form. */
	e = enc();
	bp_rlp_put_bytes(e, LOREM, sizeof(LOREM) - 1);
	check(e, "0xb838" "4c6f72656d20697073756d20646f6c6f722073697420616d65742c20636f6e73"
	    "65637465747572206164697069736963696e6720656c6974");
}

static void
test_integers(void)
{
	static const struct {
		uint64_t	 v;
		const char	*hex;
	} rows[] = {
		{ 0, "0x80" },
		{ 1, "0x01" },
		{ 127, "0x7f" },
		{ 128, "0x8180" },
		{ 255, "0x81ff" },
		{ 256, "0x820100" },
		{ 1024, "0x820400" },
		{ 0xffffff, "0x83ffffff" },
		{ UINT64_MAX, "0x88ffffffffffffffff" },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct bp_rlp_enc *e = enc();
		struct bp_rlp_item it;
		uint8_t b[16];
		size_t n;
		uint64_t back;
		struct bp_u256 u, ub;

		bp_rlp_put_u64(e, rows[i].v);
		check(e, rows[i].hex);
		/* The u256 form encodes the same. */
		e = enc();
		bp_u256_from_u64(&u, rows[i].v);
		bp_rlp_put_u256(e, &u);
		check(e, rows[i].hex);
		/* And decodes back. */
		CU_ASSERT_FATAL(bp_hex_decode(rows[i].hex, strlen(rows[i].hex), b, sizeof(b),
		    &n) == 0);
		CU_ASSERT_EQUAL(bp_rlp_decode(b, n, &it), 0);
		CU_ASSERT_EQUAL(bp_rlp_item_u64(&it, &back), 0);
		CU_ASSERT_EQUAL(back, rows[i].v);
		CU_ASSERT_EQUAL(bp_rlp_item_u256(&it, &ub), 0);
		CU_ASSERT_EQUAL(bp_u256_cmp(&u, &ub), 0);
	}
	{
		/* 2^256 - 1: 0xa0 + 32 bytes of 0xff. */
		struct bp_rlp_enc *e = enc();
		struct bp_u256 m = { { UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX } };

		bp_rlp_put_u256(e, &m);
		check(e, "0xa0ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff");
	}
}

/* Long forms: a 1024-byte string and a list whose payload passes 55 bytes. */
static void
test_long_forms(void)
{
	struct bp_rlp_enc *e = enc();
	struct bp_rlp_item it, sub;
	struct bp_rlp_iter iter;
	uint8_t big[1024], *out = NULL;
	size_t n, k = 0;
	int i, rc;

	memset(big, 'z', sizeof(big));
	bp_rlp_list_begin(e);
	bp_rlp_put_bytes(e, big, sizeof(big));
	for (i = 0; i < 20; i++)
		bp_rlp_put_bytes(e, "dog", 3);
	bp_rlp_list_end(e);
	CU_ASSERT_EQUAL_FATAL(bp_rlp_enc_finish(e, &out, &n), 0);
	bp_rlp_enc_free(e);
	/* list: f9 0x0453 (3 + 1024 + 80 = 1107); string: b9 04 00. */
	CU_ASSERT_EQUAL(n, 3 + 1107);
	CU_ASSERT(out[0] == 0xf9 && out[1] == 0x04 && out[2] == 0x53);
	CU_ASSERT(out[3] == 0xb9 && out[4] == 0x04 && out[5] == 0x00);
	CU_ASSERT_EQUAL(bp_rlp_decode(out, n, &it), 0);
	CU_ASSERT_EQUAL(it.list, 1);
	CU_ASSERT_EQUAL(bp_rlp_iter_init(&iter, &it), 0);
	while ((rc = bp_rlp_iter_next(&iter, &sub)) == 1) {
		if (k == 0) {
			CU_ASSERT(sub.len == 1024 && memcmp(sub.p, big, 1024) == 0);
		} else {
			CU_ASSERT(sub.len == 3 && memcmp(sub.p, "dog", 3) == 0);
		}
		k++;
	}
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(k, 21);
	free(out);

	/* The 56-byte list boundary: 55 bytes of payload is short, 56 long. */
	e = enc();
	bp_rlp_list_begin(e);
	bp_rlp_put_bytes(e, big, 53);		/* b5 + 53 = 54 */
	bp_rlp_put_u64(e, 1);			/* 1 */
	bp_rlp_list_end(e);
	CU_ASSERT_EQUAL_FATAL(bp_rlp_enc_finish(e, &out, &n), 0);
	CU_ASSERT(n == 56 && out[0] == 0xf7);
	free(out);
	bp_rlp_enc_free(e);
	e = enc();
	bp_rlp_list_begin(e);
	bp_rlp_put_bytes(e, big, 54);
	bp_rlp_put_u64(e, 1);
	bp_rlp_list_end(e);
	CU_ASSERT_EQUAL_FATAL(bp_rlp_enc_finish(e, &out, &n), 0);
	CU_ASSERT(n == 58 && out[0] == 0xf8 && out[1] == 56);
	free(out);
	bp_rlp_enc_free(e);
}

static void
test_encoder_limits(void)
{
	struct bp_rlp_enc *e;
	uint8_t *out = NULL;
	size_t n;
	int i;

	CU_ASSERT_PTR_NULL(bp_rlp_enc_new(0));
	CU_ASSERT_PTR_NULL(bp_rlp_enc_new(SIZE_MAX));
	bp_rlp_enc_free(NULL);

	/* "dog" is 4 bytes: a cap of 4 holds it, 3 does not, and the failure sticks. */
	e = bp_rlp_enc_new(4);
	CU_ASSERT_FATAL(e != NULL);
	CU_ASSERT_EQUAL(bp_rlp_put_bytes(e, "dog", 3), 0);
	CU_ASSERT_EQUAL(bp_rlp_enc_finish(e, &out, &n), 0);
	CU_ASSERT_EQUAL(n, 4);
	free(out);
	CU_ASSERT_EQUAL(bp_rlp_put_bytes(e, "x", 1), -1);	/* finished */
	bp_rlp_enc_free(e);
	e = bp_rlp_enc_new(3);
	CU_ASSERT_FATAL(e != NULL);
	CU_ASSERT_EQUAL(bp_rlp_put_bytes(e, "dog", 3), -1);
	CU_ASSERT_EQUAL(bp_rlp_put_bytes(e, "d", 1), -1);
	CU_ASSERT_EQUAL(bp_rlp_enc_finish(e, &out, &n), -1);
	bp_rlp_enc_free(e);
	/* The list header is what passes the cap. */
	e = bp_rlp_enc_new(4);
	CU_ASSERT_FATAL(e != NULL);
	CU_ASSERT_EQUAL(bp_rlp_list_begin(e), 0);
	CU_ASSERT_EQUAL(bp_rlp_put_bytes(e, "dog", 3), 0);
	CU_ASSERT_EQUAL(bp_rlp_list_end(e), -1);
	bp_rlp_enc_free(e);
	/* Hostile lengths. */
	e = enc();
	CU_ASSERT_EQUAL(bp_rlp_put_bytes(e, "x", SIZE_MAX), -1);
	bp_rlp_enc_free(e);
	e = enc();
	CU_ASSERT_EQUAL(bp_rlp_put_bytes(e, NULL, 2), -1);
	bp_rlp_enc_free(e);
	/* Balance and depth. */
	e = enc();
	CU_ASSERT_EQUAL(bp_rlp_list_end(e), -1);
	bp_rlp_enc_free(e);
	e = enc();
	CU_ASSERT_EQUAL(bp_rlp_list_begin(e), 0);
	CU_ASSERT_EQUAL(bp_rlp_enc_finish(e, &out, &n), -1);
	bp_rlp_enc_free(e);
	e = enc();
	for (i = 0; i < BP_RLP_MAX_DEPTH; i++)
		CU_ASSERT_EQUAL(bp_rlp_list_begin(e), 0);
	CU_ASSERT_EQUAL(bp_rlp_list_begin(e), -1);
	bp_rlp_enc_free(e);
	/* Nothing put: an empty encoding, still a buffer to free. */
	e = enc();
	CU_ASSERT_EQUAL(bp_rlp_enc_finish(e, &out, &n), 0);
	CU_ASSERT_EQUAL(n, 0);
	free(out);
	bp_rlp_enc_free(e);
	CU_ASSERT_EQUAL(bp_rlp_put_u64(NULL, 1), -1);
	CU_ASSERT_EQUAL(bp_rlp_list_begin(NULL), -1);
}

struct drow {
	const char	*hex;
	int		 ok;		/* bp_rlp_decode (whole input, one item) */
};

static const struct drow drows[] = {
	{ "0x83646f67", 1 },
	{ "0xc88363617483646f67", 1 },
	{ "0x80", 1 },
	{ "0xc0", 1 },
	{ "0x00", 1 },
	{ "0x7f", 1 },
	{ "0x8180", 1 },
	{ "0x81ff", 1 },
	{ "0x", 0 },				/* empty input */
	{ "0x8100", 0 },			/* a byte below 0x80 must stand alone */
	{ "0x817f", 0 },
	{ "0x83646f", 0 },			/* truncated */
	{ "0x83646f6767", 0 },			/* trailing byte */
	{ "0xb8", 0 },				/* long form with no length byte */
	{ "0xb800", 0 },			/* long form for length 0 */
	{ "0xb837" "00", 0 },			/* long form for length 55 */
	{ "0xb838", 0 },			/* length 56, no payload */
	{ "0xb90038", 0 },			/* length with a leading zero */
	{ "0xbf" "ffffffffffffffff", 0 },	/* length 2^64 - 1 */
	{ "0xbf" "0100000000000000", 0 },	/* length 2^56 */
	{ "0xbf" "7fffffffffffffff" "00", 0 },
	{ "0xb9ffff" "00", 0 },
	{ "0xc1", 0 },				/* list payload missing */
	{ "0xc2" "80", 0 },
	{ "0xf8", 0 },
	{ "0xf800", 0 },
	{ "0xf837", 0 },
	{ "0xf90038", 0 },
	{ "0xff" "ffffffffffffffff", 0 },
	{ "0xff" "ffffffffffffffff" "c0", 0 },
	/* decode checks the outer item only; iteration checks the inner ones (test_iterate). */
	{ "0xc3" "c3c0c0", 1 },
	{ "0xc2" "8100", 1 },
};

static void
test_decode_table(void)
{
	size_t i;

	for (i = 0; i < sizeof(drows) / sizeof(drows[0]); i++) {
		uint8_t b[64];
		size_t n;
		struct bp_rlp_item it = { 9, NULL, 9 };

		CU_ASSERT_FATAL(bp_hex_decode(drows[i].hex, strlen(drows[i].hex), b, sizeof(b),
		    &n) == 0);
		/* An empty input is given as a NULL pointer too. */
		CU_ASSERT_EQUAL(bp_rlp_decode(n > 0 ? b : NULL, n, &it), drows[i].ok ? 0 : -1);
		if (drows[i].ok) {
			CU_ASSERT(it.p >= b && it.p + it.len <= b + n);
		} else {
			CU_ASSERT_EQUAL(it.list, 9);	/* untouched */
		}
	}
}

/* Walks an item recursively, as the fuzz harness does, and counts the leaves. */
static int
walk(const struct bp_rlp_item *it, int depth, size_t *leaves)
{
	struct bp_rlp_iter iter;
	struct bp_rlp_item sub;
	int rc;

	if (!it->list) {
		(*leaves)++;
		return 0;
	}
	if (depth == 0 || bp_rlp_iter_init(&iter, it) != 0)
		return -1;
	while ((rc = bp_rlp_iter_next(&iter, &sub)) == 1)
		if (walk(&sub, depth - 1, leaves) != 0)
			return -1;
	return rc;
}

static void
test_iterate(void)
{
	static const struct {
		const char	*hex;
		int		 ok;
		size_t		 leaves;
	} rows[] = {
		{ "0xc7c0c1c0c3c0c1c0", 0, 0 },
		{ "0xc88363617483646f67", 0, 2 },
		{ "0xc2" "8100", -1, 0 },		/* non-canonical inside */
		{ "0xc2" "8201", -1, 0 },		/* inner string runs past the list */
		{ "0xc3" "c3c0c0", -1, 0 },		/* inner list runs past the outer */
		{ "0xc3" "820102", 0, 1 },
		{ "0xc4" "83646f67", 0, 1 },
		{ "0xc5" "83646f67", -1, 0 },		/* truncated input */
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint8_t b[64];
		size_t n, leaves = 0;
		struct bp_rlp_item it;
		int rc;

		CU_ASSERT_FATAL(bp_hex_decode(rows[i].hex, strlen(rows[i].hex), b, sizeof(b),
		    &n) == 0);
		rc = bp_rlp_decode(b, n, &it);
		if (rc == 0)
			rc = walk(&it, 8, &leaves);
		CU_ASSERT_EQUAL(rc, rows[i].ok);
		if (rows[i].ok == 0) {
			CU_ASSERT_EQUAL(leaves, rows[i].leaves);
		}
	}
	{
		/* A string is not a list; decode_item reports what it used. */
		struct bp_rlp_iter iter;
		struct bp_rlp_item it;
		size_t used;

		CU_ASSERT_EQUAL(bp_rlp_decode_item((const uint8_t *)"\x83" "dogEXTRA", 8, &it,
		    &used), 0);
		CU_ASSERT_EQUAL(used, 4);
		CU_ASSERT_EQUAL(bp_rlp_iter_init(&iter, &it), -1);
	}
}

static void
test_item_integers(void)
{
	static const struct {
		const char	*hex;
		int		 u64_ok;
		int		 u256_ok;
	} rows[] = {
		{ "0x80", 1, 1 },
		{ "0x01", 1, 1 },
		{ "0x00", 0, 0 },		/* 0 is the empty string, not the byte 0 */
		{ "0x820001", 0, 0 },		/* leading zero */
		{ "0x88ffffffffffffffff", 1, 1 },
		{ "0x89010000000000000000", 0, 1 },	/* 2^64 */
		{ "0xa0ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", 0, 1 },
		{ "0xa1010000000000000000000000000000000000000000000000000000000000000000", 0, 0 },
		{ "0xc0", 0, 0 },		/* a list */
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint8_t b[64];
		size_t n;
		struct bp_rlp_item it;
		uint64_t v;
		struct bp_u256 u;

		CU_ASSERT_FATAL(bp_hex_decode(rows[i].hex, strlen(rows[i].hex), b, sizeof(b),
		    &n) == 0);
		CU_ASSERT_FATAL(bp_rlp_decode(b, n, &it) == 0);
		CU_ASSERT_EQUAL(bp_rlp_item_u64(&it, &v), rows[i].u64_ok ? 0 : -1);
		CU_ASSERT_EQUAL(bp_rlp_item_u256(&it, &u), rows[i].u256_ok ? 0 : -1);
	}
}

BP_UNIT_SUITE(evm_rlp, NULL, NULL,
	{ "spec examples", test_spec_vectors },
	{ "integers", test_integers },
	{ "long strings and lists", test_long_forms },
	{ "encoder caps, depth and balance", test_encoder_limits },
	{ "decode table with hostile prefixes", test_decode_table },
	{ "iterate nested lists", test_iterate },
	{ "items as integers", test_item_integers })
