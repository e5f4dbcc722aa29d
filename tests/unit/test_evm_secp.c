/*
 * lib/evm/secp.c: keys, RFC 6979 signatures and recovery, EIP-191 personal messages. The
 * signatures were made by ethers v6 (SigningKey.sign, Wallet.signMessage) with anvil's dev
 * account 0; RFC 6979 makes them byte-for-byte reproducible.
 */
#include <stdint.h>
#include <string.h>

#include "core/hex.h"
#include "evm/address.h"
#include "evm/keccak.h"
#include "evm/secp.h"
#include "evm/u256.h"
#include "unit.h"

#define KEY0	"0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
#define ADDR0	"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
#define PUB0	"0x8318535b54105d4a7aae60c08fc45f9687181b4fdfc625bd1a753fa7397fed75" \
		"3547f11ca8696646f2f3acb08e31016afac23e630c5d11f59f61fef57b0d2aa5"
/* The curve order n. */
#define ORDER	"0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141"

static uint8_t key0[32];

static void
unhex(const char *s, uint8_t *out, size_t n)
{
	CU_ASSERT_FATAL(bp_hex_decode_fixed(s, strlen(s), out, n) == 0);
}

static int
setup(void)
{
	return bp_hex_decode_fixed(KEY0, strlen(KEY0), key0, 32);
}

static int
teardown(void)
{
	bp_secp_cleanup();
	return 0;
}

static void
test_key_to_address(void)
{
	uint8_t pub[64], want_pub[64], addr[20];
	char s[BP_ADDR_STR_MAX];

	CU_ASSERT_EQUAL(bp_secp_pubkey(key0, pub), 0);
	unhex(PUB0, want_pub, 64);
	CU_ASSERT(memcmp(pub, want_pub, 64) == 0);
	CU_ASSERT_EQUAL(bp_secp_priv_to_addr(key0, addr), 0);
	CU_ASSERT_EQUAL(bp_addr_format_checksum(addr, s, sizeof(s)), 0);
	CU_ASSERT_STRING_EQUAL(s, ADDR0);
}

static void
test_bad_keys(void)
{
	static const char *const bad[] = {
		"0x0000000000000000000000000000000000000000000000000000000000000000",
		ORDER,
		"0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364142",
		"0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
	};
	uint8_t k[32], pub[64], addr[20], sig[65], h[32];
	size_t i;

	memset(h, 0x11, sizeof(h));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		unhex(bad[i], k, 32);
		CU_ASSERT_EQUAL(bp_secp_pubkey(k, pub), -1);
		CU_ASSERT_EQUAL(bp_secp_priv_to_addr(k, addr), -1);
		CU_ASSERT_EQUAL(bp_secp_sign(k, h, sig), -1);
		CU_ASSERT_EQUAL(bp_secp_personal_sign(k, "x", 1, sig), -1);
	}
	/* n - 1 is the largest valid key. */
	unhex("0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364140", k, 32);
	CU_ASSERT_EQUAL(bp_secp_pubkey(k, pub), 0);
}

static void
test_sign_vector(void)
{
	static const char want[] = "0x"
	    "b1627689d77f053fd6cbb4759be10fae4f34a4c0dcba68239f0d2eeea0809fa5"
	    "10510d6956b0cc082cfe383422460aded755577282e0a5e22d0c6818c11a884d" "1c";
	uint8_t h[32], sig[65], w[65], addr[20], addr0[20];

	bp_keccak256("blockport", 9, h);
	CU_ASSERT_EQUAL(bp_secp_sign(key0, h, sig), 0);
	unhex(want, w, 65);
	/* ethers serializes v as 27/28; bp_secp_sign gives the recovery id. */
	CU_ASSERT(memcmp(sig, w, 64) == 0);
	CU_ASSERT_EQUAL(sig[64], w[64] - 27);
	CU_ASSERT_EQUAL(bp_addr_parse(ADDR0, strlen(ADDR0), BP_ADDR_CHECKSUM, addr0), 0);
	CU_ASSERT_EQUAL(bp_secp_recover(h, sig, addr), 0);
	CU_ASSERT(memcmp(addr, addr0, 20) == 0);
	CU_ASSERT_EQUAL(bp_secp_recover(h, w, addr), 0);	/* v = 28 accepted too */
	CU_ASSERT(memcmp(addr, addr0, 20) == 0);
	/* Deterministic: the same signature again. */
	CU_ASSERT_EQUAL(bp_secp_sign(key0, h, w), 0);
	CU_ASSERT(memcmp(sig, w, 65) == 0);
}

