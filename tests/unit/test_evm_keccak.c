/*
 * lib/evm/keccak.c: Keccak-256 with Ethereum's 0x01 padding. The long vectors hash n bytes of
 * 'a'..'z' repeated ("abc...zabc..."); their digests come from ethers v6 keccak256, and the
 * lengths sit on both sides of the 136-byte rate.
 */
#include <stdint.h>
#include <string.h>

#include "core/hex.h"
#include "evm/keccak.h"
#include "unit.h"

struct krow {
	size_t		 n;		/* bytes of the pattern, or SIZE_MAX to use s */
	const char	*s;
	const char	*digest;
};

static const struct krow krows[] = {
	{ SIZE_MAX, "", "0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470" },
	{ SIZE_MAX, "abc", "0x4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45" },
	/* The selector preimages of abi tests, whole digests. */
	{ SIZE_MAX, "transfer(address,uint256)",
	    "0xa9059cbb2ab09eb219583f4a59a5d0623ade346d962bcd4e46b11da047c9049b" },
	{ 135, NULL, "0x8d237f5df8929398beb5240705b61f6c35b8e03a02fa7d691701f356facafb16" },
	{ 136, NULL, "0xb98753581a7e73d753e1863f91847255c9a0dc6d4f751cbe191e70ce272a3565" },
	{ 137, NULL, "0xe7eedf0c2b2ad46aef681626370d6d7e0f0521d8e54d873c6c7895adb3ff7986" },
	{ 200, NULL, "0xe36640778716dea07b1e75d3920b262e9b16fb871b029b28cefbc8f55ff220c5" },
	{ 272, NULL, "0x2b0ea46cfb00cf48974dc4c219cd38840fe4ad17c810042b2124466850180160" },
	{ 1000, NULL, "0x15568cea6efcbb97df8b010291fca66d23b1986e4c8d782acd5f4d8ed60112e0" },
};

static uint8_t pattern[1000];

static int
setup(void)
{
	size_t i;

	for (i = 0; i < sizeof(pattern); i++)
		pattern[i] = (uint8_t)('a' + i % 26);
	return 0;
}

static void
row_input(const struct krow *r, const uint8_t **p, size_t *n)
{
	if (r->n == SIZE_MAX) {
		*p = (const uint8_t *)r->s;
		*n = strlen(r->s);
	} else {
		*p = pattern;
		*n = r->n;
	}
}

static void
test_vectors(void)
{
	size_t i;

	for (i = 0; i < sizeof(krows) / sizeof(krows[0]); i++) {
		uint8_t want[32], got[32];
		const uint8_t *p;
		size_t n;

		CU_ASSERT_FATAL(bp_hex_decode_fixed(krows[i].digest, strlen(krows[i].digest),
		    want, 32) == 0);
		row_input(&krows[i], &p, &n);
		bp_keccak256(p, n, got);
		CU_ASSERT(memcmp(got, want, 32) == 0);
	}
	{
		uint8_t want[32], got[32];

		/* NULL with length 0 is the empty string. */
		CU_ASSERT_FATAL(bp_hex_decode_fixed(krows[0].digest, strlen(krows[0].digest),
		    want, 32) == 0);
		bp_keccak256(NULL, 0, got);
		CU_ASSERT(memcmp(got, want, 32) == 0);
	}
}

/* Every split of the input into three updates must give the one-shot digest. */
static void
test_streaming(void)
{
	static const size_t cuts[] = { 0, 1, 7, 8, 63, 64, 135, 136, 137, 271, 272, 500 };
	size_t i, j;

	for (i = 0; i < sizeof(krows) / sizeof(krows[0]); i++) {
		const uint8_t *p;
		size_t n;
		uint8_t once[32];

		row_input(&krows[i], &p, &n);
		bp_keccak256(p, n, once);
		for (j = 0; j < sizeof(cuts) / sizeof(cuts[0]); j++) {
			struct bp_keccak k;
			uint8_t got[32];
			size_t a = cuts[j] < n ? cuts[j] : n;
			size_t b = a + (n - a) / 3;

			bp_keccak_init(&k);
			bp_keccak_update(&k, p, a);
			bp_keccak_update(&k, p + a, b - a);
			bp_keccak_update(&k, NULL, 0);
			bp_keccak_update(&k, p + b, n - b);
			bp_keccak_final(&k, got);
			CU_ASSERT(memcmp(got, once, 32) == 0);
		}
	}
	{
		/* Byte by byte across two blocks. */
		struct bp_keccak k;
		uint8_t got[32], once[32];

		bp_keccak256(pattern, 300, once);
		bp_keccak_init(&k);
		for (i = 0; i < 300; i++)
			bp_keccak_update(&k, pattern + i, 1);
		bp_keccak_final(&k, got);
		CU_ASSERT(memcmp(got, once, 32) == 0);
	}
}

/* Differs from SHA3-256 (FIPS 202 padding): the known SHA3-256("") must not come out. */
static void
test_not_sha3(void)
{
	uint8_t sha3_empty[32], got[32];
	static const char s[] =
	    "0xa7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a";

	CU_ASSERT_FATAL(bp_hex_decode_fixed(s, sizeof(s) - 1, sha3_empty, 32) == 0);
	bp_keccak256("", 0, got);
	CU_ASSERT(memcmp(got, sha3_empty, 32) != 0);
}

BP_UNIT_SUITE(evm_keccak, setup, NULL,
	{ "known-answer vectors", test_vectors },
	{ "streaming splits", test_streaming },
	{ "not SHA3-256", test_not_sha3 })