static void
test_personal_vectors(void)
{
	static const struct {
		const char	*msg;
		size_t		 n;
		const char	*hash;
		const char	*sig;	/* NULL: hash only */
	} rows[] = {
		{ "hello", 5,
		    "0x50b2c43fd39106bafbba0da34fc430e1f91e3c96ea2acee2bc34119f92b37750",
		    "0xf16ea9a3478698f695fd1401bfe27e9e4a7e8e3da94aa72b021125e31fa899cc"
		    "573c48ea3fe1d4ab61a9db10c19032026e3ed2dbccba5a178235ac27f9450431" "1c" },
		{ "", 0,
		    "0x5f35dce98ba4fba25530a026ed80b2cecdaa31091ba4958b99b52ea1d068adad",
		    "0xc1977b761f1dd36c29795783460d241885c8e7f9d962dbe7bba2753fd94e89b4"
		    "44a1cd9ed855dd09afa3b73f7c2bd097ec9abc2d2775d737505a02d3f0cafa59" "1b" },
	};
	uint8_t addr0[20], addr[20], h[32], w[32], sig[65], ws[65];
	uint8_t longmsg[1000];
	size_t i;

	CU_ASSERT_EQUAL(bp_addr_parse(ADDR0, strlen(ADDR0), 0, addr0), 0);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		bp_secp_personal_hash(rows[i].msg, rows[i].n, h);
		unhex(rows[i].hash, w, 32);
		CU_ASSERT(memcmp(h, w, 32) == 0);
		CU_ASSERT_EQUAL(bp_secp_personal_sign(key0, rows[i].msg, rows[i].n, sig), 0);
		unhex(rows[i].sig, ws, 65);
		CU_ASSERT(memcmp(sig, ws, 65) == 0);
		CU_ASSERT_EQUAL(bp_secp_personal_recover(rows[i].msg, rows[i].n, sig, addr), 0);
		CU_ASSERT(memcmp(addr, addr0, 20) == 0);
		/* Another message recovers someone else (or nobody). */
		if (bp_secp_personal_recover("hellO", 5, sig, addr) == 0) {
			CU_ASSERT(memcmp(addr, addr0, 20) != 0);
		}
	}
	/* A four-digit length in the prefix. */
	memset(longmsg, 'x', sizeof(longmsg));
	bp_secp_personal_hash(longmsg, sizeof(longmsg), h);
	unhex("0x6a37e0b91509decb144d44cf932ba38dd926594952faf4817922845f01fa2908", w, 32);
	CU_ASSERT(memcmp(h, w, 32) == 0);
	bp_secp_personal_hash(NULL, 0, h);
	unhex(rows[1].hash, w, 32);
	CU_ASSERT(memcmp(h, w, 32) == 0);
}

static void
test_recover_hostile(void)
{
	uint8_t h[32], sig[65], bad[65], addr[20], addr0[20], order[32];
	struct bp_u256 n, s, hs;
	int v;

	CU_ASSERT_EQUAL(bp_addr_parse(ADDR0, strlen(ADDR0), 0, addr0), 0);
	bp_keccak256("blockport", 9, h);
	CU_ASSERT_FATAL(bp_secp_sign(key0, h, sig) == 0);

	/* v outside {0, 1, 27, 28}. */
	for (v = 0; v < 256; v++) {
		int ok = v == 0 || v == 1 || v == 27 || v == 28;

		memcpy(bad, sig, 65);
		bad[64] = (uint8_t)v;
		if (!ok) {
			CU_ASSERT_EQUAL(bp_secp_recover(h, bad, addr), -1);
		}
	}
	/* The wrong parity recovers another key, never ours. */
	memcpy(bad, sig, 65);
	bad[64] ^= 1;
	if (bp_secp_recover(h, bad, addr) == 0) {
		CU_ASSERT(memcmp(addr, addr0, 20) != 0);
	}
	/* The malleated twin (n - s, parity flipped) is refused: high S (EIP-2). */
	unhex(ORDER, order, 32);
	bp_u256_from_be32(&n, order);
	bp_u256_from_be32(&s, sig + 32);
	CU_ASSERT_EQUAL(bp_u256_sub(&hs, &n, &s), 0);
	memcpy(bad, sig, 65);
	bp_u256_to_be32(&hs, bad + 32);
	bad[64] ^= 1;
	CU_ASSERT_EQUAL(bp_secp_recover(h, bad, addr), -1);
	/* r or s of zero, of n, of all ones. */
	memcpy(bad, sig, 65);
	memset(bad, 0, 32);
	CU_ASSERT_EQUAL(bp_secp_recover(h, bad, addr), -1);
	memcpy(bad, sig, 65);
	memset(bad + 32, 0, 32);
	CU_ASSERT_EQUAL(bp_secp_recover(h, bad, addr), -1);
	memcpy(bad, sig, 65);
	memcpy(bad, order, 32);
	CU_ASSERT_EQUAL(bp_secp_recover(h, bad, addr), -1);
	memcpy(bad, sig, 65);
	memset(bad, 0xff, 32);
	CU_ASSERT_EQUAL(bp_secp_recover(h, bad, addr), -1);
	memcpy(bad, sig, 65);
	memset(bad + 32, 0xff, 32);
	CU_ASSERT_EQUAL(bp_secp_recover(h, bad, addr), -1);
	/* The all-zero signature, the dummy of ERC-4337 estimations aside. */
	memset(bad, 0, 65);
	CU_ASSERT_EQUAL(bp_secp_recover(h, bad, addr), -1);
}

/* Many keys and hashes: sign then recover gives the key's address, and s is low. */
static void
test_round_trip(void)
{
	static const uint8_t half[32] = {
		0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0x5d, 0x57, 0x6e, 0x73, 0x57, 0xa4, 0x50, 0x1d,
		0xdf, 0xe9, 0x2f, 0x46, 0x68, 0x1b, 0x20, 0xa0,
	};
	int i;

	for (i = 0; i < 64; i++) {
		uint8_t k[32], h[32], sig[65], a[20], b[20];

		bp_keccak256(&i, sizeof(i), k);
		bp_keccak256(k, sizeof(k), h);
		CU_ASSERT_FATAL(bp_secp_priv_to_addr(k, a) == 0);
		CU_ASSERT_EQUAL(bp_secp_sign(k, h, sig), 0);
		CU_ASSERT(memcmp(sig + 32, half, 32) <= 0);
		CU_ASSERT(sig[64] <= 1);
		CU_ASSERT_EQUAL(bp_secp_recover(h, sig, b), 0);
		CU_ASSERT(memcmp(a, b, 20) == 0);
		/* The context survives a cleanup in the middle. */
		if (i == 32)
			bp_secp_cleanup();
	}
}

BP_UNIT_SUITE(evm_secp, setup, teardown,
	{ "anvil key 0 to address", test_key_to_address },
	{ "invalid private keys", test_bad_keys },
	{ "sign a hash (ethers vector)", test_sign_vector },
	{ "EIP-191 personal messages (ethers vectors)", test_personal_vectors },
	{ "recover refuses hostile signatures", test_recover_hostile },
	{ "sign and recover round trip", test_round_trip })
